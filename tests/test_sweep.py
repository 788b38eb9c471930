"""memstream sweep on a local Ray: the results equal the same runs made one by one, and a worker
killed mid-run is retried and resumes its run, so the sweep's results do not change."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.sim import start_run
from memstream.sweep import load_spec, run_sweep
from memstream.sweep.spec import config_of
from memstream.sweep.study import CRASH_ONCE, aggregate, interval, measure

ray = pytest.importorskip("ray", reason="Ray is the sweep's engine (pip install 'memstream[ray]')")

SPEC = {"base": {"agents": 4, "hours": 1.5, "embedder": "hash"},
        "grid": {"seed": [0, 1], "ablate": [[], ["reflection"]]},
        "measures": [{"diffusion": {"fact": "Valentine's Day party"}}, {"network": {}},
                     {"attendance": {"place": "Hobbs Cafe", "from": "2023-02-13T06:30:00-08:00",
                                     "to": "2023-02-13T07:30:00-08:00"}}]}


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "spec.json"
    path.write_text(json.dumps(SPEC))
    return path


@pytest.fixture(scope="module")
def swept(spec_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("sweep") / "s"
    os.environ[CRASH_ONCE] = "seed=1,ablate=reflection@3"  # that run's worker is killed 3 s in, once
    try:
        summary = run_sweep(load_spec(spec_file), out, cpus=2, progress=False)
    finally:
        del os.environ[CRASH_ONCE]
        ray.shutdown()
    return out, summary


def test_a_sweep_equals_its_runs_made_one_by_one(swept: tuple[Path, dict], spec_file: Path, tmp_path: Path) -> None:
    out, summary = swept
    spec = load_spec(spec_file)
    assert not summary["failed"] and [r["run"] for r in summary["runs"]] == [
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


def test_a_killed_worker_is_retried_and_its_run_resumed(swept: tuple[Path, dict]) -> None:
    out, summary = swept
    assert (out / "runs" / ".seed=1,ablate=reflection.crashed").exists()  # the worker was killed once
    twin = next(r for r in summary["runs"] if r["run"] == "seed=1,ablate=reflection")
    first = next(r for r in summary["runs"] if r["run"] == "seed=0,ablate=reflection")
    assert twin["measures"] == first["measures"]  # seeds do not change the bundled residents: the same run
    assert (out / "runs" / twin["run"] / "events.jsonl").read_text() == (
        out / "runs" / first["run"] / "events.jsonl").read_text()


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
])
def test_a_bad_spec_is_one_line_and_runs_nothing(tmp_path: Path, capsys, spec: dict, problem: str) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert main(["sweep", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()

