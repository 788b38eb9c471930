"""Exact resume: a run stopped in any way, at any point, and resumed, equals the uninterrupted run
(the same event log byte for byte, the same memories and access log row for row)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.models import OfflineChatModel
from memstream.models.base import Completion
from memstream.sim import RunConfig, resume_run, start_run
from tests.helpers import contents

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
HOURS = 2.5


def config(**kw) -> RunConfig:
    return RunConfig(**({"agents": 8, "start": START, "hours": HOURS, "embedder": "hash", "seed": 3} | kw))



@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("whole") / "run"
    result = start_run(config(), out, progress=False)
    return out, result.metrics


def resume_until_finished(out: Path, **kw) -> int:
    for tries in range(1, 200):
        if resume_run(out, progress=False, **kw).stopped == "finished":
            return tries
    raise AssertionError("the run never finished")


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.04, 0.3, 0.7])
def test_a_small_budget_makes_progress_and_resumes_exactly(tmp_path: Path, whole, share: float) -> None:
    """--max-calls is a budget per invocation; each stop checkpoints where it stopped."""
    out = tmp_path / "part"
    first = start_run(config(max_calls=max(1, int(whole[1]["model_calls"] * share))), out, progress=False)
    assert first.stopped == "max-calls"
    tries = resume_until_finished(out)
    assert tries >= 1 and contents(out) == contents(whole[0])


@pytest.mark.slow
def test_a_longer_run_extends_a_finished_one_exactly(tmp_path: Path, whole) -> None:
    out = tmp_path / "short"
    start_run(config(hours=1), out, progress=False)
    assert resume_run(out, hours=HOURS, progress=False).stopped == "finished"
    assert contents(out) == contents(whole[0])


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.1, 0.45, 0.8])
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_a_signal_stops_at_the_end_of_the_step_and_resumes_exactly(tmp_path: Path, whole, monkeypatch,
                                                                   how: str, share: float) -> None:
    calls, at = {"n": 0}, int(whole[1]["model_calls"] * share)
    original = OfflineChatModel._generate

    def signalled(self, messages, purpose, params) -> Completion:
        calls["n"] += 1
        if calls["n"] == at:  # mid-step, in the middle of whatever the agents are doing (talking too)
            os.kill(os.getpid(), getattr(signal, how))
        return original(self, messages, purpose, params)

    monkeypatch.setattr(OfflineChatModel, "_generate", signalled)
    out = tmp_path / "run"
    stopped = start_run(config(), out, progress=False)
    monkeypatch.setattr(OfflineChatModel, "_generate", original)
    assert stopped.stopped == {"SIGTERM": "terminated", "SIGINT": "interrupted"}[how]
    assert stopped.sim_time < START + timedelta(hours=HOURS)
    assert resume_until_finished(out) == 1
    assert contents(out) == contents(whole[0])


@pytest.mark.slow
def test_a_conversation_under_way_survives_a_checkpoint(tmp_path: Path, whole) -> None:
    """Stop at every step where someone is mid-conversation, for a stretch; each resumes exactly."""
    import json

    events = [json.loads(line) for line in (whole[0] / "events.jsonl").read_text().splitlines()]
    talking = [e for e in events if e["action"].startswith("says to")]
    assert talking, "the reference run has no conversation to stop in"
    out = tmp_path / "run"
    stop_at = datetime.fromisoformat(talking[0]["time"])
    start_run(config(hours=(stop_at - START).total_seconds() / 3600), out, progress=False)
    resume_run(out, hours=HOURS, progress=False)
    assert contents(out) == contents(whole[0])


@pytest.mark.slow
def test_kill_9_after_the_first_checkpoint_resumes_exactly(tmp_path: Path, whole) -> None:
    """A real kill -9 of `memstream run`, after its first checkpoint and before the end."""
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "memstream.cli", "run", "--agents", "8", "--hours", str(HOURS), "--seed", "3",
            "--embedder", "hash", "--start", START.isoformat(), "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    latest = out / "checkpoint" / "LATEST"
    deadline = time.monotonic() + 120
    while not latest.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.returncode == 0:
        pytest.skip("the run finished before it could be killed")
    assert main(["run", "--resume", str(out)]) == 0
    assert contents(out) == contents(whole[0])


def test_a_damaged_checkpoint_is_one_line_and_changes_nothing(tmp_path: Path, capsys, whole) -> None:
    out = tmp_path / "run"
    start_run(config(hours=1.2, max_calls=60), out, progress=False)
    before = contents(out)
    latest = out / "checkpoint" / "LATEST"
    name = latest.read_text()
    for damage in ("pointer", "state"):
        if damage == "pointer":
            latest.write_text("t999")
        else:
            latest.write_text(name)
            state = out / "checkpoint" / name / "state.json"
            state.write_text(state.read_text()[:50])
        assert main(["run", "--resume", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "cannot be resumed" in err
        assert contents(out) == before
