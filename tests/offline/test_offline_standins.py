"""The offline stand-in's importance, news, judge and reflection rules: generic, documented, and at least
not inverted (an answer outscores a non-answer; an insight states what its statements support)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.models import OfflineChatModel, one_line
from memstream.reflection import prompts as reflection_prompts
from memstream.reflection.parse import parse_insights
from memstream.sim.talk import prompts
from memstream.sim.talk.offline import answer_plans, answer_summary, answer_turn
from memstream.sim.talk.offline_judge import STAND_IN, judge
from memstream.sim.talk.parse import parse_summary
from memstream.stream import rate_poignancy
from memstream.stream.offline import NOTABLE, ROUTINE, lexicon_tier

MEMORIES = ["Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe at 17:00 on 14 February",
            "Isabella Rodriguez is serving coffee at Hobbs Cafe", "Klaus Mueller told Isabella that he is writing"]


def test_importance_words_match_whole_words_only() -> None:
    assert lexicon_tier("Sam won the local election") == 8 and lexicon_tier("I need to select a book") == 5
    assert lexicon_tier("the fireplace is warm") is None and lexicon_tier("the kitchen is on fire") == 8
    assert lexicon_tier("she is pregnant") == 9 and lexicon_tier("an engaged listener") == 9  # words, not meaning


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["elect", "fire", "party", "engaged", "born", "met", "won", "quit", "call"]),
       st.text(alphabet="qxz", min_size=1, max_size=3), st.text(alphabet="qxz", max_size=3))
def test_a_cue_inside_a_longer_word_is_not_the_cue(cue: str, before: str, after: str) -> None:
    assert lexicon_tier(f"Ann saw the {before}{cue}{after} today") is None


def test_importance_weighs_an_event_with_a_time_and_whom_it_concerns() -> None:
    talk = "Isabella is planning a party"
    event = "Isabella is throwing a party at Hobbs Cafe tomorrow at 5 pm"
    assert rate_poignancy(event) == rate_poignancy(talk) + 1 >= NOTABLE  # something one can go to
    assert rate_poignancy("the old kettle is humming") <= ROUTINE      # things only
    assert rate_poignancy("the stove is on fire") >= 8                  # unless an emergency


def turn(name: str, other: str, memories: list[tuple[str, int, str]], dialogue: list[tuple[str, str]]) -> dict:
    lines = "\n".join(f"- ({kind}, importance {i}) {one_line(text)}" for kind, i, text in memories)
    return json.loads(answer_turn(prompts.turn_messages("Name: x", name, other, "10:00", "Hobbs Cafe", "", lines,
                                                        prompts.dialogue_lines(dialogue))))


def test_a_speaker_passes_on_two_items_the_listener_has_not_had_from_it() -> None:
    ann, ben = "Ann Lee", "Ben Ortiz"
    items = {"mayor": "Sam Moore is running for mayor", "party": "The party is at Hobbs Cafe at 5 pm.",
             "dog": "Cal Diaz's dog is sick"}
    memories = [("thought", 8, "Sam Moore is running for mayor"),
                ("thought", 8, "Cal Diaz told Ann Lee that the party is at Hobbs Cafe at 5 pm. "
                               "Cal Diaz told Ann Lee that Cal Diaz's dog is sick"),
                ("thought", 9, "Ben Ortiz told Ann Lee that Ben Ortiz's sister got engaged"),  # the listener's own
                ("observation", 2, "the kettle is humming"), ("observation", 1, "the bed is made")]  # as a prompt lists
    dialogue: list[tuple[str, str]] = []
    first = turn(ann, ben, memories, dialogue)["utterance"]
    said = [key for key, text in items.items() if text.rstrip(".").lower() in first.lower()]
    assert first.startswith("Hi Ben! Did you hear? ") and len(said) == 1  # one of three equals, as the seed draws
    dialogue += [(ann, first), (ben, "Oh, I didn't know that. Nothing new with me.")]
    second = turn(ann, ben, memories, dialogue)["utterance"]
    said += [key for key, text in items.items() if text.rstrip(".").lower() in second.lower() and key not in said]
    assert second.startswith("And did you hear? ") and len(said) == 2  # a second item, not the first again
    assert "engaged" not in first + second  # never the listener's own news back to it
    dialogue.append((ann, second))
    memo = json.loads(answer_summary(prompts.summary_messages(ann, ben, ben, prompts.dialogue_lines(dialogue))))
    assert memo["summary"].count("Ann Lee told Ben Ortiz that") == 2
    told_before = [("dialogue", 5, f"Conversation with {ben}:\n{ann}: {first}")]
    again = turn(ann, ben, memories + told_before, [])["utterance"]
    assert items[said[0]].rstrip(".").lower() not in again.lower()  # not novel to this listener any more


def test_the_offline_judge_checks_the_answer_addresses_the_question() -> None:
    question = "What are you planning for Valentine's Day?"
    good = judge(question, "I am planning a Valentine's Day party at Hobbs Cafe at 17:00 on 14 February.", MEMORIES)
    off_topic = judge(question, "I am serving coffee at Hobbs Cafe.", MEMORIES)
    non_answer = judge(question, "I don't remember anything about that.", MEMORIES)
    assert good[0] >= 4 and not good[1] and off_topic[0] <= 2 and non_answer[0] == 1
    assert all(STAND_IN in verdict[2] for verdict in (good, off_topic, non_answer))
    who = "Who is Klaus Mueller?"
    assert judge(who, "Klaus Mueller is writing, he told me.", MEMORIES)[0] > judge(who, "I like coffee.", MEMORIES)[0]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(max_size=200))
def test_the_offline_judge_takes_any_text(question: str, answer: str) -> None:
    score, hallucinated, why = judge(question, answer, MEMORIES)
    assert 1 <= score <= 5 and isinstance(hallucinated, bool) and why.startswith(STAND_IN)


def insights(owner: str, statements: list[str]) -> list[dict]:
    chat = OfflineChatModel()
    answer = chat.complete(reflection_prompts.insights_messages(owner, statements),
                           purpose=reflection_prompts.INSIGHTS_PURPOSE)
    return [vars(i) for i in parse_insights(answer)]


def test_offline_insights_state_what_their_statements_support() -> None:
    owner = "Ann Lee"
    fair = "the fair is at Johnson Park at 10 am on Saturday"
    found = insights(owner, [f"Ben Ortiz told Ann Lee that {fair}",
                             "Ann Lee is painting a mural", "Conversation with Ben Ortiz:\nBen Ortiz: Hi",
                             "Ann Lee is painting the fence", "the kettle is on", f"Cho Min told Ann Lee that {fair}"])
    assert {"insight": "Ann Lee has heard of the fair at Johnson Park at 10:00 on Saturday 2 times",
            "because": [1, 6]} in found
    assert {"insight": "Ann Lee has talked with Ben Ortiz 2 times", "because": [1, 3]} in found
    assert {"insight": "Ann Lee has been painting 2 times lately", "because": [2, 4]} in found
    once = insights(owner, [f"Ben Ortiz told Ann Lee that {fair}", "the kettle is on"])
    assert not any("fair" in i["insight"] for i in once)  # one announcement is that statement, not an insight
    assert insights(owner, ["the kettle is on", "it rained"]) == []  # no insight rather than a template


def test_a_memo_of_several_items_keeps_within_a_memos_length() -> None:
    long_news = "Isabella Rodriguez is throwing a Valentine's Day party at Hobbs Cafe on February 14th from 5 to 7 pm " \
                "and wants to invite everyone she meets"
    dialogue = prompts.dialogue_lines([("Ann Lee", f"Hi Ben! Did you hear? {long_news}."),
                                       ("Ben Ortiz", "Oh, I didn't know that. Nothing new with me."),
                                       ("Ann Lee", f"And did you hear? {long_news.replace('Isabella', 'Maria')}.")])
    answer = answer_summary(prompts.summary_messages("Ann Lee", "Ben Ortiz", "Ben Ortiz", dialogue))
    memo = parse_summary(answer)  # the stand-in's own answer passes the parser (at most MAX_SENTENCE_WORDS)
    assert memo.startswith("Ann Lee told Ben Ortiz that Isabella") and "Maria" not in memo


def test_a_planning_thought_dates_a_day_said_relative_to_the_conversation() -> None:
    dialogue = prompts.dialogue_lines([("Ann Lee", "Hi Ben! Did you hear? The fair is at the park tomorrow at 10 am.")])
    answer = answer_plans(prompts.plans_messages("Name: Ben Ortiz", "Ben Ortiz", "Monday 13 February 2023", "10:00",
                                                 dialogue))
    assert json.loads(answer)["plans"] == "go to the fair at the park at 10:00 on 14 February"
