"""The structured-output form chosen by measurement, and the share of prompt tokens a server served
from its prefix cache (issue: real models round two)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memstream.sim  # noqa: F401 - registers every stage's prompts, schemas and bounds
from memstream.errors import CallsFailedError, MemstreamError
from memstream.models import Completion, Usage
from memstream.models.openai_backend import OpenAIChat, completion_of, prefix_cached
from memstream.models.probe import (
    PROBE_PURPOSE,
    SLOWDOWN_LIMIT,
    STRUCTURED_MODES,
    FormTrial,
    choose,
    probe,
    valid_answer,
)
from memstream.testing import ScriptedServer

GOOD = '{"colours": ["red", "orange", "yellow"]}'
REFUSAL = "Input should be 'text' or 'json_object'"  # what llama-cpp-python's server says to json_schema


class Refused(Exception):
    pass


def fake_ask(seconds: dict[str, float], *, refuse: tuple[str, ...] = (), answers: dict[str, str] | None = None):
    asked: list[str] = []

    def ask(mode: str) -> tuple[str, float]:
        asked.append(mode)
        if mode in refuse:
            raise Refused(mode)
        return (answers or {}).get(mode, GOOD), seconds[mode]

    return ask, asked


def test_a_server_that_constrains_for_free_gets_the_most_constraining_form() -> None:
    ask, asked = fake_ask({"json_schema": 0.5, "json_object": 0.5, "plain": 0.45})
    result = probe(ask, lambda e: isinstance(e, Refused))
    assert result.chosen == "json_schema"
    assert asked == ["plain", *STRUCTURED_MODES, *STRUCTURED_MODES]  # plain first, untimed: a warm prompt cache


def test_a_refused_form_steps_down_and_a_costly_one_loses_to_plain() -> None:
    # llama.cpp's measured shape: json_schema refused, json_object accepted at about half plain's speed
    ask, _ = fake_ask({"json_schema": 0, "json_object": 4.0, "plain": 1.9}, refuse=("json_schema",))
    result = probe(ask, lambda e: isinstance(e, Refused))
    assert result.trials["json_schema"].accepted is False
    assert result.trials["json_object"].accepted and result.trials["json_object"].valid_json
    assert result.chosen == "plain" and "json_object" in result.why


def test_a_form_answered_in_invalid_json_is_not_kept() -> None:
    ask, _ = fake_ask({"json_schema": 0.5, "json_object": 0.5, "plain": 0.5}, answers={"json_schema": "{oops"})
    assert probe(ask, lambda e: isinstance(e, Refused)).chosen == "json_object"


def test_each_form_counts_its_fastest_answer_and_valid_json_only_if_every_answer_was() -> None:
    times = iter([9.0, 1.0, 1.2, 1.0, 1.1, 1.0])  # json_schema slow once (a queue), then fast
    answers = iter([GOOD, GOOD, GOOD, GOOD, "{oops", GOOD])

    def ask(mode: str) -> tuple[str, float]:
        return (GOOD, 0.0) if mode == "plain" and not started else (next(answers), next(times))

    started = False

    def warm_then(mode: str) -> tuple[str, float]:
        nonlocal started
        if not started:
            started = True
            return GOOD, 5.0
        return ask(mode)

    result = probe(warm_then, lambda e: False)
    assert result.trials["json_schema"].seconds == 1.0
    assert result.trials["json_object"].valid_json is False and result.chosen == "json_schema"


def test_an_endpoint_failing_during_the_probe_leaves_the_step_down_behaviour() -> None:
    def ask(mode: str) -> tuple[str, float]:
        raise ConnectionError("refused")

    result = probe(ask, lambda e: False)
    assert result.chosen == "json_schema" and "could not finish" in result.why


@given(st.dictionaries(st.sampled_from(STRUCTURED_MODES),
                       st.builds(FormTrial, accepted=st.booleans(), valid_json=st.booleans(),
                                 seconds=st.none() | st.floats(0, 100))))
def test_the_choice_is_always_a_form_that_worked_and_never_much_slower_than_plain(trials) -> None:
    chosen, why = choose(trials)
    assert chosen in STRUCTURED_MODES and why
    if chosen != "plain":
        trial = trials[chosen]
        assert trial.accepted and trial.valid_json
        plain = trials.get("plain")
        if plain and plain.accepted and plain.seconds is not None and trial.seconds is not None:
            assert trial.seconds <= plain.seconds * SLOWDOWN_LIMIT + 0.25


@pytest.mark.parametrize("text,ok", [(GOOD, True), ('{"colours": [1]}', False), ("red, orange", False),
                                     ("[]", False), ('{"colours": []}', True)])
def test_the_probe_answer_is_read_strictly(text: str, ok: bool) -> None:
    assert valid_answer(text) is ok


def test_the_backend_probes_once_before_its_first_schema_request_and_reports_it(monkeypatch) -> None:
    monkeypatch.delenv("MEMSTREAM_STRUCTURED", raising=False)
    script = [(200, "7"), (200, GOOD), (500, REFUSAL), (200, GOOD), (200, GOOD), (200, GOOD), (200, GOOD),
              (200, "{}"), (200, "{}")]
    with ScriptedServer(script) as server:
        model = OpenAIChat("m", base_url=server.url, api_key="k")
        model.complete_many([("importance", [{"role": "user", "content": "rate"}])])  # no schema: no probe yet
        assert model.structured_probe is None
        model.complete_many([("reflection.questions", [{"role": "user", "content": "ask"}])] * 2)
    probes = [r for r in server.requests if r["max_tokens"] == 48]
    assert len(probes) == 6 and len(server.requests) == 9  # the probe ran once, before the first schema batch
    assert [r.get("response_format", {}).get("type") for r in probes] == [
        None, "json_schema", "json_object", None, "json_object", None]  # a refused form is not asked again
    report = model.structured_probe.as_dict()
    assert report["trials"]["json_schema"]["accepted"] is False and report["chosen"] in ("json_object", "plain")
    assert model.structured_mode == report["chosen"]
    probed = model.usage.by_purpose[PROBE_PURPOSE]  # the probe is no stage's call, but its requests were sent
    assert (probed.calls, probed.requests) == (0, 6) and model.usage.calls == 3
    assert model.usage.totals()["requests_sent"] == len(server.requests) == 9


def test_a_forced_form_sends_no_probe(monkeypatch) -> None:
    monkeypatch.setenv("MEMSTREAM_STRUCTURED", "plain")
    with ScriptedServer([(200, "7")]) as server:
        model = OpenAIChat("m", base_url=server.url, api_key="k")
        model.complete_many([("importance", [{"role": "user", "content": "rate"}])])
    assert len(server.requests) == 1 and "response_format" not in server.requests[0]
    assert model.structured_probe.forced and model.structured_probe.chosen == "plain"


def test_an_unknown_form_is_one_clear_error(monkeypatch) -> None:
    monkeypatch.setenv("MEMSTREAM_STRUCTURED", "grammar")
    with pytest.raises(MemstreamError, match="MEMSTREAM_STRUCTURED='grammar'; use one of auto"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key="k")


def _body(**extra: object) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": "7"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 1}, **extra}


@pytest.mark.parametrize("body,cached", [
    (_body(), None),  # llama-cpp-python's server: it does not say
    ({**_body(), "usage": {"prompt_tokens": 100, "completion_tokens": 1,
                           "prompt_tokens_details": {"cached_tokens": 64}}}, 64),  # vLLM, OpenAI
    (_body(timings={"cache_n": 80, "prompt_n": 20}), 80),  # llama.cpp's server
    ({**_body(), "usage": {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": "junk"}}}, 0),
])
def test_the_prefix_cache_count_is_read_where_a_server_gives_it(body: dict, cached: int | None) -> None:
    assert prefix_cached(body) == cached
    assert completion_of(body, 0.0).prefix_cached_tokens == cached


def test_the_cache_share_counts_only_answers_whose_server_said_so() -> None:
    usage = Usage()
    usage.record("plan", Completion("a", prompt_tokens=100, prefix_cached_tokens=80))
    usage.record("plan", Completion("b", prompt_tokens=100, prefix_cached_tokens=None))
    usage.record("importance", Completion("7", prompt_tokens=50, prefix_cached_tokens=500))  # capped at its prompt
    share = usage.prefix_cache_share()
    assert share["by_purpose"] == {"importance": 1.0, "plan": 0.8}
    assert share["all"] == round(130 / 150, 4)
    assert Usage().prefix_cache_share() == {"all": None, "by_purpose": {}}


@pytest.mark.slow
def test_a_run_reports_the_probe_and_the_cache_share(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MEMSTREAM_STRUCTURED", raising=False)
    raw = {"choices": [{"message": {"role": "assistant", "content": GOOD}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 5}}}
    with ScriptedServer([(200, raw)] * 400) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        from memstream.cli import main
        out = tmp_path / "run"
        assert main(["run", "--llm", "openai:m", "--agents", "2", "--hours", "0.05", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["structured_probe"]["chosen"] == "json_schema"
    assert metrics["prefix_cache_share"]["all"] == 0.5  # every answer: 5 of its 10 prompt tokens cached


@pytest.mark.slow
def test_a_command_says_which_answers_it_had_to_retry_or_do_without(tmp_path, monkeypatch, capsys) -> None:
    from memstream.cli import main

    with ScriptedServer([(200, "very important"), (200, "7"), (200, "no idea"), (200, "still no idea")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        db = str(tmp_path / "s.db")
        assert main(["add", db, "--agent", "A", "--text", "a fire in the kitchen", "--llm", "openai:m",
                     "--embedder", "hash", "--at", "2023-02-13T08:00:00+00:00"]) == 0
        assert "the model's answers retried with the problem named: importance 1" in capsys.readouterr().err
        assert main(["add", db, "--agent", "A", "--text", "the kettle boils", "--llm", "openai:m",
                     "--embedder", "hash", "--at", "2023-02-13T08:05:00+00:00"]) == 0
        err = capsys.readouterr().err
    assert "retried with the problem named: importance 1; unreadable twice: importance 1" in err


def test_a_command_whose_answers_were_all_usable_says_nothing_of_them() -> None:
    from memstream.cli.opening import answers_note

    usage = Usage()
    usage.record("importance", Completion("7"))
    assert answers_note(usage) is None
    usage.count("importance", "partial")
    assert answers_note(usage) == "the model's answers salvaged in part: importance 1"


@pytest.mark.parametrize("status,sent", [(500, 3), (400, 3)])
def test_an_error_naming_the_schema_costs_a_call_no_more_than_its_attempts(monkeypatch, status: int,
                                                                           sent: int) -> None:
    """A 4xx refusal steps down at once (json_schema, json_object, then plain, which fails on its own); a server
    error that names the schema steps down as a retry of the failure: three attempts, three requests (it was 5)."""
    monkeypatch.setenv("MEMSTREAM_STRUCTURED", "json_schema")
    monkeypatch.setenv("MEMSTREAM_ATTEMPTS", "3")
    error = "failed to compile the json_schema grammar"
    script = [(status, error)] * 2 + ([(status, error)] * 3 if status >= 500 else [(status, "bad request")])
    with ScriptedServer(script * 2) as server:
        model = OpenAIChat("m", base_url=server.url, api_key="k", backoff_s=0.0)
        with pytest.raises(CallsFailedError):
            model.complete_many([("reflection.questions", [{"role": "user", "content": "ask"}])])
    assert len(server.requests) == sent and model.usage.totals()["requests_sent"] == sent
