"""A run's seed decides every choice among equals: two seeds give two runs, one seed the same run."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.models import CachedChatModel, OfflineChatModel, make_chat_model, prompt_of, tie_breaker
from memstream.models.openai_backend import OpenAIChat
from memstream.sim import RunConfig, start_run
from memstream.testing import ScriptedServer

START = datetime(2023, 2, 13, 6, tzinfo=timezone(timedelta(hours=-8)))
ASK = [{"role": "user", "content": "hi"}]


def _events(out: Path, seed: int) -> str:
    start_run(RunConfig(start=START, hours=3, embedder="hash", seed=seed), out, progress=False)
    return (out / "events.jsonl").read_text()


@pytest.mark.slow
def test_two_seeds_give_two_event_logs_and_one_seed_the_same_log(tmp_path: Path) -> None:
    first, again, other = _events(tmp_path / "a", 1), _events(tmp_path / "b", 1), _events(tmp_path / "c", 2)
    assert first == again
    assert first != other
    starts = {line for line in first.splitlines() if "starts a conversation" in line}
    assert starts != {line for line in other.splitlines() if "starts a conversation" in line}  # whom they approached


def test_the_offline_rules_draw_ties_from_the_models_seed() -> None:
    def draw(messages: list[dict[str, str]]) -> str:
        return str(tie_breaker(prompt_of(messages)).random())

    answers = {}
    for seed in (0, 1, 1):
        chat = OfflineChatModel(seed)
        chat.register("t", draw)
        answers.setdefault(seed, set()).add(chat.complete(ASK, purpose="t"))
    assert len(answers[1]) == 1 and answers[0] != answers[1]
    assert tie_breaker("x").random() == tie_breaker("x").random()  # outside a rule: seed 0


def test_a_seeded_call_cache_keys_on_the_seed(tmp_path: Path) -> None:
    plain = CachedChatModel(OfflineChatModel(0), tmp_path / "calls.db")
    plain.complete(ASK)
    seeded = CachedChatModel(OfflineChatModel(3), tmp_path / "calls.db")
    seeded.complete(ASK)
    assert seeded.seed == 3 and seeded.usage.by_purpose["other"].cache_hits == 0  # not the unseeded answer


def test_an_endpoint_is_sent_the_runs_seed() -> None:
    with ScriptedServer([(200, "yes"), (200, "yes")]) as server:
        OpenAIChat("m", base_url=server.url, api_key="k", seed=7).complete(ASK)
        OpenAIChat("m", base_url=server.url, api_key="k").complete(ASK)
        assert server.requests[0]["seed"] == 7 and "seed" not in server.requests[1]
    assert make_chat_model("offline", seed=7).seed == 7
