"""memstream sweep on a local Ray: the results equal the same runs made one by one, and a worker
killed mid-run is retried and resumes its run, so the sweep's results do not change."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.sim import start_run
from memstream.sweep import load_spec, run_sweep
from memstream.sweep.spec import config_of, run_name
from memstream.sweep.study import CRASH_ONCE, aggregate, interval, measure

ray = pytest.importorskip("ray", reason="Ray is the sweep's engine (pip install 'memstream[ray]')")

SPEC = {"base": {"agents": 4, "hours": 1.5, "embedder": "hash"},
        "grid": {"seed": [0, 1], "ablate": [[], ["reflection"]]},
        "measures": [{"diffusion": {"fact": "Valentine's Day party"}}, {"network": {}},
                     {"attendance": {"place": "Hobbs Cafe", "from": "2023-02-13T06:30:00-08:00",
                                     "to": "2023-02-13T07:30:00-08:00"}}]}


TWIN = run_name({"seed": 1, "ablate": ["reflection"]})


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "spec.json"
    path.write_text(json.dumps(SPEC))
    return path


@pytest.fixture(scope="module")
def swept(spec_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("sweep") / "s"
    os.environ[CRASH_ONCE] = f"{TWIN}@3"  # that run's worker is killed 3 s in, once
    try:
        summary = run_sweep(load_spec(spec_file), out, cpus=2, progress=False)
    finally:
        del os.environ[CRASH_ONCE]
        ray.shutdown()
    return out, summary


@pytest.mark.slow
def test_a_sweep_equals_its_runs_made_one_by_one(swept: tuple[Path, dict], spec_file: Path, tmp_path: Path) -> None:
    out, summary = swept
    spec = load_spec(spec_file)
    assert not summary["failed"] and [r["run"].rsplit("-", 1)[0] for r in summary["runs"]] == [
        "seed=0,ablate=none", "seed=0,ablate=reflection", "seed=1,ablate=none", "seed=1,ablate=reflection"]
    for r in summary["runs"][:2]:  # made again here, in this process, without Ray
        config, whispers = config_of(spec, r["params"])
        start_run(config, tmp_path / r["run"], progress=False, whispers=whispers)
        assert measure(tmp_path / r["run"], spec) == r["measures"]
        assert (tmp_path / r["run"] / "events.jsonl").read_text() == (out / "runs" / r["run"] / "events.jsonl"
                                                                      ).read_text()
    cells = json.loads((out / "results.json").read_text())
    assert [c["params"] for c in cells] == [{"ablate": []}, {"ablate": ["reflection"]}]
    assert cells == aggregate(spec, summary["runs"]) and all(len(c["runs"]) == 2 for c in cells)


@pytest.mark.slow
def test_a_killed_worker_is_retried_and_its_run_resumed(swept: tuple[Path, dict], spec_file: Path,
                                                        tmp_path: Path) -> None:
    out, summary = swept
    assert (out / "runs" / f".{TWIN}.crashed").exists()  # the worker was killed once
    twin = next(r for r in summary["runs"] if r["run"] == TWIN)
    spec = load_spec(spec_file)
    config, whispers = config_of(spec, twin["params"])
    start_run(config, tmp_path / "never-killed", progress=False, whispers=whispers)  # the same run, uninterrupted
    assert measure(tmp_path / "never-killed", spec) == twin["measures"]
    assert (out / "runs" / twin["run"] / "events.jsonl").read_text() == (
        tmp_path / "never-killed" / "events.jsonl").read_text()


@pytest.mark.slow
def test_resume_skips_finished_runs_and_a_plot_draws_the_cells(swept: tuple[Path, dict], spec_file: Path,
                                                                tmp_path: Path, capsys) -> None:
    out, summary = swept
    before = {p: (p / "metrics.json").stat().st_mtime for p in (out / "runs").iterdir() if p.is_dir()}
    try:
        assert main(["sweep", str(spec_file), "--out", str(out), "--resume", "--cpus", "2"]) == 0
    finally:
        ray.shutdown()
    assert {p: (p / "metrics.json").stat().st_mtime for p in before} == before  # nothing was run again
    assert json.loads((out / "results.json").read_text()) == summary["cells"]
    assert main(["plot", "sweep", str(out), "-o", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").stat().st_size > 5000
    capsys.readouterr()
    assert main(["sweep", str(spec_file), "--out", str(out)]) == 2  # not over a sweep without --resume
    assert "holds a sweep already" in capsys.readouterr().err


def test_the_interval_is_students() -> None:
    r = interval([1.0, 2.0, 3.0])
    assert r["mean"] == 2 and r["std"] == 1 and r["ci95"] == pytest.approx([2 - 4.303 / 3**0.5, 2 + 4.303 / 3**0.5],
                                                                            abs=1e-5)
    assert interval([5.0])["ci95"] == [5.0, 5.0]


@pytest.mark.parametrize(("spec", "problem"), [
    ({"base": {"agentz": 3}}, "unknown run option 'agentz'"),
    ({"grid": {"seed": []}}, "has no values"),
    ({"measures": [{"diffusion": {}}]}, "fact required"),
    ({"measures": [{"vibes": {}}]}, "a measure is one of"),
    ({"grid": {"ablate": [["memory"]]}}, "unknown ablation 'memory'"),
    ({"grid": {"hours": [-1]}}, "bad setting"),
    ({"grid": {"seed": [1, 2, 1]}}, "repeats the value 1"),
    ({"grid": {"ablate": [["reflection", "planning"], ["planning", "reflection"]]}}, "are the same run"),
    ({"grid": {"seed": list(range(1000)), "hours": [1, 2]}}, "makes 2,000 runs (1000 seed x 2 hours), over the limit "
                                                              "of 1,000"),
])
def test_a_bad_spec_is_one_line_and_runs_nothing(tmp_path: Path, capsys, spec: dict, problem: str) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert main(["sweep", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()



def test_the_grid_size_is_checked_before_any_run_is_made(tmp_path: Path, capsys) -> None:
    """A billion-run grid is refused at once: its size is a product of lengths, nothing is built."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"grid": {"seed": list(range(1000)), "hours": list(range(1, 1001)),
                                         "agents": list(range(1, 1001))}}))
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--max-runs", "5"]) == 2
    assert "1,000,000,000 runs" in capsys.readouterr().err and not (tmp_path / "o").exists()
    path.write_text(json.dumps({"grid": {"seed": [0, 1, 2]}}))
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--max-runs", "2"]) == 2
    assert "--max-runs" in capsys.readouterr().err


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["seed", "ablate", "weights", "town", "llm"]), st.one_of(
    st.integers(), st.text(max_size=6), st.lists(st.text(max_size=4), max_size=2)), max_size=3), max_size=12))
def test_run_folders_are_unique_and_stable_for_distinct_settings(settings_: list[dict]) -> None:
    distinct = {json.dumps(p, sort_keys=True): p for p in settings_}
    names = [run_name(p) for p in distinct.values()]
    assert len(set(names)) == len(names)  # "a b" and "a_b" read alike; their hashes differ
    assert names == [run_name(json.loads(json.dumps(p))) for p in distinct.values()]  # the same settings, the same folder
    assert [n.rsplit("-", 1)[1] for n in names] == [run_name(json.loads(k)).rsplit("-", 1)[1] for k in distinct]
    assert all(len(n) <= 100 and "/" not in n and n not in (".", "..") for n in names)


def _holders(folder: Path) -> set[int]:
    """Processes with a file open under ``folder`` (a sweep's workers hold their run's stream)."""
    found = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if any(str(os.readlink(fd)).startswith(str(folder)) for fd in fd_dir.iterdir()):
                found.add(int(fd_dir.parent.name))
        except OSError:  # the process ended, or is not ours to read
            continue
    return found


def _descendants(pid: int) -> set[int]:
    children: dict[int, set[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), set()).add(int(stat.parent.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            out.add(child)
            todo.append(child)
    return out


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_sweeps_workers_end_with_its_driver(tmp_path: Path, sig: signal.Signals) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"base": {"agents": 2, "hours": 500, "embedder": "hash"}, "grid": {"seed": [0, 1]}}))
    out = tmp_path / "sweep"
    driver = subprocess.Popen([sys.executable, "-m", "memstream.cli", "sweep", str(spec), "--out", str(out),
                               "--cpus", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not _holders(out) and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.5)
        workers = _holders(out)
        assert workers, "no worker started a run"
        family = _descendants(driver.pid) if sig == signal.SIGTERM else set()
        driver.send_signal(sig)
        driver.wait(timeout=60)
        deadline = time.monotonic() + 10  # measured: 0.6-3 s (Ray's own head processes take ~60 s after a kill -9)
        while _alive(workers | family) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _alive(workers | family), f"left behind: {_alive(workers | family)}"
        assert not _holders(out)
    finally:
        if driver.poll() is None:
            driver.kill()
