"""Reflection: the trigger, real citations, depth and trees, retries, offline and over HTTP."""

from __future__ import annotations

import json

import pytest

from memstream.models import HashEmbedder, OfflineChatModel
from memstream.models.openai_backend import OpenAIChat
from memstream.reflection import accumulated_importance, citation_tree, maybe_reflect, reflect
from memstream.stream import MemoryStream, add_rated
from memstream.testing import ScriptedChat, ScriptedServer
from tests.helpers import hours, statements

OWNER = "Klaus Mueller"
QUESTIONS = json.dumps({"questions": ["What is Klaus researching?"]})


def _observations(stream: MemoryStream, importances: list[int], start: int = 0) -> None:
    for i, imp in enumerate(importances):
        stream.add(OWNER, f"Klaus observation {start + i} about gentrification research", at=hours(start + i),
                   importance=imp)


def test_trigger_fires_at_the_threshold_and_resets(stream: MemoryStream) -> None:
    _observations(stream, [10] * 14 + [9])  # 149
    stream.add(OWNER, "Klaus plans his day", at=hours(20), importance=10, kind="plan")  # not an observation
    assert accumulated_importance(stream, OWNER) == 149
    assert maybe_reflect(stream, OWNER, hours(21), chat=OfflineChatModel()) is None
    _observations(stream, [1], start=30)
    assert accumulated_importance(stream, OWNER) == 150
    result = maybe_reflect(stream, OWNER, hours(31), chat=OfflineChatModel())
    assert result is not None and result.questions  # it reflected (these statements support no offline insight)
    assert accumulated_importance(stream, OWNER) == 0  # reflections do not count, and the sum restarts


def test_trigger_survives_a_reopen(tmp_path) -> None:
    path = tmp_path / "s.db"
    with MemoryStream(path, HashEmbedder(64)) as s:
        _observations(s, [10] * 10)
        reflect(s, OWNER, hours(11), chat=OfflineChatModel())
        _observations(s, [10] * 8, start=20)
    with MemoryStream(path) as s:
        assert accumulated_importance(s, OWNER) == 80
        assert maybe_reflect(s, OWNER, hours(40), chat=OfflineChatModel()) is None
        _observations(s, [10] * 7, start=40)
        assert maybe_reflect(s, OWNER, hours(50), chat=OfflineChatModel()) is not None


def test_citations_map_to_memory_ids_and_bad_ones_are_dropped(stream: MemoryStream) -> None:
    _observations(stream, [5] * 6)
    seen: dict[int, str] = {}

    def insights(messages):
        seen.update(statements(messages))
        return ("1. Klaus is devoted to his research (because of 1, 3)\n"
                "2. Klaus invents evidence (because of 1, 99)\n"
                "3. Klaus has no evidence at all\n"
                '4. Klaus is devoted to his research (because of 2)')
    chat = ScriptedChat({"reflection.questions": lambda m: QUESTIONS, "reflection.insights": insights})
    result = reflect(stream, OWNER, hours(10), chat=chat)
    assert [i.text for i in result.insights] == ["Klaus is devoted to his research"]
    by_text = {m.text: m.id for m in stream.memories(OWNER)}
    assert result.insights[0].cites == [by_text[seen[1]], by_text[seen[3]]]
    written = stream.get(OWNER, result.insights[0].memory_id)
    assert written.kind == "reflection" and list(written.cites) == result.insights[0].cites
    assert written.metadata["depth"] == 1
    reasons = sorted(d.reason for d in result.dropped)
    assert reasons[0].startswith("citations out of range: [99]")
    assert "no citations" in reasons and "repeats an insight of this reflection" in reasons


def test_reflections_cite_reflections_and_form_trees(stream: MemoryStream) -> None:
    _observations(stream, [5] * 4)
    first = reflect(stream, OWNER, hours(5), chat=ScriptedChat({
        "reflection.questions": lambda m: QUESTIONS,
        "reflection.insights": lambda m: json.dumps({"insights": [{"insight": "Klaus loves research",
                                                                   "because": [1, 2]}]})}))
    level1 = first.insights[0].memory_id

    def cite_the_reflection(messages):
        numbers = [n for n, text in statements(messages).items() if text == "Klaus loves research"]
        return json.dumps({"insights": [{"insight": "Research gives Klaus meaning", "because": [numbers[0], 1]}]})
    second = reflect(stream, OWNER, hours(6), chat=ScriptedChat({
        "reflection.questions": lambda m: QUESTIONS, "reflection.insights": cite_the_reflection}))
    top = second.insights[0]
    assert level1 in top.cites and top.depth == 2
    tree = citation_tree(stream, OWNER, top.memory_id)
    lines = tree.lines()
    assert lines[0].startswith(f"[{top.memory_id}] reflection")
    assert any(line.startswith(f"  [{level1}] reflection") for line in lines)
    assert any(line.startswith("    [") and "observation" in line for line in lines)


def test_a_malformed_answer_is_retried_once_then_skipped(stream: MemoryStream) -> None:
    _observations(stream, [5] * 3)
    answers = iter(["I cannot answer that.", QUESTIONS])
    chat = ScriptedChat({"reflection.questions": lambda m: next(answers),
                         "reflection.insights": lambda m: "nothing useful here"})
    result = reflect(stream, OWNER, hours(5), chat=chat)
    assert result.questions == ["What is Klaus researching?"]
    retry = [msgs for purpose, msgs in chat.calls if purpose == "reflection.questions"][1]
    assert "could not be read" in retry[-1]["content"] and retry[-2]["content"] == "I cannot answer that."
    assert len([p for p, _ in chat.calls if p == "reflection.insights"]) == 2
    assert result.insights == [] and any("unreadable twice" in s for s in result.skipped)
    assert stream.count(OWNER) == 3


def _isabella() -> MemoryStream:
    from datetime import datetime
    from importlib.resources import files

    stream = MemoryStream(":memory:", HashEmbedder(256))
    for line in (files("memstream") / "examples" / "isabella.jsonl").read_text().splitlines():
        d = json.loads(line)
        add_rated(stream, OfflineChatModel(), d["owner"], d["text"], at=datetime.fromisoformat(d["created_at"]))
    return stream


def test_offline_reflection_end_to_end() -> None:
    stream = _isabella()
    owner = "Isabella Rodriguez"
    assert accumulated_importance(stream, owner) >= 100
    chat = OfflineChatModel()
    result = reflect(stream, owner, hours(30), chat=chat)
    assert len(result.questions) == 3 and 3 <= len(result.insights) <= 15
    mine = {m.id for m in stream.memories(owner)}
    for insight in result.insights:
        assert insight.cites and set(insight.cites) <= mine and insight.depth == 1
    usage = chat.usage.by_purpose
    assert usage["reflection.questions"].calls == 1 and usage["reflection.insights"].calls == 3
    assert chat.usage.by_stage()["reflection"].calls == 4
    assert reflect(_isabella(), owner, hours(30), chat=OfflineChatModel()).to_dict() == result.to_dict()  # deterministic


@pytest.mark.slow
def test_reflection_over_the_openai_backend_with_malformed_answers(stream: MemoryStream) -> None:
    _observations(stream, [5] * 3)
    script = [
        (200, "Sure! Here are my thoughts."),                      # questions: unreadable
        (200, "1. What is Klaus researching?"),                   # retry: a plain numbered list
        (200, "- Klaus is a dedicated researcher (because of 1, 2)\n- Klaus is tall (because of 7)"),
        (200, "Rating: 6"),                                        # importance of the one kept insight
    ]
    with ScriptedServer(script) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", backoff_s=0.01)
        result = reflect(stream, OWNER, hours(5), chat=chat)
    assert result.questions == ["What is Klaus researching?"]
    assert [i.text for i in result.insights] == ["Klaus is a dedicated researcher"]
    assert stream.get(OWNER, result.insights[0].memory_id).importance == 6
    assert [d.reason for d in result.dropped] == ["citations out of range: [7] (statements are 1-3)"]
    assert chat.usage.by_purpose["reflection.questions"].calls == 2


@pytest.mark.parametrize("text", ["", "no numbers", "1. just a line"])
def test_parsers_reject_or_accept_plain_forms(text: str) -> None:
    from memstream.errors import StructuredOutputError
    from memstream.reflection.parse import parse_insights, parse_questions

    if text == "1. just a line":
        assert parse_questions(text) == ["just a line"]
        assert parse_insights(text)[0].because == []
    else:
        with pytest.raises(StructuredOutputError):
            parse_questions(text)
