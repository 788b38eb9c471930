"""The run directory's owner: the format's version, one writer at a time (two processes racing for a
directory: nothing lost, nothing doubled), whispers kept and heard by a running run, options checked
before anything is written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.errors import MemstreamError
from memstream.sim import RunConfig, RunDir, Whisper, resume_run, start_run
from memstream.sim.run.dirlock import locked
from memstream.sim.run.layout import LOCK
from memstream.sim.run.rundir import check_new
from memstream.timeutil import from_epoch
from tests.helpers import contents

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
CLI = [sys.executable, "-m", "memstream.cli"]
RUN = ["--agents", "8", "--seed", "3", "--embedder", "hash", "--start", START.isoformat()]


def config(**kw) -> RunConfig:
    return RunConfig(**({"agents": 8, "start": START, "hours": 0.5, "embedder": "hash", "seed": 3} | kw))



def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A small finished run, copied by the tests that change one."""
    out = tmp_path_factory.mktemp("made") / "run"
    start_run(config(), out, progress=False)
    return out


def copy(made: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(made, out)
    return out


def wait_for(check, proc: subprocess.Popen, what: str, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while not check():
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} in {limit_s} s"
        time.sleep(0.01)


@contextmanager
def paused(proc: subprocess.Popen, run: Path) -> Iterator[None]:
    """``proc`` stopped (SIGSTOP) while the block runs: it keeps its run's lock and goes no further. It is
    stopped outside the short section whispers are read in (taken here first), so a whisper can be sent."""
    with locked(run):
        proc.send_signal(signal.SIGSTOP)
        while Path(f"/proc/{proc.pid}/stat").read_text().split(")")[-1].split()[0] != "T":
            time.sleep(0.001)
    try:
        yield
    finally:
        proc.send_signal(signal.SIGCONT)


def running_clock(run: Path) -> datetime | None:
    """The step a running run has reached, as its lock file says (None before it says)."""
    try:
        _, _, note = (run / LOCK).read_text().strip().partition(" ")
        return from_epoch(float(note)).astimezone(TZ)
    except (OSError, ValueError):
        return None


# -- the format's version ----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize(("found", "said"), [("memstream-run", "older memstream"),
                                             ("memstream-run/1", "older memstream"),
                                             ("memstream-run/4", "newer memstream"),
                                             ("other-tool/2", "not a memstream run directory"),
                                             (None, "not a memstream run directory")])
def test_another_format_version_is_refused_in_one_line(made: Path, tmp_path: Path, capsys, found, said) -> None:
    out = copy(made, tmp_path)
    settings_file = out / "config.json"
    data = json.loads(settings_file.read_text())
    data["format"] = found
    settings_file.write_text(json.dumps(data))
    before = files(out)
    for argv in (["replay", str(out)], ["run", "--resume", str(out)], ["measure", "network", str(out)],
                 ["whisper", str(out), "--agent", "x", "hi"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and "memstream-run/3" in err, err
    assert files(out) == before


def test_the_current_format_is_written_and_read(made: Path) -> None:
    assert json.loads((made / "config.json").read_text())["format"] == "memstream-run/3"
    with RunDir.open(made) as run:
        assert run.config.hours == 0.5 and len(run.agents) == 8 and run.stream.count() > 0


# -- one writer --------------------------------------------------------------------------------------

def test_a_second_writer_is_refused_naming_the_holder(made: Path, tmp_path: Path) -> None:
    out = copy(made, tmp_path)
    with RunDir.open_writable(out):
        with pytest.raises(MemstreamError, match=rf"in use by a run writing it \(pid {os.getpid()}\)"):
            RunDir.open_writable(out)
        with pytest.raises(MemstreamError, match=rf"pid {os.getpid()}"):
            check_new(out)
        with RunDir.open(out) as reader:  # readers never need the lock
            assert reader.stream.count() > 0
    assert not (out / LOCK).exists()  # released, and gone
    RunDir.open_writable(out).close()


@pytest.mark.slow
def test_the_lock_goes_with_a_killed_holder(made: Path, tmp_path: Path) -> None:
    out = copy(made, tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from memstream.sim import RunDir; "
                               "RunDir.open_writable(sys.argv[1]); print('held', flush=True); time.sleep(600)",
                               str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(MemstreamError, match=rf"pid {holder.pid}"):
            RunDir.open_writable(out)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert (out / LOCK).exists()  # a kill -9 leaves the file, not the lock
    RunDir.open_writable(out).close()


@pytest.mark.slow
def test_two_resumes_of_one_run_at_once_one_refused_nothing_doubled(made: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    start_run(config(hours=2), whole, progress=False)
    out = copy(made, tmp_path)
    first = subprocess.Popen([*CLI, "run", "--resume", str(out), "--hours", "2"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    wait_for(lambda: running_clock(out) is not None, first, "lock")
    with paused(first, out):  # the second comes while the first holds the directory, however fast it runs
        second = subprocess.run([*CLI, "run", "--resume", str(out), "--hours", "2"], capture_output=True, text=True)
    assert first.wait() == 0, first.stderr.read()
    assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
    assert f"in use by a run writing it (pid {first.pid})" in second.stderr
    assert contents(out) == contents(whole)


@pytest.mark.slow
def test_two_new_runs_on_one_out_one_refused_nothing_mixed(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    start_run(config(hours=1), whole, progress=False)
    out = tmp_path / "shared"
    argv = [*CLI, "run", *RUN, "--hours", "1", "--out", str(out)]
    procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    codes = sorted(p.wait() for p in procs)
    errs = [p.stderr.read() for p in procs]
    assert codes == [0, 2], errs
    refused = next(e for p, e in zip(procs, errs, strict=True) if p.returncode == 2)
    assert refused.count("\n") == 1 and ("in use by a run writing it" in refused or "is not empty" in refused)
    assert contents(out) == contents(whole)


def test_a_fork_into_a_folder_in_use_is_refused(made: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "target"
    target.mkdir()
    with RunDir.create(target, config(), RunDir.open(made).town):
        assert main(["run", "--fork", str(made), "--out", str(target)]) == 2
        assert f"pid {os.getpid()}" in capsys.readouterr().err


# -- whispers ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_concurrent_whispers_are_all_kept_each_once(made: Path, tmp_path: Path) -> None:
    out = copy(made, tmp_path)
    agent = RunDir.open(out).agents[0]
    n = 6
    procs = [subprocess.Popen([*CLI, "whisper", str(out), "--agent", agent, f"whisper number {i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(n)]
    results = [(p.wait(), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    whispers = RunDir.open(out).mailbox.whispers()
    assert sorted(w.id for w in whispers) == list(range(1, n + 1))
    assert sorted(w.text for w in whispers) == sorted(f"whisper number {i}" for i in range(n))
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_a_running_run_hears_a_whisper_at_its_time_as_if_it_had_it_from_the_start(tmp_path: Path,
                                                                                  capsys) -> None:
    out = tmp_path / "live"
    proc = subprocess.Popen([*CLI, "run", *RUN, "--hours", "3", "--out", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    wait_for(lambda: running_clock(out) is not None and running_clock(out) > START + timedelta(minutes=5), proc,
             "clock")
    with paused(proc, out):
        reached = running_clock(out)
        assert main(["whisper", str(out), "--agent", "Isabella Rodriguez", "I am planning a party", "--at",
                     reached.isoformat()]) == 2
        assert "is running" in capsys.readouterr().err
        at = reached + timedelta(minutes=30)
        assert main(["whisper", str(out), "--agent", "Isabella Rodriguez", "I am planning a party", "--at",
                     at.isoformat()]) == 0
        assert f"running run (pid {proc.pid})" in capsys.readouterr().out
    assert proc.wait() == 0, proc.stderr.read()
    heard = [e for e in RunDir.open(out).records.events() if e["action"].startswith("hears a whisper")]
    assert [(e["agent"], e["time"]) for e in heard] == [("Isabella Rodriguez", at.isoformat())]
    told = tmp_path / "told"
    start_run(config(hours=3), told, progress=False,
              whispers=[Whisper(id=1, agent="Isabella Rodriguez", text="I am planning a party", at=at)])
    assert contents(out) == contents(told)


def test_a_whisper_at_or_before_what_a_stopped_run_simulated_is_refused(made: Path, tmp_path: Path) -> None:
    out = copy(made, tmp_path)
    run = RunDir.open(out)
    stands, step = run.stands_at(), timedelta(seconds=run.config.step_seconds)
    for late in (stands - timedelta(seconds=1), stands, stands + step - timedelta(seconds=1)):
        with pytest.raises(MemstreamError, match="has simulated up to"):
            run.mailbox.add(run.agents[0], "too late", late)
    whisper, running = run.mailbox.add(run.agents[0], "just in time")
    assert whisper.at == stands + step and running is None


@pytest.mark.slow
def test_a_whisper_to_a_stopped_run_at_its_default_time_is_heard_as_if_it_had_it_from_the_start(
        made: Path, tmp_path: Path) -> None:
    """The default is the first step the run has not taken: a resumed run hears it there, as a run given it
    from the start does (it was heard one step late when the default was the checkpoint's own time)."""
    out = copy(made, tmp_path)
    run = RunDir.open(out)
    whisper, _ = run.mailbox.add("Isabella Rodriguez", "I am planning a party")
    resume_run(out, hours=1, progress=False)
    told = tmp_path / "told"
    start_run(config(hours=1), told, progress=False, whispers=[whisper])
    heard = [e for e in RunDir.open(out).records.events() if e["action"].startswith("hears a whisper")]
    assert [e["time"] for e in heard] == [whisper.at.isoformat()]
    assert contents(out) == contents(told)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(offset_s=st.integers(-10 * 3600, 10 * 3600))
def test_generated_whisper_times_are_kept_or_refused_and_nothing_else(made: Path, tmp_path_factory,
                                                                      offset_s: int) -> None:
    out = copy(made, tmp_path_factory.mktemp("w"))
    run = RunDir.open(out)
    at = run.stands_at() + timedelta(seconds=offset_s)
    before = files(out)
    if offset_s < run.config.step_seconds:  # the step at where it stands is simulated: its past
        with pytest.raises(MemstreamError):
            run.mailbox.add(run.agents[0], "hello", at)
        assert files(out) == before
    else:
        run.mailbox.add(run.agents[0], "hello", at)
        assert [(w.id, w.at) for w in RunDir.open(out).mailbox.whispers()] == [(1, at)]


# -- options checked before anything is written -----------------------------------------------------

@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(hours=st.one_of(st.sampled_from([float("nan"), float("inf"), -float("inf"), 0.0, -1.0, 1e308, 1e6,
                                        0.25, 0.4999]),
                       st.floats(allow_nan=True, allow_infinity=True).filter(lambda h: not 0.5 <= h <= 87_840)))
def test_resume_with_hours_that_cannot_be_is_refused_and_writes_nothing(made: Path, tmp_path_factory, capsys,
                                                                         hours: float) -> None:
    out = copy(made, tmp_path_factory.mktemp("h"))
    before = files(out)
    assert main(["run", "--resume", str(out), f"--hours={hours!r}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hours" in err, err
    assert files(out) == before
    assert RunDir.open(out).config.hours == 0.5  # still resumable as it was


def test_hours_that_would_shorten_a_run_name_the_fix(made: Path, tmp_path: Path, capsys) -> None:
    out = copy(made, tmp_path)
    assert main(["run", "--resume", str(out), "--hours", "0.25"]) == 2
    err = capsys.readouterr().err
    assert "before where it stands" in err and "at least 0.5" in err


def test_a_folder_holding_only_a_dead_runs_lock_file_takes_a_new_run(made: Path, tmp_path: Path) -> None:
    out = tmp_path / "new"
    out.mkdir()
    (out / LOCK).write_text("999999 1676296800.0\n")  # what a run killed before writing anything leaves
    check_new(out)
    with RunDir.create(out, config(), RunDir.open(made).town) as run:
        assert run.config.hours == 0.5
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "town.json", "whispers.json"]


def test_reflect_and_plan_refuse_a_run_s_stream_even_through_a_link(made: Path, tmp_path: Path, capsys) -> None:
    """What they would write into a run's stream would be lost when the run resumes from its checkpoint."""
    before = (made / "streams.db").read_bytes()
    link = tmp_path / "link.db"
    link.symlink_to(made / "streams.db")
    agent = json.loads((made / "town.json").read_text())["residents"][0]["name"]
    identity = tmp_path / "me.json"
    identity.write_text(json.dumps({"name": agent, "age": 30, "traits": ["kind"], "occupation": "baker",
                                    "workplace": "the bakery", "home": "home", "wake": "07:00", "sleep": "22:00"}))
    for argv in (["reflect", str(made / "streams.db"), "--agent", agent],
                 ["plan", str(made / "streams.db"), "--agent", agent, "--identity", str(identity), "--day",
                  "2023-02-14-08:00"],
                 ["add", str(link), "--agent", agent, "--text", "a note", "--importance", "3"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert "memstream: error:" in err[-1] and "is the stream of the run" in err[-1], err
    assert (made / "streams.db").read_bytes() == before


def test_a_checkpoint_with_a_damaged_agent_is_refused_in_one_line(made: Path, tmp_path: Path, capsys) -> None:
    out = copy(made, tmp_path)
    latest = out / "checkpoint" / (out / "checkpoint" / "LATEST").read_text().strip() / "state.json"
    state = json.loads(latest.read_text())
    del state["agents"][0]["location"]
    latest.write_text(json.dumps(state))
    config_before = (out / "config.json").read_bytes()
    assert main(["run", "--resume", str(out), "--hours", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is damaged (Body state has no location)" in err[0]
    assert (out / "config.json").read_bytes() == config_before


def test_a_whisper_after_a_live_runs_end_is_not_said_to_be_heard(made: Path, tmp_path: Path, monkeypatch) -> None:
    """A running run hears whispers up to its end; one after that is carried, and the answer says so."""
    import memstream.sim.run.mailbox as mailbox

    out = copy(made, tmp_path)
    run = RunDir.open(out)
    reached = run.config.start + timedelta(minutes=10)

    class Live:  # the lock's holder as a running run notes it: its pid and the step it has reached
        pid, note = 4242, repr(reached.timestamp())

    monkeypatch.setattr(mailbox, "live_holder", lambda path: Live())
    _, during = run.mailbox.add(run.agents[0], "in time", run.config.end)
    _, after = run.mailbox.add(run.agents[0], "too late for this run", run.config.end + timedelta(minutes=1))
    assert (during, after) == (4242, None)


def test_a_run_directory_of_the_format_before_is_read_and_becomes_the_current_when_written(made: Path,
                                                                                          tmp_path: Path) -> None:
    """Version 2 (checkpoints holding their states whole) is read as it is; a run that writes it makes it
    version 3, so an older memstream refuses it in one line rather than misread its new checkpoints."""
    out = copy(made, tmp_path)
    settings_file = out / "config.json"
    data = json.loads(settings_file.read_text())
    data["format"] = "memstream-run/2"
    settings_file.write_text(json.dumps(data))
    before = files(out)
    with RunDir.open(out) as run:  # read-only: read, nothing written
        assert run.config.format == "memstream-run/3" and run.stream.count() > 0
    assert files(out) == before
    assert main(["measure", "network", str(out)]) == 0
    assert main(["run", "--resume", str(out), "--hours", "0.6"]) == 0
    assert json.loads(settings_file.read_text())["format"] == "memstream-run/3"
