"""Conversations a real model starts, and interviews that use what happened (issue 31).

The offer asks with the time of day, how the two last talked and what the offering agent has not
told the other; each offer's outcome is counted in the agents' state and in metrics.json; an
interview shows the recent day beside what is retrieved on the question; an answer that repeats
the answer to another question is flagged.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.errors import StructuredOutputError
from memstream.models import HashEmbedder, OfflineChatModel, run_direct
from memstream.sim import RunConfig, RunDir, flag_repeats, repeat_count, resume_run, start_run
from memstream.sim.agents.agent import Agent, Body, Offers, Social, Talked
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.talk import prompts as sp
from memstream.sim.talk.interview import interview_stage
from memstream.sim.talk.offer import MAX_UNTOLD, offer_messages, period, told, untold
from memstream.sim.talk.parse import parse_talk
from memstream.sim.talk.recent import day_began, recent_day
from memstream.sim.talk.repeats import same, words
from memstream.sim.town.world import default_town_path, load_town
from memstream.stream import MemoryStream

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
TOWN = load_town(default_town_path())
A, B = TOWN.residents[0], TOWN.residents[1]
#: Words for made-up memories: nothing of the bundled town, so no rule can be tuned to it.
WORDS = ["garden", "letter", "piano", "river", "festival", "bicycle", "concert", "recipe", "lantern", "harbor",
         "kite", "violin", "orchard", "museum", "parade", "telescope"]


def agents() -> tuple[Agent, Agent]:
    return Agent(A, Body(A.home)), Agent(B, Body(A.home))


def section(prompt: str, heading: str, end: str = "\n\n") -> list[str]:
    """The ``- `` lines under ``heading`` in ``prompt``."""
    block = prompt.split(heading + "\n", 1)[1].split(end, 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def untold_heading(a: str, b: str) -> str:
    return sp.UNTOLD_HEADING.format(name=a, other=b)


# -- the offer ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("hour", "word"), [(3, "night"), (5, "morning"), (11, "morning"), (12, "afternoon"),
                                            (16, "afternoon"), (17, "evening"), (20, "evening"), (21, "night"),
                                            (23, "night")])
def test_the_period_of_the_day_is_a_word(hour: int, word: str) -> None:
    assert period(START.replace(hour=hour)) == word


def test_the_offer_asks_with_the_period_the_relationship_and_at_most_three_untold_things() -> None:
    a, b = agents()
    now = START.replace(hour=15, minute=20)
    stream = MemoryStream(":memory:", HashEmbedder(64))
    woke = day_began(now, A.wake)
    stream.add(A.name, "the old lantern by the harbor was lit", at=woke - timedelta(hours=3), importance=9)  # before
    fresh = [f"{A.name} found a {w} in the {v}" for w, v in zip(WORDS[:6], WORDS[6:12], strict=True)]
    for i, text in enumerate(fresh):
        stream.add(A.name, text, at=woke + timedelta(minutes=10 * (i + 1)), importance=8 - i, kind="thought")
    stream.add(A.name, f"{B.name} is playing the violin", at=woke + timedelta(hours=1), importance=9)  # about B
    a.social.known[B.name] = Talked(at=(now - timedelta(hours=2)).timestamp(), lines=4,
                                   memo=f"{B.name} talked about the weather", said=[f"I found a {WORDS[0]} in the "
                                                                                     f"{WORDS[6]}!"])
    prompt = offer_messages(stream, a, b, now, "- (nothing)")[-1]["content"]
    assert "It is 15:20 (afternoon)." in prompt
    assert f"{A.name} last talked with {B.name} today at 13:20: {B.name} talked about the weather" in prompt
    things = section(prompt, untold_heading(A.name, B.name))
    assert things == fresh[1:1 + MAX_UNTOLD]  # the most important not yet told; not the one said, nor B's own doing
    assert prompt.index(A.describe()) < prompt.index("It is 15:20") < prompt.index(things[0])  # stable part first
    b.social.known.clear()
    other = offer_messages(stream, b, a, now, "- (nothing)")[-1]["content"]
    assert f"{B.name} has not talked with {A.name} yet." in other
    assert section(other, untold_heading(B.name, A.name)) == ["(nothing new)"]


@given(texts=st.lists(st.lists(st.sampled_from(WORDS), min_size=2, max_size=5, unique=True).map(" ".join),
                      min_size=1, max_size=8, unique=True),
       said=st.lists(st.integers(0, 7), max_size=5), hour=st.integers(0, 23))
@settings(max_examples=30, deadline=None)
def test_an_offer_never_lists_what_was_told_to_the_other(texts: list[str], said: list[int], hour: int) -> None:
    a, b = agents()
    now = START.replace(hour=hour, minute=30)
    stream = MemoryStream(":memory:", HashEmbedder(32))
    woke = day_began(now, A.wake)
    for i, text in enumerate(texts):
        stream.add(A.name, text, at=min(now, woke + timedelta(minutes=i)), importance=1 + i % 9)
    told_lines = [texts[i] for i in said if i < len(texts)]
    a.social.known[B.name] = Talked(at=now.timestamp() - 60, said=[t.upper() + "!" for t in told_lines])
    listed = untold(stream, a, B.name, now)
    assert len(listed) <= MAX_UNTOLD
    assert not set(listed) & set(told_lines)
    assert all(told(t, [t.upper() + "!"], A.name) for t in texts)  # case and punctuation do not hide a retelling
    prompt = offer_messages(stream, a, b, now, "- (nothing)")[-1]["content"]
    assert f"({period(now)})" in prompt and len(section(prompt, untold_heading(A.name, B.name))) <= MAX_UNTOLD


def test_after_a_conversation_the_next_offer_knows_how_it_went_and_what_was_said() -> None:
    """Two agents who share a day talk (offline rules); each keeps what it said and its memo, and its next
    offer to the other says when they talked and lists nothing it said there."""
    pair = [A, B.model_copy(update={"home": A.home, "wake": A.wake, "routine": A.routine,
                                    "relationships": {A.name: "friend"}})]
    stream = MemoryStream(":memory:", HashEmbedder(128))
    stream.add(A.name, f"{A.name} is organising a {WORDS[4]} at the {WORDS[13]} on Saturday at 3pm",
               at=START - timedelta(hours=1), importance=9, kind="thought")
    sim = Simulation(TOWN, pair, stream, OfflineChatModel(), EventLog(None), start=START)
    sim.run(START + timedelta(hours=3))
    a, b = sim.agents[A.name], sim.agents[pair[1].name]
    talk = a.social.known[b.name]
    assert talk.lines >= 2 and talk.said and talk.memo and b.social.known[a.name].said
    assert a.social.offers.made + b.social.offers.made >= 1
    now = START + timedelta(hours=3)
    prompt = offer_messages(stream, a, b, now, "- (nothing)")[-1]["content"]
    assert f"{a.name} last talked with {b.name} today at " in prompt and talk.memo in prompt
    assert not any(told(t, talk.said, a.name) for t in section(prompt, untold_heading(a.name, b.name))
                   if t != "(nothing new)")


# -- the social state ---------------------------------------------------------------------------

_names = st.text(min_size=1, max_size=10)
_talks = st.builds(Talked, at=st.floats(0, 4e9, allow_nan=False), lines=st.integers(0, 16), memo=st.text(max_size=20),
                   said=st.lists(st.text(max_size=20), max_size=4))
_offers = st.builds(Offers, made=st.integers(0, 99), accepted=st.integers(0, 99), declined=st.integers(0, 99),
                    busy=st.integers(0, 99))


@given(social=st.builds(Social, cooldown=st.dictionaries(_names, st.floats(0, 4e9, allow_nan=False), max_size=3),
                        known=st.dictionaries(_names, _talks, max_size=3), offers=_offers))
@settings(max_examples=50, deadline=None)
def test_the_social_state_goes_through_json_and_back(social: Social) -> None:
    state = json.loads(json.dumps(social.get_state()))
    assert "last_talks" in state and "known" not in state and set(state["offers"]) == {"made", "accepted",
                                                                                         "declined", "busy"}
    again = Social()
    again.set_state(state)
    assert again == social


def test_an_old_checkpoint_without_last_talks_or_offers_still_loads() -> None:
    a, _ = agents()
    a.social.known["x"] = Talked(at=5.0, said=["hi"])
    a.social.offers.made = 3
    old = {k: v for k, v in a.get_state().items() if k not in ("last_talks", "offers")}
    assert Agent.state_problem(old) is None
    fresh, _ = agents()
    fresh.set_state(old)
    assert fresh.social.known == {} and fresh.social.offers == Offers()
    assert Agent.state_problem({**old, "offers": None}) is not None  # damaged, not old: refused


def test_said_lines_are_kept_to_the_newest() -> None:
    from memstream.sim.agents.agent import MAX_SAID

    social = Social()
    for i in range(MAX_SAID):
        social.talked("x", float(i), [f"line {i}a", f"line {i}b"], 4)
    assert len(social.known["x"].said) == MAX_SAID and social.known["x"].said[-1] == f"line {MAX_SAID - 1}b"


# -- metrics.json -------------------------------------------------------------------------------

@pytest.mark.slow
def test_an_offline_run_counts_its_offers_and_a_resumed_one_counts_the_same(tmp_path: Path) -> None:
    config = RunConfig(agents=4, start=START, hours=4, embedder="hash")
    metrics = start_run(config, tmp_path / "whole", progress=False).metrics
    offers = metrics["conversation_offers"]
    assert offers["made"] == metrics["usage"][sp.START_PURPOSE]["calls"] > 0  # one question per offer
    assert offers["made"] == offers["accepted"] + offers["declined"] + offers["busy"]
    started = sum(e["action"].startswith("starts a conversation") for e in RunDir.open(tmp_path / "whole").records.events())
    assert offers["accepted"] == started and offers["accept_rate"] == round(started / offers["made"], 4)
    assert json.loads((tmp_path / "whole" / "metrics.json").read_text())["conversation_offers"] == offers
    start_run(config.model_copy(update={"hours": 2}), tmp_path / "half", progress=False)
    resumed = resume_run(tmp_path / "half", hours=4, progress=False).metrics
    assert resumed["conversation_offers"] == offers  # the counts are in the checkpointed agents


# -- interviews ---------------------------------------------------------------------------------

def test_an_interview_shows_the_recent_day_beside_what_the_question_retrieves() -> None:
    from memstream.testing import ScriptedChat

    stream = MemoryStream(":memory:", HashEmbedder(64))
    now = START.replace(hour=16)
    woke = day_began(now, A.wake)
    stream.add(A.name, f"{A.name} played the {WORDS[2]} yesterday", at=woke - timedelta(hours=5), importance=9)
    today = [f"{A.name} saw a {w}" for w in WORDS[:12]]
    for i, text in enumerate(today):
        stream.add(A.name, text, at=woke + timedelta(minutes=20 * i), importance=2 + i % 7)
    chat = ScriptedChat({sp.INTERVIEW_PURPOSE: lambda m: "I had a busy day."})
    answer, shown = run_direct(interview_stage(stream, A, "What did you do?", now), chat)
    prompt = chat.calls[-1][1][-1]["content"]
    day = section(prompt, sp.RECENT_DAY_HEADING)
    assert answer == "I had a busy day." and 0 < len(day) <= 10
    assert all(line.split(" ", 1)[1] in today for line in day)  # today's, each with its time
    assert day == sorted(day)  # in time order
    assert prompt.index(sp.RECENT_DAY_HEADING) < prompt.index(f"What {A.name} remembers:") < prompt.index(
        "Interviewer: What did you do?")  # the same for every question, before what changes
    ids = [m.id for m in shown]
    assert len(ids) == len(set(ids)) and {m.text for m in recent_day(stream, A.name, now, woke, k=10)} <= {
        m.text for m in shown}
    empty = MemoryStream(":memory:", HashEmbedder(64))
    run_direct(interview_stage(empty, A, "What did you do?", now), chat)
    assert sp.RECENT_DAY_HEADING not in chat.calls[-1][1][-1]["content"]


# -- repeated answers ----------------------------------------------------------------------------

_sentence = st.lists(st.sampled_from(WORDS), min_size=3, max_size=8, unique=True).map(" ".join)


@pytest.mark.slow
@given(answer=_sentence, q1=_sentence, q2=_sentence, other=_sentence)
def test_the_same_answer_to_two_different_questions_is_flagged(answer: str, q1: str, q2: str, other: str) -> None:
    assume(not same(words(q1), words(q2)) and not same(words(q1), words("something else entirely")))
    flags = flag_repeats([(q1, answer), (q2, answer.upper() + "."), ("something else entirely", other)])
    assert flags[:2] == [True, True]
    assert flags[2] == (len(set(answer.split()) & set(other.split())) >= 0.8 * len(set(answer.split())
                                                                                   | set(other.split())))


@pytest.mark.slow
@given(answers=st.lists(_sentence, min_size=1, max_size=6))
def test_answers_with_no_words_in_common_never_repeat(answers: list[str]) -> None:
    disjoint = [" ".join(f"{w}{i}" for w in a.split()) for i, a in enumerate(answers)]  # each its own words
    assert flag_repeats([(f"question {i}", a) for i, a in enumerate(disjoint)]) == [False] * len(answers)


@given(answer=_sentence, question=_sentence, n=st.integers(2, 4))
def test_asking_the_same_question_again_is_not_a_repeat(answer: str, question: str, n: int) -> None:
    assert flag_repeats([(question, answer)] * n) == [False] * n
    assert flag_repeats([(question, None), ("another question", None)]) == [False, False]


@pytest.mark.slow
@given(pairs=st.lists(st.tuples(_sentence, st.sampled_from([None, "I like the river.", "i like the river"])),
                      max_size=6))
def test_flags_follow_their_answers_in_any_order(pairs: list[tuple[str, str | None]]) -> None:
    flags = flag_repeats(pairs)
    assert flag_repeats(pairs[::-1]) == flags[::-1] and repeat_count(pairs) == sum(flags)


def test_a_nearly_same_answer_repeats_and_a_different_one_does_not() -> None:
    base = "I am getting the cafe ready for the party tomorrow and baking all morning long today"
    assert flag_repeats([("What are you doing?", base), ("Who did you see?", base.replace("long", "long!"))]) == [
        True, True]
    assert flag_repeats([("What are you doing?", base), ("Who did you see?", "I saw my neighbour at the park")]) == [
        False, False]


# -- the CLI --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_interview_cli_says_how_many_answers_repeat(tmp_path: Path, capsys, monkeypatch) -> None:
    run = tmp_path / "r"
    start_run(RunConfig(agents=2, start=START, hours=1, embedder="hash"), run, progress=False)
    generate = OfflineChatModel._generate

    def scripted(self, messages, purpose, params):
        if purpose == sp.INTERVIEW_PURPOSE:
            from memstream.models.base import Completion

            asked = messages[-1]["content"].rsplit("Interviewer: ", 1)[1]
            return Completion("I keep busy at work." if "?" in asked else f"About {asked}: nothing much.")
        return generate(self, messages, purpose, params)

    monkeypatch.setattr(OfflineChatModel, "_generate", scripted)
    agent = A.name
    monkeypatch.setattr("sys.stdin", io.StringIO("Who are you?\nWhat do you do?\nTell me more\n\n"))
    assert main(["interview", str(run), "--agent", agent]) == 0
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1] == "2 of 3 answers repeat an answer to another question"
    monkeypatch.setattr("sys.stdin", io.StringIO("Tell me about mornings\nTell me about evenings\n\n"))
    assert main(["interview", str(run), "--agent", agent]) == 0
    assert "repeat an answer" not in capsys.readouterr().out
    out = tmp_path / "a.json"
    assert main(["interview", str(run), "--agent", agent, "--questions", "bundled", "--json", str(out)]) == 0
    answers = json.loads(out.read_text())
    assert all("repeats" in a for a in answers) and sum(a["repeats"] for a in answers) == repeat_count(
        [(a["question"], a.get("answer")) for a in answers])


def test_the_offer_asks_for_a_reason_before_the_decision() -> None:
    """A small model asked for the decision alone declined every offer; its reason comes first, and an answer
    cut off after the reason (no decision) is not read as one."""
    system = sp.start_messages("id", "A", "B", "09:00", "morning", "reading", "home", "cooking", "", "", [])[0]
    assert system["content"].index('"reason"') < system["content"].index('"talk"')
    assert parse_talk('{"reason": "They know each other and both are free.", "talk": true}') is True
    assert parse_talk('```json\n{"reason": "It is late.", "talk": false}\n```') is False
    assert parse_talk('{"talk": true}') is True  # a decision without its reason still counts
    with pytest.raises(StructuredOutputError):
        parse_talk('{"reason": "They know each other and both are')
