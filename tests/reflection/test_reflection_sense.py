"""Reflection sense checks: questions about a life, insights that add to and rest on what they cite."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.errors import ImplausibleAnswerError
from memstream.offline_text import content_words
from memstream.reflection import prompts, reflect
from memstream.reflection.parse import Insight, parse_insights
from memstream.reflection.sense import (
    CITATIONS,
    RESTATEMENT,
    UNSUPPORTED,
    check_insights,
    check_questions,
    insight_problem,
    restated,
)
from memstream.sim import RunConfig, start_run
from memstream.stream import MemoryStream
from memstream.testing import ScriptedChat
from tests.helpers import FIXTURES, hours, statements

OWNER = "Ayesha Khan"
SEEN = ["Ayesha Khan is taking a shower", "shower is running", "Ayesha Khan is brushing her teeth",
        "refrigerator is humming", "Conversation with Wolfgang Schulz: Wolfgang Schulz: Shall we study together?",
        "Ayesha Khan is writing her thesis", "Ayesha Khan is writing notes on her thesis at the library"]


def _insight(text: str, *because: int) -> Insight:
    return Insight(insight=text, because=list(because))


# -- questions -------------------------------------------------------------------------------------

def test_questions_all_about_one_object_are_refused() -> None:
    shower = ["What is the status of the shower?", "Why is the shower running?", "Who is using the shower?"]
    with pytest.raises(ImplausibleAnswerError, match="one object"):
        check_questions(shower, SEEN)
    with pytest.raises(ImplausibleAnswerError, match="one object"):
        check_questions(["Is the refrigerator humming?"], SEEN)  # wholly the words of one statement
    with pytest.raises(ImplausibleAnswerError, match="one statement"):  # each wholly one observation
        check_questions(["Why is the shower running?", "Why is the refrigerator humming?"], SEEN)


@pytest.mark.parametrize("questions", [
    ["What is the status of the shower?", "How does Ayesha Khan feel about her thesis?"],  # one asks about a life
    ["What is the status of the shower?", "Why is the refrigerator humming?"],  # two things, one not an observation
    ["What is Ayesha Khan most focused on lately?", "What does Ayesha Khan think about the shower?"],
    ["What is Klaus researching?"],
])
def test_questions_about_a_life_or_several_things_pass(questions: list[str]) -> None:
    assert check_questions(questions, SEEN) == questions


# -- insights --------------------------------------------------------------------------------------

def test_the_real_failure_shapes_are_dropped_and_good_insights_kept() -> None:
    answer = [_insight("Ayesha Khan is brushing teeth", 3),                        # a memory, copied
              _insight("Ayesha Khan is brushing her teeth carefully", 3, 4, 2, 1),  # copied, plus a modifier
              _insight("The refrigerator is humming", 4, 1, 2, 3),                 # the memory, citing others
              _insight("Kettles sing at dawn", 1, 2),                              # shares nothing it cites
              _insight("Ayesha Khan is devoted to her thesis", 6, 7),
              _insight("Ayesha Khan and Wolfgang Schulz may become study partners", 5, 6)]
    checked = check_insights(answer, SEEN)
    assert [i.insight for i in checked.kept] == ["Ayesha Khan is devoted to her thesis",
                                                 "Ayesha Khan and Wolfgang Schulz may become study partners"]
    assert [check for _, check, _ in checked.refused] == [RESTATEMENT, RESTATEMENT, RESTATEMENT, UNSUPPORTED]
    assert "statement 3" in checked.refused[0][2]


def test_an_answer_with_nothing_good_left_is_refused_naming_why() -> None:
    with pytest.raises(ImplausibleAnswerError, match="only restates statement 3"):
        check_insights([_insight("Ayesha Khan is brushing teeth", 3)], SEEN)
    # citations alone out of range are dropped as before, not retried: they say nothing of the insight's sense
    assert check_insights([_insight("Ayesha Khan is devoted to her thesis", 99)], SEEN).refused[0][1] == CITATIONS


# Words with no vowel cannot be function words, so every one is a content word; the two alphabets never meet.
_WORD = st.text("bcdfgklmnp", min_size=3, max_size=7).map(lambda w: w + "ing")
_OTHER = st.text("qrstvwxz", min_size=3, max_size=7).map(lambda w: w + "ed")
_SENTENCE = st.lists(_WORD, min_size=2, max_size=7, unique=True)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_SENTENCE, st.data())
def test_a_restatement_of_any_statement_is_caught(words: list[str], data: st.DataObject) -> None:
    statement = f"{OWNER} " + " ".join(words)
    some = data.draw(st.permutations(words).flatmap(lambda w: st.integers(1, len(w)).map(lambda n: w[:n])))
    modifier = data.draw(_OTHER)
    for insight in (" ".join([OWNER, *some]), f"{statement} {modifier}"):  # its words, or all and a modifier
        assert restated(insight, statement), insight
        problem = insight_problem(_insight(insight, 2), ["the kettle is on", statement])
        assert problem is not None and problem[0] == RESTATEMENT


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_SENTENCE, st.lists(_OTHER, min_size=2, max_size=7, unique=True), st.data())
def test_an_insight_from_two_statements_words_is_not_a_restatement(a: list[str], b: list[str],
                                                                     data: st.DataObject) -> None:
    from_a = data.draw(st.lists(st.sampled_from(a), min_size=2, unique=True))
    from_b = data.draw(st.lists(st.sampled_from(b), min_size=2, unique=True))
    statements = [f"{OWNER} " + " ".join(a), f"{OWNER} " + " ".join(b)]
    insight = " ".join([OWNER, *from_a, "and", *from_b])
    assert insight_problem(_insight(insight, 1, 2), statements) is None


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(_SENTENCE, st.lists(_OTHER, min_size=1, max_size=7, unique=True))
def test_an_insight_sharing_no_word_with_its_citations_is_unsupported(a: list[str], b: list[str]) -> None:
    problem = insight_problem(_insight(" ".join(b), 1), [" ".join(a)])
    assert problem is not None and problem[0] == UNSUPPORTED


# -- in a reflection -------------------------------------------------------------------------------

def test_a_refused_answer_is_retried_once_showing_why_and_drops_are_counted(stream: MemoryStream) -> None:
    for i, text in enumerate(SEEN):
        stream.add(OWNER, text, at=hours(i), importance=5)
    asked = iter([json.dumps({"questions": ["Why is the shower running?", "Is the shower on?"]}),
                  json.dumps({"questions": ["How does Ayesha Khan feel about her thesis?"]})])

    def insights(messages) -> str:
        listed = {text: n for n, text in statements(messages).items()}
        teeth = listed["Ayesha Khan is brushing her teeth"]
        return json.dumps({"insights": [{"insight": "Ayesha Khan is brushing her teeth", "because": [teeth]},
                                         {"insight": "Ayesha Khan is devoted to her thesis",
                                          "because": [listed["Ayesha Khan is writing her thesis"]]}]})
    chat = ScriptedChat({prompts.QUESTIONS_PURPOSE: lambda m: next(asked), prompts.INSIGHTS_PURPOSE: insights})
    result = reflect(stream, OWNER, hours(10), chat=chat)
    assert result.questions == ["How does Ayesha Khan feel about her thesis?"]
    retry = [m for p, m in chat.calls if p == prompts.QUESTIONS_PURPOSE][1]
    assert "one object" in retry[-1]["content"]
    assert chat.usage.by_purpose[prompts.QUESTIONS_PURPOSE].implausible == 1
    assert [i.text for i in result.insights] == ["Ayesha Khan is devoted to her thesis"]
    assert result.dropped_by_check() == {RESTATEMENT: 1}
    assert chat.usage.by_purpose[prompts.INSIGHTS_PURPOSE].implausible == 0  # one good insight: no retry
    assert OWNER in prompts.questions_messages(OWNER, SEEN)[-1]["content"]  # the questions name whose life


@pytest.mark.slow
def test_the_offline_rules_reflections_over_a_day_pass_every_check(tmp_path: Path) -> None:
    start = datetime(2023, 2, 13, 6, tzinfo=timezone(timedelta(hours=-8)))
    config = RunConfig(agents=8, start=start, hours=24, embedder="hash")
    metrics = start_run(config, tmp_path / "run", progress=False).metrics
    assert metrics["reflection"]["insights"] > 0  # the day did reflect
    assert metrics["implausible_by_purpose"] == {}
    dropped = metrics["reflection"]["dropped_by_check"]
    assert not {RESTATEMENT, UNSUPPORTED} & set(dropped), dropped



def _recorded(purpose: str) -> list[dict]:
    path = FIXTURES / "real" / "calls.jsonl"
    return [c for line in path.read_text(encoding="utf-8").splitlines() if (c := json.loads(line))["purpose"] == purpose]


def test_a_real_models_recorded_insights_that_copy_a_statement_are_refused() -> None:
    """Over the recorded real answers (whatever they are): an insight whose words are all in one statement
    it cites never passes; one that generalises over its citations is kept."""
    calls = _recorded(prompts.INSIGHTS_PURPOSE)
    assert calls  # the fixtures hold real reflections
    for call in calls:
        listed = statements(call["messages"])
        texts = [listed[n] for n in sorted(listed)]
        insights = parse_insights(call["answer"])
        copies = [i for i in insights if any(set(content_words(i.insight)) <= set(content_words(texts[n - 1]))
                                             for n in i.because if 1 <= n <= len(texts))]
        try:
            kept = check_insights(insights, texts).kept
        except ImplausibleAnswerError:
            kept = []
        assert not [i for i in copies if i in kept]
