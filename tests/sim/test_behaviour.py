"""The loop that makes agents interesting: what an agent hears and does changes what it plans.

One test per link: its own actions are memories; a conversation is rated by the model and leaves
a memo and a planning thought that cite it; an invitation heard for later today becomes an
appointment in the plan, and one for tomorrow is placed by the next morning's plan, which cites
the morning's revision of the agent's situation; conversations draw on a relationship built from
memory and never repeat another agent's memories word for word.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.offline_events import commitment
from memstream.sim import RunConfig, start_run
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.talk import prompts
from memstream.sim.town.world import default_town_path, load_town
from memstream.stream import DIALOGUE, THOUGHT, MemoryStream
from memstream.testing import ScriptedChat

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
HOST, GUEST = "Isabella Rodriguez", "Maria Lopez"


def pair_run(fact: str, hours: float, chat=None) -> tuple[Simulation, MemoryStream]:
    """The host and a friend who keeps the host's hours (so they meet), the host knowing ``fact``."""
    town = load_town(default_town_path())
    host, guest = (next(r for r in town.residents if r.name == n) for n in (HOST, GUEST))
    guest = guest.model_copy(update={"home": host.home, "wake": host.wake, "routine": host.routine,
                                     "relationships": {HOST: "friend"}})
    chat = chat or OfflineChatModel()
    stream = MemoryStream(":memory:", HashEmbedder(256))
    stream.add(HOST, fact, at=START - timedelta(hours=1), importance=8, kind=THOUGHT)
    sim = Simulation(town, [host, guest], stream, chat, EventLog(None), start=START)
    sim.run(START + timedelta(hours=hours))
    return sim, stream


def cites_chain(stream: MemoryStream, owner: str, memory_id: int) -> list[str]:
    """The kinds met following citations from a memory down to the memories with none."""
    kinds, frontier = [], [memory_id]
    while frontier:
        m = stream.get(owner, frontier.pop())
        kinds.append(m.kind)
        frontier.extend(m.cites)
    return kinds


def test_an_agents_own_actions_are_memories_citing_its_plan() -> None:
    sim, stream = pair_run("Isabella Rodriguez is tired", 1.5)
    own = [m for m in stream.memories(HOST) if m.metadata.get("own")]
    assert len(own) >= 3 and all(m.kind == "observation" and m.text.startswith(f"{HOST} is ") for m in own)
    assert any(m.cites and stream.get(HOST, m.cites[0]).kind == "plan" for m in own)
    assert len(own) < 20  # 540 steps, an action of 5-15 minutes: written when the action changes, not each step


def test_a_conversation_is_rated_by_the_model_and_leaves_a_memo_and_a_planning_thought() -> None:
    chat = ScriptedChat({prompts.POIGNANCY_PURPOSE: lambda _: "9"})
    sim, stream = pair_run("Isabella Rodriguez is tired", 1.5, chat)
    asked = [messages for purpose, messages in chat.calls if purpose == prompts.POIGNANCY_PURPOSE]
    dialogues = [m for m in stream.memories(GUEST) if m.kind == DIALOGUE]
    assert asked and dialogues and all(m.importance == 9 for m in dialogues)
    thoughts = [m for m in stream.memories(GUEST) if m.kind == THOUGHT]
    memos = [m for m in thoughts if m.metadata.get("memo")]
    planning = [m for m in thoughts if m.metadata.get("planning")]
    assert memos and planning and all(m.text.startswith(prompts.PLANS_PREFIX) for m in planning)
    assert all(stream.get(GUEST, m.cites[0]).kind == DIALOGUE for m in memos + planning)


@pytest.mark.slow
def test_an_invitation_for_later_today_becomes_an_appointment_citing_the_dialogue() -> None:
    invitation = "Isabella Rodriguez is hosting a book club at The Willows Market and Pharmacy today from 4 to 5 pm"
    sim, stream = pair_run(invitation, 11)
    plan = sim.agents[GUEST].mind.plan
    [stroke] = [s for s in plan.strokes if s.appointment]
    assert (stroke.time, stroke.minutes, "book club" in stroke.activity) == ("16:00", 60, True)
    assert "dialogue" in cites_chain(stream, GUEST, stroke.cites[0])  # thought -> dialogue
    block = plan.block_at(START.replace(hour=16, minute=30))
    assert block.location == "The Willows Market and Pharmacy"
    assert plan.block_at(START.replace(hour=17, minute=30)).activity != stroke.activity  # it ends at 17:00
    assert sim.agents[GUEST].body.location == "The Willows Market and Pharmacy"  # she went (the run ends 17:00)


@pytest.mark.slow
def test_an_invitation_for_tomorrow_is_in_the_next_days_plan_which_cites_its_revision() -> None:
    invitation = "Isabella Rodriguez is throwing a party at Hobbs Cafe on February 14th from 5 to 7 pm"
    sim, stream = pair_run(invitation, 24 + 3)
    plans = [m for m in stream.memories(GUEST) if m.kind == "plan" and m.text.startswith("Plan for Tuesday")]
    assert len(plans) == 1
    day_plan = plans[0]
    kinds = [stream.get(GUEST, c).kind for c in day_plan.cites]
    assert kinds[0] == THOUGHT and "situation on the morning of" in stream.get(GUEST, day_plan.cites[0]).text
    revision = stream.get(GUEST, day_plan.cites[0])
    assert revision.cites and "party" in revision.text  # the revision rests on cited memories, the party among them
    strokes = [s for s in day_plan.metadata["plan"]["strokes"] if s.get("cites")]
    assert [(s["time"], s["location"], s["minutes"]) for s in strokes] == [("17:00", "Hobbs Cafe", 120)]
    assert "dialogue" in cites_chain(stream, GUEST, strokes[0]["cites"][0])


def test_each_line_retrieves_on_the_other_and_the_last_line_and_a_relationship_from_memory() -> None:
    chat = ScriptedChat({})
    pair_run("Isabella Rodriguez is tired", 1.5, chat)
    relationship = [m for p, m in chat.calls if p == prompts.RELATIONSHIP_PURPOSE]
    turns = [m[-1]["content"] for p, m in chat.calls if p == prompts.TURN_PURPOSE]
    assert relationship and turns
    assert all(f"{GUEST} knows {HOST}" in t or f"{HOST} knows {GUEST}" in t or "does not know" in t for t in turns)
    assert max(t.split("may matter here:\n", 1)[1].split("\n\n")[0].count("\n- ") + 1 for t in turns) > 5


def test_a_conversation_runs_to_the_reference_limit_when_no_one_says_goodbye() -> None:
    said = iter(range(10_000))
    chat = ScriptedChat({prompts.TURN_PURPOSE: lambda _: f'{{"utterance": "And another thing ({next(said)}).", '
                                                           '"end": false}'})
    _, stream = pair_run("Isabella Rodriguez is tired", 1, chat)
    lines = [m.text for m in stream.memories(GUEST) if m.kind == DIALOGUE][0].splitlines()[1:]
    assert len(lines) == prompts.MAX_TURNS == 16


def test_a_conversation_going_round_in_circles_ends() -> None:
    """A small real model repeated the same two lines until the limit; a line said before ends it."""
    chat = ScriptedChat({prompts.TURN_PURPOSE: lambda m: f"{HOST}: Any plans for Monday?"  # the format echoed
                         if f"You are {HOST}" in m[-1]["content"] else '{"utterance": "Not yet!", "end": false}'})
    _, stream = pair_run("Isabella Rodriguez is tired", 1, chat)
    lines = [m.text for m in stream.memories(GUEST) if m.kind == DIALOGUE][0].splitlines()[1:]
    assert lines == [f"{HOST}: Any plans for Monday?", f"{GUEST}: Not yet!", f"{HOST}: Any plans for Monday?"]


@pytest.mark.slow
def test_no_utterance_repeats_another_agents_memory_word_for_word(tmp_path: Path) -> None:
    start_run(RunConfig(agents=25, start=START, hours=4, embedder="hash"), tmp_path / "r", progress=False)
    stream = MemoryStream(tmp_path / "r" / "streams.db", HashEmbedder(256), readonly=True)
    said = [e["utterance"] for e in map(json.loads, (tmp_path / "r" / "events.jsonl").read_text().splitlines())
            if "utterance" in e]
    assert len(said) > 50
    for owner in stream.owners():
        for m in stream.memories(owner):
            if m.kind != DIALOGUE and len(m.text) >= 30:
                assert not any(m.text in line for line in said), (owner, m.text)


def test_run_weights_are_kept_in_the_runs_config(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert main(["run", "--agents", "2", "--hours", "0.5", "--embedder", "hash", "--weights", "rec=0.5,imp=2,rel=3",
                 "--out", str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert (config["weights"]["recency"], config["weights"]["importance"], config["weights"]["relevance"]) == (0.5, 2, 3)
    capsys.readouterr()
    assert main(["run", "--resume", str(out), "--weights", "rel=1"]) == 2
    assert "keeps the weights, ablations and gate it started with; fork it" in capsys.readouterr().err
    assert main(["run", "--weights", "rec=1,imp=x", "--hours", "1", "--out", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize(("text", "time", "place", "minutes"), [
    ("a party at Hobbs Cafe on February 14th from 5pm", "17:00", "Hobbs Cafe", None),
    ("the market at Johnson Park from 9 to 11 am on Saturday", "09:00", "Johnson Park", 120),
    ("meet at The Rose and Crown Pub at 19:30 tomorrow", "19:30", "The Rose and Crown Pub", None),
    ("go to the talk at College Library from 18:00 to 19:15 today", "18:00", "College Library", 75),
])
def test_the_offline_rules_read_an_event(text: str, time: str, place: str, minutes: int | None) -> None:
    event = commitment(text)
    assert event and (event.time, event.place, event.minutes) == (time, place, minutes)
    assert commitment("Klaus is reading at the library") is None  # no time, no event


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_the_event_reader_takes_any_text(text: str) -> None:
    event = commitment(text)
    assert event is None or (len(event.time) == 5 and event.place)
