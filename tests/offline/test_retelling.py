"""A fact passed on by the offline rules keeps its true subject: the speaker says its own news in the
first person ("My daughter just got engaged"), the listener's memo names the speaker ("Tom told Jane
that Tom's daughter just got engaged") whatever the case of the pronoun, and a third agent hearing
it from Jane hears Tom's news, not Jane's.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memstream.offline_text import first_person, third_person
from memstream.sim.talk import prompts
from memstream.sim.talk.offline import answer_summary, in_my_words, in_their_words

FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'll|i'd)\b", re.IGNORECASE)
VERBS = "watch try run love fix go have do like teach study miss wash carry play write".split()
RELATIONS = "daughter son sister brother wife husband friend neighbour cat store garden".split()
TAILS = ["just got engaged", "is in the hospital", "won the prize", "needs help", "moved to the city",
         "is throwing a party at Hobbs Cafe at 5 pm"]

name = st.lists(st.from_regex(r"[A-Z][a-z]{2,7}", fullmatch=True), min_size=1, max_size=2).map(" ".join).filter(
    lambda n: not FIRST_PERSON.search(n) and n.lower() not in {"you", "your", "yours"})


@st.composite
def facts_about(draw: st.DrawFn, speaker: str) -> str:
    """A third-person fact whose subject is ``speaker`` (or the speaker's relation)."""
    kind = draw(st.sampled_from(["relation", "verb", "be"]))
    if kind == "relation":
        return f"{speaker}'s {draw(st.sampled_from(RELATIONS))} {draw(st.sampled_from(TAILS))}"
    if kind == "verb":
        return f"{speaker} {third_person(draw(st.sampled_from(VERBS)))} the {draw(st.sampled_from(RELATIONS))}"
    return f"{speaker} is {draw(st.sampled_from(['worried', 'happy', 'busy']))} about the election"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data(), name, name)
def test_a_fact_said_in_the_first_person_and_retold_names_its_subject(data: st.DataObject, speaker: str,
                                                                       listener: str) -> None:
    assume(speaker not in listener and listener not in speaker)
    fact = data.draw(facts_about(speaker))
    said = in_my_words(fact, speaker)
    assert speaker not in said, said                  # the speaker says it as "I"/"my"
    retold = in_their_words(said, speaker, listener)
    assert retold == fact, (said, retold)             # the listener's memo names the speaker again
    relayed = in_my_words(f"{speaker} told {listener} that {retold}", listener)  # the listener passes it on
    assert relayed[:1].upper() + relayed[1:] == fact[:1].upper() + fact[1:]


def cased(word: str, draw: st.DrawFn) -> str:
    return draw(st.sampled_from([word, word.lower(), word.upper(), word.capitalize()]))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data(), name, name)
def test_no_first_person_word_survives_a_retelling(data: st.DataObject, speaker: str, listener: str) -> None:
    """Any first-person word, in any case, at the start of a sentence or inside it, names the speaker."""
    assume(speaker not in listener and listener not in speaker)
    relation = data.draw(st.sampled_from(RELATIONS))
    opening = data.draw(st.sampled_from([f"{cased('my', data.draw)} {relation}", f"{cased('i', data.draw)}",
                                         f"{cased('me', data.draw)} and {cased('my', data.draw)} {relation}",
                                         f"{cased('mine', data.draw)}", f"{cased('i', data.draw)}'m sure {relation}"]))
    tail = data.draw(st.sampled_from(TAILS))
    said = f"{opening} {tail}. {cased('my', data.draw)} {relation} told {cased('me', data.draw)} so."
    retold = in_their_words(said, speaker, listener)
    assert not FIRST_PERSON.search(retold), retold
    assert retold.startswith(speaker), retold


def test_the_memo_of_a_conversation_names_the_one_whose_news_it_is() -> None:
    dialogue = prompts.dialogue_lines([("Tom Moreno", "Hi Jane! Did you hear? My daughter just got engaged."),
                                       ("Jane Moreno", "Oh, I didn't know that. Nothing new with me.")])
    memo = json.loads(answer_summary(prompts.summary_messages("Tom Moreno", "Jane Moreno", "Jane Moreno",
                                                              dialogue)))["summary"]
    assert memo == "Tom Moreno told Jane Moreno that Tom Moreno's daughter just got engaged."
    assert in_my_words(memo, "Jane Moreno") == "Tom Moreno's daughter just got engaged."


def test_verbs_turn_between_persons() -> None:
    for verb in VERBS:
        assert first_person(third_person(verb)) == verb
    assert [third_person(v) for v in ("am", "can", "just", "went", "tried")] == ["is", "can", "just", "went", "tried"]
