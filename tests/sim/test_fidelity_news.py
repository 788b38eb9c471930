"""Fidelity of the offline town's news, on a town of its own (not the bundled one): how much news weighs,
that an agent's fresh news is what it recalls to tell, that whom one talks with is bounded by a day's
attention, that an insight's event comes from one statement, and that measures and answers read negation,
tags and persons. Each scenario uses other names, places and wordings than the bundled town's."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from memstream.models import HashEmbedder, OfflineChatModel, one_line
from memstream.planning import RoutineItem
from memstream.reflection import prompts as reflection_prompts
from memstream.reflection.parse import parse_insights
from memstream.sim.analysis import measures
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.talk import conversation, prompts
from memstream.sim.talk.offline import answer_interview, answer_turn, in_my_words
from memstream.sim.town.world import Area, Building, Resident, Town
from memstream.stream import DIALOGUE, OBSERVATION, THOUGHT, MemoryStream
from memstream.stream.offline import rate_poignancy

TZ = timezone(timedelta(hours=1))
START = datetime(2024, 10, 7, 8, tzinfo=TZ)
HALL = "Tidewater Hall"
RUMOUR = "Dev Rao heard a rumour that the Quay Bakery is shutting for good at the end of the month"
DENIAL = "Dev Rao says the Quay Bakery is not shutting after all"


def town(names: list[str]) -> Town:
    """Everyone lives and works in one hall (so they meet), a net loft beside it."""
    residents = [Resident(name=n, age=40, occupation="fisher", home=HALL, workplace=HALL, wake="07:00", sleep="22:00",
                          routine=[RoutineItem(time="08:00", activity="mend nets", location=HALL)]) for n in names]
    return Town(name="Brackwater", areas=[Area(name="Quayside", buildings=[
        Building(name=HALL, x=0, y=0), Building(name="Net Loft", x=1, y=0)])], residents=residents)


def listed(memories: list[tuple[str, int, str]]) -> str:
    return "\n".join(f"- ({kind}, importance {i}) {one_line(text)}" for kind, i, text in memories)


def first_line(name: str, other: str, memories: list[tuple[str, int, str]]) -> str:
    messages = prompts.turn_messages("Name: x", name, other, "10:00", HALL, "", listed(memories), "(nothing yet)")
    return json.loads(answer_turn(messages))["utterance"]


def test_ordinary_local_news_weighs_more_than_routine_and_is_passed_on_relative_to_what_one_knows() -> None:
    routine = [("observation", 2, "the kettle is humming"), ("observation", 3, "Mira Solberg is eating lunch"),
               ("observation", 1, "the net loft door is closed")]
    assert rate_poignancy(RUMOUR) > rate_poignancy("Dev Rao is mending a net") >= 1
    assert rate_poignancy(DENIAL) > rate_poignancy("Dev Rao is eating lunch")
    quiet = first_line("Dev Rao", "Mira Solberg", [("thought", rate_poignancy(RUMOUR), RUMOUR), *routine])
    assert "Quay Bakery is shutting" in quiet  # a quiet agent passes the rumour on
    weighty = [("thought", 9, "Dev Rao's brother died at sea"), ("thought", 9, "Dev Rao's niece got engaged"),
               ("thought", 9, "Dev Rao was elected harbour master"), ("thought", 9, "Dev Rao's boat was stolen")]
    busy = first_line("Dev Rao", "Mira Solberg", [("thought", rate_poignancy(RUMOUR), RUMOUR), *weighty, *routine])
    assert "Quay Bakery" not in busy  # one full of weightier news tells that first, not the rumour


def test_an_agents_fresh_news_is_what_it_recalls_to_tell_not_old_memories_of_the_listener() -> None:
    names = ["Oona Pell", "Tobias Kell"]
    stream = MemoryStream(":memory:", HashEmbedder(256))
    for day in range(30, 10, -1):  # weeks of weighty memories naming the listener
        for hour in (9, 13, 17):
            stream.add(names[0], f"Tobias Kell argued with Oona Pell about the harbour fees on day {day} at {hour}",
                       at=START - timedelta(days=day, hours=-hour + 8), importance=6, kind=THOUGHT)
    news = "a storm surge warning has closed the Fennick ferry slipway to everyone until the weekend"
    stream.add(names[0], news, at=START - timedelta(minutes=30), importance=7, kind=THOUGHT)
    sim = Simulation(town(names), town(names).residents, stream, OfflineChatModel(), EventLog(None), start=START)
    sim.run(START + timedelta(hours=2))
    heard = " ".join(m.text for m in stream.memories(names[1]) if m.kind == DIALOGUE)
    assert "Fennick ferry slipway" in heard


@pytest.mark.slow
def test_whom_an_agent_talks_with_in_a_day_is_bounded_by_its_attention() -> None:
    names = ["Ada Quill", "Bram Hesk", "Cora Wynd", "Dai Morrow", "Edda Sorn", "Finn Loach", "Gwen Tarr",
             "Hal Brice", "Isla Venn", "Jory Pask"]
    stream = MemoryStream(":memory:", HashEmbedder(128))
    sim = Simulation(town(names), town(names).residents, stream, OfflineChatModel(), EventLog(None), start=START)
    sim.run(START + timedelta(hours=12))
    partners = {n: {o for o, t in sim.agents[n].social.known.items() if t.at} for n in names}
    assert any(partners.values())  # they talk
    bound = getattr(conversation, "ATTENTION_PER_DAY", 6)  # (the code before it had none: 6 shows it)
    assert all(len(p) <= bound for p in partners.values())  # but not with everyone in the hall


def test_an_agent_with_news_about_someone_is_likelier_to_approach_them() -> None:
    names = ["Ada Quill", "Bram Hesk", "Cora Wynd"]
    stream = MemoryStream(":memory:", HashEmbedder(128))
    stream.add(names[0], "Cora Wynd's boat has been sold to pay the harbour debts", at=START, importance=7,
               kind=THOUGHT)
    sim = Simulation(town(names), town(names).residents, stream, OfflineChatModel(), EventLog(None), start=START)
    talk: conversation.Conversations = sim.talk
    weights = talk._weights(sim.agents[names[0]], names[1:], START + timedelta(minutes=5))
    assert weights[1] > weights[0]
    drawn = [talk.approached(names[0], names[1:], float(t), weights) for t in range(200)]
    assert drawn.count(names[2]) > drawn.count(names[1])


def test_an_insight_takes_an_event_from_one_statement_never_stitched_from_several_lines() -> None:
    owner = "Pia Lund"
    stitched = [f"Conversation with Ravi Okoro: Ravi Okoro: I will be at the Old Ropeworks tonight. {owner}: Nice. "
                "Ravi Okoro: The lantern walk is on 3 March at 4 pm.",
                f"Conversation with Sol Berg: Sol Berg: I was at the Old Ropeworks today. {owner}: Good. "
                "Sol Berg: The lantern walk is on 3 March at 4 pm."]
    chat = OfflineChatModel()
    answer = chat.complete(reflection_prompts.insights_messages(owner, stitched),
                           purpose=reflection_prompts.INSIGHTS_PURPOSE)
    assert not any("has heard of" in i.insight for i in parse_insights(answer))
    said = [f"Ravi Okoro told {owner} that the lantern walk is at the Old Ropeworks on 3 March at 4 pm",
            f"Sol Berg told {owner} that the lantern walk is at the Old Ropeworks on 3 March at 4 pm"]
    answer = chat.complete(reflection_prompts.insights_messages(owner, said), purpose=reflection_prompts.INSIGHTS_PURPOSE)
    assert any("Old Ropeworks at 16:00" in i.insight for i in parse_insights(answer))


def test_a_fact_and_its_denial_are_counted_apart() -> None:
    closing, denial = "Quay Bakery is shutting", "Quay Bakery is not shutting"
    heard_rumour, heard_denial = "Mira heard the Quay Bakery is shutting.", "Dev says the Quay Bakery is not shutting."
    mentions, states = measures.mentions, measures.states
    rumour_terms, denial_terms = mentions(["quay", "bakery", "shutting"]), mentions(["quay", "bakery", "shutting"])
    assert states(heard_rumour, rumour_terms, denied=False) and not states(heard_denial, rumour_terms, denied=False)
    assert states(heard_denial, denial_terms, denied=True) and not states(heard_rumour, denial_terms, denied=True)
    assert closing != denial


def test_an_interview_answers_in_the_agents_words_without_dialogue_tags() -> None:
    name = "Mira Solberg"
    memories = [(DIALOGUE, 6, f"Conversation with Dev Rao:\nDev Rao: Hi Mira! Did you hear? The Quay Bakery is not "
                              f"shutting after all.\n{name}: Oh, I didn't know that. Nothing new with me."),
                (OBSERVATION, 2, "Dev Rao is mending a net")]
    messages = prompts.interview_messages(f"Name: {name}", name, listed(memories), "Is the Quay Bakery shutting?")
    answer = answer_interview(messages)
    assert "Quay Bakery is not shutting" in answer
    assert "Dev Rao:" not in answer and f"{name}:" not in answer and "Conversation with" not in answer


def test_a_retold_statement_keeps_its_persons_straight() -> None:
    said = in_my_words("Nora Vance is getting the neighbours to sign a letter and she is asking the council", "Nora Vance")
    assert not ("I am" in said and "she is" in said)  # never "I ... she" for one person
    assert in_my_words("Nora Vance is getting the neighbours to sign a letter", "Nora Vance").startswith("I am")
