"""Model back-ends: the offline stand-in, embedders, parsing, the call cache, OpenAI over HTTP."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import BaseModel

from memstream.errors import MemstreamError, StructuredOutputError
from memstream.models import (
    CachedChatModel,
    Completion,
    HashEmbedder,
    MiniLMEmbedder,
    OfflineChatModel,
    WordLlamaEmbedder,
    forget_in_cache,
    make_chat_model,
    make_embedder,
    parse_structured,
)
from memstream.models.openai_backend import OpenAIChat, OpenAIEmbedder
from memstream.stream import MemoryStream, add_rated, rate_importance
from memstream.stream.importance import FALLBACK_IMPORTANCE, parse_importance
from memstream.stream.prompts import ROUND_PURPOSE
from memstream.testing import ScriptedServer
from tests.helpers import T0


def test_offline_importance_rates_routine_low_and_life_events_high() -> None:
    model = OfflineChatModel()
    routine = ["Klaus is brushing his teeth", "Maria is making bed", "the stove is idle"]
    events = ["Isabella's father passed away", "Klaus got engaged to Maria", "Sam was accepted into college"]
    low, high = rate_importance(model, routine), rate_importance(model, events)
    assert max(low) <= 2 and min(high) >= 8
    assert rate_importance(model, events) == high  # deterministic
    assert model.usage.by_purpose[ROUND_PURPOSE].calls == 3  # each list rated as one round, compared
    assert [rate_importance(model, [t])[0] for t in routine + events] == low + high  # alone or together, the same


@pytest.mark.parametrize(("answer", "value"), [
    ("7", 7), ("Rating: 3/10", 3), ("I'd say 12, no, 9", 9), ("0 then 4", 4), ("ten", None), ("", None),
])
def test_parse_importance_takes_the_first_integer_in_range(answer: str, value: int | None) -> None:
    if value is None:
        with pytest.raises(MemstreamError, match="no rating"):
            parse_importance(answer)
    else:
        assert parse_importance(answer) == value


def test_parse_importance_survives_an_answer_of_thousands_of_digits() -> None:
    with pytest.raises(MemstreamError, match="no rating"):
        parse_importance("9" * 5000)


class Pair(BaseModel):
    name: str
    score: int


def test_structured_output_parses_fenced_json_and_explains_failures() -> None:
    assert parse_structured('Sure!\n```json\n{"name": "a", "score": 2}\n```', Pair) == Pair(name="a", score=2)
    with pytest.raises(StructuredOutputError, match="does not parse as Pair: score"):
        parse_structured('{"name": "a", "score": "high"}', Pair)
    with pytest.raises(StructuredOutputError, match="Pair"):
        parse_structured("no json here", Pair)


@pytest.mark.slow
@pytest.mark.parametrize("embedder", [HashEmbedder(64), WordLlamaEmbedder(), MiniLMEmbedder()],
                         ids=["hash", "wordllama", "minilm"])
def test_embedders_give_unit_float32_rows(embedder) -> None:
    v = embedder.embed(["A man is eating food.", "A man is eating a piece of bread.", "The girl plays violin."])
    assert v.dtype == np.float32 and v.shape == (3, embedder.dim)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, embedder.dim)
    assert np.isfinite(embedder.embed(["", "   "])).all()


@pytest.mark.slow
@pytest.mark.parametrize("embedder", [WordLlamaEmbedder(), MiniLMEmbedder()], ids=["wordllama", "minilm"])
def test_learned_embedders_know_meaning(embedder) -> None:
    v = embedder.embed(["A man is eating food.", "A man is eating a piece of bread.", "The girl plays violin."])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


@pytest.mark.slow
def test_minilm_reads_long_texts_in_length_sorted_batches() -> None:
    m = MiniLMEmbedder(batch_size=2)
    texts = ["short", "a much longer sentence about the cafe " * 20, "mid length text here", "x"]
    batched = m.embed(texts)
    single = np.vstack([m.embed([t]) for t in texts])
    assert np.allclose(batched, single, atol=1e-4)


def test_model_specs() -> None:
    assert make_chat_model("offline").name.startswith("offline/rules-")
    assert make_embedder("hash:16").dim == 16
    with pytest.raises(MemstreamError, match="unknown embedder"):
        make_embedder("bert-large")
    with pytest.raises(MemstreamError, match="unknown chat model"):
        make_chat_model("gpt4")


def test_cache_records_then_replays_without_the_model(tmp_path) -> None:
    path = tmp_path / "calls.db"
    live = CachedChatModel(OfflineChatModel(), path)
    first = [rate_importance(live, [text])[0] for text in ("Ann got married", "Ann brushed her teeth")]
    assert live.usage.by_purpose["importance"].cache_hits == 0 and len(live) == 2
    replay = CachedChatModel(OfflineChatModel(), path, mode="replay")
    assert [rate_importance(replay, [text])[0] for text in ("Ann got married", "Ann brushed her teeth")] == first
    assert replay.usage.by_purpose["importance"].cache_hits == 2
    with pytest.raises(MemstreamError, match="not in the replay cache"):
        rate_importance(replay, ["something new"])


def test_a_cache_forgets_the_calls_made_for_an_owner_and_the_answers_quoting_them(tmp_path) -> None:
    path = tmp_path / "calls.db"
    cache = CachedChatModel(OfflineChatModel(), path)
    with cache.for_owner("tag-ann"):
        rate_importance(cache, ["Ann got married in Zanzibar"])
    rate_importance(cache, ["Bob brushed his teeth", "Ann got married in Zanzibar"])  # asked again, untagged
    cache._store([("k-quote", "summary", Completion("Ann got married in Zanzibar, they say", 1, 1))])
    assert len(cache) == 3
    assert cache.forget_owner("tag-ann", ["Ann got married in Zanzibar"]) == 2 and len(cache) == 1
    assert forget_in_cache(path, "tag-ann", ["no such text at all"]) == 0 and len(cache) == 1
    cache.close()
    assert b"Zanzibar" not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_no_key_gives_a_clear_message(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MemstreamError, match="OPENAI_API_KEY is not set"):
        OpenAIChat("gpt-4o-mini")


@pytest.mark.slow
def test_openai_chat_retries_rate_limits_and_server_errors_over_http() -> None:
    script = [(429, "slow down"), (500, "oops"), (200, "Rating: 8"), (200, "no number at all"), (200, "still none")]
    with ScriptedServer(script) as server:
        chat = OpenAIChat("test-model", base_url=server.url, api_key="k", backoff_s=0.01)
        ratings = rate_importance(chat, ["Ann got married"])
        assert ratings == [8]
        assert len(server.chat_requests) == 3
        assert server.chat_requests[0]["messages"][-1]["content"].startswith("Memory: Ann got married")
        assert rate_importance(chat, ["Ann had tea"]) == [FALLBACK_IMPORTANCE]  # retried once, then lost
        assert server.chat_requests[-1]["messages"][-1]["content"].startswith("Your answer could not be read")
        usage = chat.usage.by_purpose["importance"]
        assert usage.calls == 3 and usage.retried == 1 and usage.unusable == 1 and chat.usage.lost == 1


@pytest.mark.slow
def test_openai_retries_a_timeout() -> None:
    with ScriptedServer([(0, "1.0"), (200, "Rating: 4")]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", timeout=0.3, backoff_s=0.01)
        assert rate_importance(chat, ["Ann met Bob"]) == [4]
        assert len(server.chat_requests) == 2


@pytest.mark.slow
def test_openai_batches_run_concurrently() -> None:
    script = [(200, str(i + 1)) for i in range(6)]
    with ScriptedServer(script, delay=0.2) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", concurrency=3)
        answers = chat.complete_many([("t", [{"role": "user", "content": f"q{i}"}]) for i in range(6)])
        assert server.max_in_flight == 3
    asked = {r["messages"][0]["content"]: r for r in server.chat_requests}
    assert sorted(asked) == [f"q{i}" for i in range(6)] and sorted(answers) == [str(i + 1) for i in range(6)]
    assert chat.usage.by_purpose["t"].calls == 6


def test_openai_batch_from_inside_a_running_event_loop() -> None:
    import asyncio

    with ScriptedServer([(200, "1"), (200, "2")]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k")

        async def notebook_cell() -> list[str]:  # Jupyter runs cells inside an event loop
            return chat.complete_many([("other", [{"role": "user", "content": "a"}]),
                                       ("other", [{"role": "user", "content": "b"}])])

        assert sorted(asyncio.run(notebook_cell())) == ["1", "2"]


def test_openai_gives_up_after_its_retries_with_a_clear_error() -> None:
    with ScriptedServer([(503, "down")] * 3) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", attempts=3, backoff_s=0.01)
        with pytest.raises(MemstreamError, match="failed: InternalServerError"):
            chat.complete([{"role": "user", "content": "hi"}])
        assert len(server.chat_requests) == 3


def test_openai_does_not_retry_a_bad_request() -> None:
    with ScriptedServer([(400, "bad")]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", backoff_s=0.01)
        with pytest.raises(MemstreamError, match="BadRequestError"):
            chat.complete([{"role": "user", "content": "hi"}])
        assert len(server.chat_requests) == 1


def test_a_stream_runs_on_openai_back_ends_over_http() -> None:
    with ScriptedServer([(200, "6"), (200, "2")]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", concurrency=1)
        emb = OpenAIEmbedder("e", base_url=server.url, api_key="k")
        assert emb.dim == 3
        s = MemoryStream(":memory:", emb)
        a = add_rated(s, chat, "ann", "Ann met Bob at the cafe", at=T0)
        b = add_rated(s, chat, "ann", "tea", at=T0)
        assert (a.importance, b.importance) == (6, 2)
        assert s.retrieve("ann", "cafe", now=T0, k=1, touch=False)[0].memory.owner == "ann"
