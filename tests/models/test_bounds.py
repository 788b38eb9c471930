"""Every request bounds its answer (issue: a local run that finishes): max_tokens by purpose, bounded
schemas, and an answer cut at its bound counted as truncated."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memstream.sim  # noqa: F401 - registers every stage's prompts, schemas and bounds
from memstream.errors import MemstreamError
from memstream.models import ANSWER_TOKENS, answer_tokens
from memstream.models.bounds import DEFAULT_ANSWER_TOKENS, bounded_schema
from memstream.models.openai_backend import OpenAIChat
from memstream.models.parsing import ANSWER_SCHEMAS
from memstream.testing import ScriptedServer

ASK = [{"role": "user", "content": "rate it"}]


def _unbounded(schema: object) -> list[str]:
    """Paths of arrays without maxItems and free strings without maxLength in a JSON schema."""
    found: list[str] = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
            if "array" in kinds and "maxItems" not in node:
                found.append(path)
            if "string" in kinds and "maxLength" not in node and "enum" not in node and "const" not in node:
                found.append(path)
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}/{i}")

    walk(schema, "")
    return found


@pytest.mark.slow
def test_every_request_carries_its_purpose_s_bound() -> None:
    with ScriptedServer([(200, "7"), (200, "{}"), (200, "ok")]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", concurrency=1)
        chat.complete_many([("importance", ASK), ("planning.hours", ASK), ("no.such.purpose", ASK)])
    assert [r["max_tokens"] for r in server.requests] == [8, 800, DEFAULT_ANSWER_TOKENS]
    assert answer_tokens("planning.hours") == ANSWER_TOKENS["planning.hours"] == 800


def test_every_purpose_with_a_schema_has_a_bound_and_its_schema_is_bounded() -> None:
    assert set(ANSWER_SCHEMAS) <= set(ANSWER_TOKENS), set(ANSWER_SCHEMAS) - set(ANSWER_TOKENS)
    for purpose, schema in ANSWER_SCHEMAS.items():
        assert _unbounded(bounded_schema(schema)) == [], purpose


def test_a_schema_sent_to_the_server_is_the_bounded_one() -> None:
    with ScriptedServer([(200, '{"hours": []}')]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", concurrency=1)
        chat.complete_many([("planning.hours", ASK)])
    sent = server.requests[0]["response_format"]
    assert _unbounded(sent) == [] and sent["type"] == "json_schema"


def test_an_answer_cut_at_its_bound_is_counted_as_truncated() -> None:
    cut = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
           "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "{\"ho"}}]}
    with ScriptedServer([(200, cut), (200, "5")]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", concurrency=1)
        chat.complete_many([("planning.hours", ASK)])
        chat.complete_many([("importance", ASK)])
    assert chat.usage.by_purpose["planning.hours"].truncated == 1
    assert chat.usage.by_purpose["importance"].truncated == 0


def test_the_bounds_can_be_overridden_and_a_bad_override_is_one_line(monkeypatch) -> None:
    monkeypatch.setenv("MEMSTREAM_MAX_TOKENS", "importance=4, 100")
    assert answer_tokens("importance") == 4 and answer_tokens("planning.day") == 100
    monkeypatch.setenv("MEMSTREAM_MAX_TOKENS", "importance=lots")
    with pytest.raises(MemstreamError, match="MEMSTREAM_MAX_TOKENS"):
        answer_tokens("importance")


_schemas = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "boolean", "number"])}),
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.fixed_dictionaries({"type": st.just("object"),
                               "properties": st.dictionaries(st.text("abcdef", min_size=1, max_size=4), inner,
                                                             max_size=3)}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
    ), max_leaves=12)


@pytest.mark.slow
@given(_schemas)
@settings(max_examples=150, deadline=None)
def test_any_schema_comes_out_bounded_and_otherwise_unchanged(schema: dict) -> None:
    bounded = bounded_schema(schema)
    assert _unbounded(bounded) == []
    assert bounded_schema(bounded) == bounded  # bounds already there are kept

    def strip(node: object) -> object:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("maxItems", "maxLength")}
        return [strip(v) for v in node] if isinstance(node, list) else node

    assert strip(bounded) == schema


@pytest.mark.slow
def test_a_request_given_up_on_waits_for_the_server_before_it_is_sent_again(caplog) -> None:
    """The client gave up after 0.5 s; a local server would still be generating that answer, so the
    retry waits as long again instead of queueing behind it at once (the backoff alone is 0.01 s)."""
    import time

    with ScriptedServer([(0, "2"), (200, "5"), (0, "2"), (200, "6")]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", concurrency=1, timeout=0.5, backoff_s=0.01)
        started = time.perf_counter()
        assert chat.complete_many([("importance", ASK)]) == ["5"]
        wall = time.perf_counter() - started
        chat.complete_many([("importance", ASK)])
    assert wall >= 0.95, wall  # 0.5 s waiting for the answer, then 0.5 s for the server to be free
    assert chat.usage.by_purpose["importance"].abandoned == 2
    assert sum("gave up on an answer" in r.getMessage() for r in caplog.records) == 1  # said once
