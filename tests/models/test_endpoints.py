"""Endpoints that fail: bounded attempts, Retry-After, the circuit breaker, every request counted,
and any response body read without a traceback (a property over generated bodies)."""

from __future__ import annotations

import contextlib
import json
import math
import time
from email.utils import formatdate
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.errors import CallsFailedError, EndpointFailingError, MemstreamError
from memstream.models.endpoint import MAX_WAIT_S, retry_after_s
from memstream.models.openai_backend import MAX_TOKENS, OpenAIChat
from memstream.models.request import Request, answer_all
from memstream.stream import rate_importance
from memstream.stream.prompts import ROUND_SIZE
from memstream.testing import ScriptedServer

ASK = [{"role": "user", "content": "hi"}]


def _chat(server: ScriptedServer, **settings_: object) -> OpenAIChat:
    return OpenAIChat("m", base_url=server.url, api_key="k", backoff_s=0.01, **settings_)  # type: ignore[arg-type]


def test_each_call_is_sent_at_most_its_attempts_and_every_request_is_counted() -> None:
    with ScriptedServer([(503, "down")] * 100) as server:
        chat = _chat(server, attempts=3, breaker=1000)
        requests = [Request("t", [{"role": "user", "content": f"q{i}"}], str) for i in range(4)]
        assert answer_all(chat, requests) == [None] * 4  # failed, not asked again one by one
        assert len(server.chat_requests) == 12
        usage = chat.usage.by_purpose["t"]
        assert (usage.requests, usage.received, usage.failed) == (12, 0, 4)
        assert chat.usage.totals() == {"requests_sent": 12, "answers_received": 0, "answers_lost": 4}


def test_a_partial_batch_keeps_its_answers() -> None:
    with ScriptedServer([(200, "yes"), (400, "bad request")]) as server:
        chat = _chat(server, concurrency=1, attempts=2)
        with pytest.raises(CallsFailedError) as failed:
            chat.complete_many([("t", ASK), ("t", [{"role": "user", "content": "again"}])])
        assert sorted(map(str, failed.value.texts)) == ["None", "yes"]  # sent in prompt order
        assert chat.usage.by_purpose["t"].received == 1 and chat.usage.by_purpose["t"].requests == 2


@pytest.mark.slow
@pytest.mark.parametrize("header", [{"Retry-After": "0.6"}, {"retry-after-ms": "600"}])
def test_retry_after_is_honoured(header: dict[str, str]) -> None:
    with ScriptedServer([(429, "slow down", header), (200, "fine")]) as server:
        chat = _chat(server)
        started = time.perf_counter()
        assert chat.complete(ASK) == "fine"
        assert time.perf_counter() - started >= 0.55
        assert chat.usage.by_purpose["other"].requests == 2


def test_a_server_asking_for_a_long_wait_fails_the_request_at_once() -> None:
    with ScriptedServer([(503, "later", {"Retry-After": str(int(MAX_WAIT_S) * 10)})]) as server:
        chat = _chat(server)
        with pytest.raises(CallsFailedError):
            chat.complete(ASK)
        assert len(server.chat_requests) == 1


@given(seconds=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6)),
       form=st.sampled_from(["seconds", "ms", "date", "garbage"]))
def test_retry_after_reads_any_header_as_a_wait_or_none(seconds: float, form: str) -> None:
    now = 1_700_000_000.0
    if form == "date":
        headers = {"retry-after": formatdate(now + seconds, usegmt=True) if abs(seconds) < 1e9 else "x"}
    elif form == "garbage":
        headers = {"retry-after": f"soon {seconds}"}
    else:
        headers = {"retry-after-ms" if form == "ms" else "retry-after": str(seconds)}
    wait = retry_after_s(SimpleNamespace(response=SimpleNamespace(headers=headers)), now=now)  # type: ignore[arg-type]
    assert wait is None or (math.isfinite(wait) and wait >= 0)


def test_the_breaker_opens_after_failures_in_a_row_and_then_sends_nothing() -> None:
    with ScriptedServer([(503, "down")] * 100) as server:
        chat = _chat(server, attempts=1, breaker=3, concurrency=1)
        with pytest.raises(EndpointFailingError, match="is failing: 3 requests in a row"):
            rate_importance(chat, [f"Ann met {i}" for i in range(3 * ROUND_SIZE)])  # a library call: one clear error
        sent = len(server.chat_requests)
        assert sent == 3 and chat.failing
        with pytest.raises(EndpointFailingError):
            chat.complete(ASK)
        assert len(server.chat_requests) == sent
        assert chat.usage.totals()["requests_sent"] == sent


@pytest.mark.slow
def test_a_success_closes_the_run_of_failures() -> None:
    with ScriptedServer([(503, "x"), (503, "x"), (200, "ok"), (503, "x"), (503, "x"), (200, "ok")]) as server:
        chat = _chat(server, attempts=1, breaker=3, concurrency=1)
        for _ in range(6):
            with contextlib.suppress(CallsFailedError):
                chat.complete(ASK)
        assert chat.failing is None


def test_a_command_against_a_failing_endpoint_is_one_line_and_writes_nothing(tmp_path: Path, capsys,
                                                                            monkeypatch) -> None:
    with ScriptedServer([(503, "down")] * 100) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("MEMSTREAM_ATTEMPTS", "1")
        monkeypatch.setenv("MEMSTREAM_BREAKER", "1")
        code = main(["add", str(tmp_path / "s.db"), "--agent", "ann", "--text", "Ann met Bob", "--llm", "openai:m",
                     "--embedder", "hash:32", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is failing" in err, err
    assert not (tmp_path / "s.db").exists()


@pytest.mark.slow
def test_a_run_against_an_endpoint_that_never_answers_stops_within_a_bound(tmp_path: Path, capsys,
                                                                          monkeypatch) -> None:
    """Every request times out: the breaker opens, the run checkpoints and stops with one line
    naming the problem and the resume command (exit 2), and metrics.json counts every request."""
    with ScriptedServer([(0, "3")] * 1000) as server:
        for name, value in (("OPENAI_BASE_URL", server.url), ("MEMSTREAM_TIMEOUT", "0.2"),
                            ("MEMSTREAM_ATTEMPTS", "2"), ("MEMSTREAM_BREAKER", "4")):
            monkeypatch.setenv(name, value)
        out = tmp_path / "run"
        started = time.perf_counter()
        code = main(["run", "--agents", "2", "--hours", "2", "--llm", "openai:m", "--embedder", "hash:32",
                     "--out", str(out)])
        wall = time.perf_counter() - started
        sent = len(server.chat_requests)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "is failing" in err and f"memstream run --resume {out}" in err
    assert wall < 60  # attempts x (timeout + backoff) per wave of requests, far below the 2 simulated hours
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["stopped"] == "endpoint-failing" and metrics["requests_sent"] == sent > 0
    assert metrics["answers_received"] == 0 and metrics["answers_lost"] > 0
    assert (out / "checkpoint" / "LATEST").is_file()


# -- any body the server sends ---------------------------------------------------------------

TOKENS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                   st.text(max_size=8), st.sampled_from(["12", " 7 ", "-3", "1e3", "9" * 30]),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
MESSAGE = st.one_of(SCALARS, st.fixed_dictionaries({}, optional={"role": SCALARS, "content": st.one_of(
    SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(st.text(max_size=4), SCALARS, max_size=2))}))
CHOICE = st.one_of(SCALARS, st.fixed_dictionaries({}, optional={"message": MESSAGE, "text": SCALARS,
                                                               "index": SCALARS, "finish_reason": SCALARS}))
BODY = st.one_of(
    st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                         max_size=3), max_leaves=6),
    st.fixed_dictionaries({}, optional={
        "id": SCALARS, "object": SCALARS, "model": SCALARS, "created": SCALARS,
        "choices": st.one_of(SCALARS, st.lists(CHOICE, max_size=3), CHOICE,
                             st.dictionaries(st.sampled_from(["0", "1", "message"]), CHOICE, max_size=2)),
        "usage": st.one_of(SCALARS, st.fixed_dictionaries({}, optional={
            "prompt_tokens": TOKENS, "completion_tokens": TOKENS, "total_tokens": TOKENS}))}))


@pytest.fixture(scope="module")
def server():
    with ScriptedServer([]) as s:
        yield s


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=BODY)
def test_any_response_body_is_an_answer_or_a_counted_failure(server: ScriptedServer, body: object) -> None:
    server.script[:] = [(200, body)]  # a text body is an ordinary answer with that text
    chat = _chat(server, attempts=1, breaker=1000)
    try:
        texts = chat.complete_many([("t", ASK)])
    except MemstreamError:
        texts = None
    usage = chat.usage.by_purpose["t"]
    assert usage.requests == 1
    if texts is not None:
        assert isinstance(texts[0], str) and usage.received == 1
        assert 0 <= usage.prompt_tokens <= MAX_TOKENS and 0 <= usage.completion_tokens <= MAX_TOKENS
