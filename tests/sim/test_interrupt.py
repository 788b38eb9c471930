"""A stop does not wait for a slow model, and pays for no answer twice (issue: real models, round
three, machinery): each answer is kept in the call cache as it arrives; Ctrl-C or SIGTERM with a
call in flight abandons it at once, and the run resumes from its last checkpoint with the answers
it had."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

import memstream.sim  # noqa: F401 - registers every stage's prompts
from memstream.cli import main
from memstream.errors import CallInterrupted
from memstream.models import REQUESTS_IN_FLIGHT, CachedChatModel
from memstream.models.openai_backend import OpenAIChat
from memstream.sim.run.stop import Stop
from memstream.testing import ScriptedServer

ASK = [{"role": "user", "content": "rate it"}]


def signal_when_asked(server: ScriptedServer, sig: int, requests: int, then: float = 0.1) -> list[float]:
    """Send ``sig`` to this process ``then`` seconds after the server has been asked ``requests``
    questions (a request in flight then, as every answer takes a while); the list gets the time sent."""
    sent: list[float] = []

    def watch() -> None:
        while len(server.chat_requests) < requests:
            time.sleep(0.02)
        time.sleep(then)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), sig)

    threading.Thread(target=watch, daemon=True).start()
    return sent


@pytest.mark.slow
def test_each_answer_is_in_the_cache_as_it_arrives_and_a_signal_abandons_the_call_in_flight(tmp_path) -> None:
    with ScriptedServer([(200, "7"), (0, "5")]) as server:  # the second answer takes 5 s
        model = CachedChatModel(OpenAIChat("m", base_url=server.url, api_key="k", timeout=30), tmp_path / "calls.db")
        with Stop() as stop, pytest.raises(CallInterrupted):
            sent = signal_when_asked(server, signal.SIGTERM, 2, then=0.5)  # the quick answer is back by then
            model.complete_many([("importance", ASK), ("importance", ASK + [{"role": "user", "content": "b"}])])
        assert time.perf_counter() - sent[0] < 3  # it did not wait out the 5 s answer
        assert stop.why == "terminated"
        assert len(model) == 1  # the answer that had arrived was kept at once
        assert not REQUESTS_IN_FLIGHT.waiting
        model.close()


def test_a_signal_with_nothing_in_flight_only_asks_the_step_to_finish() -> None:
    with Stop() as stop:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    assert stop.why == "interrupted"


@pytest.mark.slow
def test_a_run_stopped_mid_call_stops_within_seconds_and_resumes_with_what_it_had(tmp_path, monkeypatch) -> None:
    out = tmp_path / "run"
    with ScriptedServer([(200, "5")] * 5000, delay=0.4) as server:  # a slow model: every answer takes 0.4 s
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        sent = signal_when_asked(server, signal.SIGTERM, 6)
        code = main(["run", "--llm", "openai:m", "--agents", "2", "--hours", "0.25", "--out", str(out),
                     "--timeout", "60"])
        stopped_in = time.perf_counter() - sent[0]
        asked_before = len(server.chat_requests)
        metrics = json.loads((out / "metrics.json").read_text())
        assert code == 143 and metrics["stopped"] == "terminated" and stopped_in < 10
        assert metrics["stopped_mid_step"]["resumes_from"] is not None
        kept = _cached(out)
        assert 0 < kept <= asked_before
        server.delay = 0.0
        assert main(["run", "--resume", str(out)]) == 0
    assert json.loads((out / "metrics.json").read_text())["stopped"] == "finished"
    assert _cached(out) >= kept


def _cached(run: Path) -> int:
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(run / "calls.db")) as db:
        return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
