"""Requests and their two runners: retry, fallback and counting, rounds shared by independent stages,
and every stage of the simulation batched across agents."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.errors import MemstreamError, StructuredOutputError
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.models.base import Completion
from memstream.models.offline import RULES
from memstream.models.request import Request, answer_all, concurrently, run_direct
from memstream.sim import RunConfig, start_run
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.town.world import default_town_path, load_town
from memstream.stream import MemoryStream

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)


def number(text: str) -> int:
    if not text.strip().isdigit():
        raise StructuredOutputError(f"not a number: {text!r}")
    return int(text)


class Answers(OfflineChatModel):
    """Answers every call from a queue of texts (an exception in the queue is raised); records each batch."""

    def __init__(self, *answers: str | Exception) -> None:
        super().__init__()
        self.answers = list(answers)
        self.batches: list[list[str]] = []
        self.seen: list[list[dict]] = []

    def _generate_many(self, calls, params):
        self.batches.append([purpose for purpose, _ in calls])
        out = []
        for _, messages in calls:
            self.seen.append(messages)
            answer = self.answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            out.append(Completion(answer))
        return out


def ask_two():
    first = yield Request("a", [{"role": "user", "content": "one?"}], number)
    both = yield [Request("b", [{"role": "user", "content": "two?"}], number),
                  Request("b", [{"role": "user", "content": "three?"}], number)]
    return first, both


def test_the_direct_runner_answers_singles_and_lists() -> None:
    chat = Answers("1", "2", "3")
    assert run_direct(ask_two(), chat) == (1, [2, 3])
    assert chat.batches == [["a"], ["b", "b"]] and chat.usage.rounds == 2


def test_an_unreadable_answer_is_retried_once_with_its_error_then_lost_and_counted() -> None:
    chat = Answers("one", "1", "x", "2", "y")  # a: retried and read; b two: lost after its retry; b three: read
    problems: list[str] = []
    assert run_direct(ask_two(), chat, problems) == (1, [None, 2])
    assert "not a number: 'one'" in chat.seen[1][-1]["content"] and chat.seen[1][-2]["content"] == "one"
    assert chat.batches == [["a"], ["a"], ["b", "b"], ["b"]]  # only the unreadable are asked again
    b = chat.usage.by_purpose["b"]
    assert (b.retried, b.unusable, b.failed) == (1, 1, 0) and chat.usage.by_purpose["a"].retried == 1
    assert chat.usage.lost == 1 and len(problems) == 1 and "b: unreadable twice" in problems[0]


def test_a_failed_call_is_counted_and_the_fallback_stands_in_per_request() -> None:
    def rate(text: str) -> Request:
        return Request("importance", [{"role": "user", "content": f"Memory: {text}\nRating:"}], number)

    chat = Answers(MemstreamError("batch down"), "4", MemstreamError("down for good"))
    requests = [rate("Ann got married"), rate("Ann had tea")]
    answers = answer_all(chat, requests, fallback=OfflineChatModel())
    assert answers[0] == 4 and answers[1] == int(RULES["importance"](requests[1].messages))
    assert requests[1].problem and not requests[0].problem
    assert chat.usage.by_purpose["importance"].failed == 1 and chat.usage.lost == 1


def test_any_answer_text_is_read_or_counted_never_raised() -> None:
    def strict(text: str) -> int:
        return int(text)  # raises ValueError on anything but digits

    for text in ["", "9" * 5000, "\x00\ud800", "{", "[1, 2"]:
        chat = Answers(text, text)
        request = Request("p", [{"role": "user", "content": "?"}], strict)
        assert answer_all(chat, [request]) == [None] or text.isdigit()


def test_stages_side_by_side_share_rounds() -> None:
    def one(purpose: str, n: int):
        total = 0
        for i in range(n):
            total += yield Request(purpose, [{"role": "user", "content": f"{purpose} {i}"}], number)
        return total

    chat = Answers(*["1"] * 5)
    assert run_direct(concurrently([one("a", 3), one("b", 2)]), chat) == [3, 2]
    assert chat.batches == [["a", "b"], ["a", "b"], ["a"]]  # three rounds, not five


def test_the_offline_stand_in_has_no_domain_of_its_own() -> None:
    from memstream.models import offline

    assert "importance" in RULES  # registered by memstream.stream, not by models
    source = Path(offline.__file__).read_text()
    assert "memstream.stream" not in source and "memstream.planning" not in source
    assert OfflineChatModel().complete([{"role": "user", "content": "Tell me a joke"}],
                                       purpose="no.such.stage").startswith("(offline model)")


class Recording(OfflineChatModel):
    """The offline rules, recording which purposes reach the model together."""

    def __init__(self, broken: str = "") -> None:
        super().__init__()
        self.batches: list[Counter] = []
        self.broken = broken

    def _generate_many(self, calls, params):
        self.batches.append(Counter(purpose for purpose, _ in calls))
        return [Completion("no idea") if purpose == self.broken else self._generate(m, purpose, params)
                for purpose, m in calls]


def test_plans_decompositions_and_conversations_are_batched_across_agents() -> None:
    town = load_town(default_town_path())
    residents = [r.model_copy(update={"wake": "06:00"}) for r in town.residents[:8]]
    chat = Recording()
    stream = MemoryStream(":memory:", HashEmbedder(64))
    sim = Simulation(town, residents, stream, chat, EventLog(None), start=START)
    sim.run(START + timedelta(minutes=30))
    largest = Counter()
    for batch in chat.batches:
        for purpose, n in batch.items():
            largest[purpose] = max(largest[purpose], n)
    assert largest["planning.day"] == 8 and largest["planning.hours"] == 8  # every agent's plan in one batch
    assert largest["planning.actions"] >= 2 and largest["importance"] >= 8
    assert any(len(b) >= 2 for b in chat.batches)  # purposes share a round


@pytest.mark.slow
def test_a_run_counts_the_answers_it_lost_and_still_plans(tmp_path: Path) -> None:
    chat = Recording(broken="planning.day")
    config = RunConfig(agents=5, start=START, hours=4, embedder="hash")
    metrics = start_run(config, tmp_path / "run", chat=chat, progress=False).metrics
    assert metrics["lost_by_purpose"] == {"planning.day": 5} and metrics["model_failures"] == 5
    assert metrics["usage"]["planning.day"]["retried"] == 5 and metrics["rounds"] > 0
    plans = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()
             if "plans the day" in line]
    assert len(plans) == 5  # the offline rules stood in for each lost plan


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan", "soon"])
def test_timeout_and_concurrency_settings_are_checked(monkeypatch, value: str) -> None:
    from memstream.models.openai_backend import OpenAIChat

    monkeypatch.setenv("MEMSTREAM_TIMEOUT", value)
    with pytest.raises(MemstreamError, match="MEMSTREAM_TIMEOUT|timeout"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key="k")


def test_timeout_and_concurrency_come_from_flags_or_the_environment(monkeypatch) -> None:
    from memstream.models import make_chat_model

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMSTREAM_TIMEOUT", "300")
    monkeypatch.setenv("MEMSTREAM_CONCURRENCY", "2")
    chat = make_chat_model("openai:m")
    assert chat.timeout == 300 and chat.concurrency == 2
    chat = make_chat_model("openai:m", timeout=5, concurrency=32)
    assert chat.timeout == 5 and chat.concurrency == 32


def test_an_answer_short_twice_keeps_what_it_gave_when_the_request_can_salvage_it() -> None:
    def at_least_three(text: str) -> list[int]:
        items = [int(x) for x in text.split()]
        if len(items) < 3:
            raise StructuredOutputError(f"{len(items)} items; give 3")
        return items

    def anything(text: str) -> list[int]:
        return [int(x) for x in text.split()] or number(text)

    chat = Answers("1", "7 8 9", "1 2")  # p short, q whole; p's retry still short: what it gave is kept
    kept = Request("p", [{"role": "user", "content": "?"}], at_least_three, salvage=anything)
    whole = Request("q", [{"role": "user", "content": "!"}], at_least_three)
    assert answer_all(chat, [kept, whole]) == [[1, 2], [7, 8, 9]]
    assert chat.usage.by_purpose["p"].partial == 1 and chat.usage.lost == 0 and kept.problem is None
