"""The example scenarios (memstream/examples/cove_*.yaml) run offline, each with the outcome a rule-following
agent would reach: one scenario for each class of issue #40, in a harbour town of their own
(memstream/examples/kestrel_cove.yaml: other people, places, events and wordings than the bundled ones).

Each runs in process as ``memstream run --scenario FILE`` would (the town, the agents, the whispers, the
offline stand-in), with the hash embedder; the visit scenario also runs through the command line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.planning import Stroke
from memstream.reflection import maybe_reflect
from memstream.sim.agents.whisper import Whisper
from memstream.sim.analysis import measures
from memstream.sim.engine import Simulation
from memstream.sim.events import Event, EventLog
from memstream.sim.run.rundir import RunDir
from memstream.sim.run.scenario import Scenario, load_scenario
from memstream.sim.talk.conversation import TALK_RULES
from memstream.sim.town.world import load_town
from memstream.spoken_times import sun
from memstream.stream import PLAN, REFLECTION, MemoryStream

EXAMPLES = Path(__file__).parents[2] / "memstream" / "examples"
ANJALI, MAREK, FELIX, OSKAR, RUTH, WEN = ("Anjali Bose", "Marek Szabo", "Felix Ambrose", "Oskar Lindqvist",
                                          "Ruth Okonkwo", "Wen Hartley")
#: The places each scenario's whispers name: every one a building of the town.
NAMED = {"cove_sundown": ["Cliff Top Meadow"], "cove_moved": ["Seafarers' Hall"],
         "cove_rumour": ["Quayside Chandlery"], "cove_past": ["Seafarers' Hall", "Lantern Inn"],
         "cove_denial": ["Quayside Chandlery"], "cove_reflect": ["Seafarers' Hall", "Lantern Inn"],
         "cove_visit": []}


@dataclass
class Ran:
    sim: Simulation
    stream: MemoryStream
    events: list[Event]
    scenario: Scenario

    def appointments(self, who: str) -> list[Stroke]:
        """The appointments of ``who``'s latest plan."""
        plan = self.sim.agents[who].mind.plan
        assert plan is not None
        return [s for s in plan.strokes if s.appointment]

    def where(self, who: str, hhmm: str) -> str | None:
        """Where the event log puts ``who`` at ``hhmm`` on the first day."""
        day = f"{self.scenario.start:%Y-%m-%d}"
        at = [e for e in self.events if e["agent"] == who and e["time"][:10] == day and e["time"][11:16] <= hhmm]
        return at[-1]["location"] if at else None

    def holds(self, who: str, *words: str) -> bool:
        """Whether any of ``who``'s memories (not its plans) holds every one of ``words``."""
        return any(all(w.lower() in m.text.lower() for w in words) for m in self.stream.memories(who)
                   if m.kind != PLAN)


def scenario(name: str) -> Scenario:
    return load_scenario(str(EXAMPLES / f"{name}.yaml"))


def simulate(name: str, talk_rules: int = TALK_RULES) -> Ran:
    """The scenario run to its end, offline, in memory."""
    sc = scenario(name)
    assert sc.town is not None
    town = load_town(sc.town)
    residents = town.residents[: sc.agents or len(town.residents)]
    whispers = [Whisper(id=i, agent=w.agent, text=w.text, at=w.at or sc.start) for i, w in enumerate(sc.whispers, 1)]
    stream = MemoryStream(":memory:", HashEmbedder(256))
    events = EventLog(None)
    sim = Simulation(town, residents, stream, OfflineChatModel(sc.seed), events, start=sc.start, whispers=whispers,
                     seed=sc.seed, talk_rules=talk_rules)
    sim.seed_memories()
    sim.run(sc.start + timedelta(hours=sc.hours))
    return Ran(sim, stream, events.memory, sc)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_each_example_loads_and_names_only_places_of_its_town(name: str) -> None:
    sc = scenario(name)
    assert sc.town is not None
    town = load_town(sc.town)
    buildings = {b.name for a in town.areas for b in a.buildings}
    residents = {r.name for r in town.residents[: sc.agents or len(town.residents)]}
    assert {w.agent for w in sc.whispers} <= residents
    for place in NAMED[name]:
        assert place in buildings and any(place in w.text for w in sc.whispers), place
    bundled = load_town(Path(__file__).parents[2] / "memstream" / "sim" / "data" / "smallville.yaml")
    theirs = {r.name.split()[-1] for r in bundled.residents} | {b.name for a in bundled.areas for b in a.buildings}
    assert not theirs & ({r.name.split()[-1] for r in town.residents} | buildings)  # none of the bundled town's


def test_times_said_in_words_the_organiser_and_the_told_plan_and_attend_at_sundown() -> None:
    ran = simulate("cove_sundown")
    sunset = sun(date(2025, 4, 10))[1]
    at = f"{sunset // 60:02d}:{sunset % 60:02d}"
    [hers] = ran.appointments(ANJALI)
    [his] = ran.appointments(MAREK)  # told at the chandlery
    assert (hers.time, hers.location) == (his.time, his.location) == (at, "Cliff Top Meadow")
    assert "sundown" in hers.reading and at in hers.reading  # the reading is the plan's provenance
    later = f"{(sunset + 15) // 60:02d}:{(sunset + 15) % 60:02d}"
    assert ran.where(ANJALI, later) == ran.where(MAREK, later) == "Cliff Top Meadow"


def test_a_correction_supersedes_the_auction_is_at_three_and_not_at_noon() -> None:
    ran = simulate("cove_moved")
    [auction] = [s for s in ran.appointments(OSKAR) if "auction" in s.activity]
    assert (auction.time, auction.location) == ("15:00", "Seafarers' Hall")
    assert ran.where(OSKAR, "12:15") != "Seafarers' Hall"  # at lunch, not at the old time
    assert ran.where(OSKAR, "15:15") == "Seafarers' Hall"


def test_weight_of_news_an_ordinary_rumour_reaches_some_not_none_not_all() -> None:
    ran = simulate("cove_rumour")
    knew = {n for n in ran.sim.agents if ran.holds(n, "Quayside Chandlery", "shutting down")}
    assert FELIX in knew and 1 < len(knew) < len(ran.sim.agents)


def test_staleness_a_past_event_is_not_retold_while_fresh_news_is() -> None:
    ran = simulate("cove_past")
    assert ran.holds(FELIX, "lifeboat open day")  # it stays in memory
    assert [n for n in ran.sim.agents if n != FELIX and ran.holds(n, "lifeboat open day")] == []
    assert not [s for s in ran.appointments(FELIX) if "lifeboat" in s.activity]  # and drives no plan
    assert [n for n in ran.sim.agents if n != FELIX and ran.holds(n, "Lantern Inn", "brewery")]


def test_measures_read_negation_a_rumour_and_its_denial_are_counted_apart(tmp_path: Path) -> None:
    out = tmp_path / "denial"
    assert main(["run", "--scenario", str(EXAMPLES / "cove_denial.yaml"), "--embedder", "hash",
                 "--out", str(out)]) == 0
    run = RunDir.open(out)
    rumour = measures.knowers(run, "Quayside Chandlery is shutting down")
    denial = measures.knowers(run, "Quayside Chandlery is not shutting down")
    whispered = {m.owner: m.id for _, m in measures.memories(run) if m.metadata.get("whisper")}
    said = lambda found: {m.id for ms in found.values() for m in ms}  # noqa: E731
    assert whispered[FELIX] in said(rumour) and whispered[FELIX] not in said(denial)
    assert whispered[ANJALI] in said(denial) and whispered[ANJALI] not in said(rumour)
    assert len(rumour) > 1 and len(denial) > 1  # each passed on, each its own fact


def test_reflection_cites_one_statement_the_talk_and_never_a_stitched_shanty_night() -> None:
    ran = simulate("cove_reflect")
    end = ran.scenario.start + timedelta(hours=ran.scenario.hours)
    maybe_reflect(ran.stream, WEN, end, chat=OfflineChatModel(), threshold=0)
    insights = [m.text for m in ran.stream.memories(WEN) if m.kind == REFLECTION]
    assert any("tide-table talk" in t and "Seafarers' Hall" in t and "2 times" in t for t in insights), insights
    assert not any("shanty night" in t and "Lantern Inn" in t for t in insights), insights


def test_an_agent_with_news_seeks_the_person_it_concerns() -> None:
    ran = simulate("cove_visit")
    [visit] = ran.appointments(RUTH)
    assert (visit.activity, visit.location, visit.minutes) == (f"visit {OSKAR}", "Harbour Office", 30)
    assert "harbour master" in visit.why and OSKAR in visit.why  # why him: the news names his occupation
    assert "07:00" <= visit.time < "12:00"  # in his working hours there, by his routine
    calls = [e for e in ran.events if e["agent"] == RUTH and e["action"].startswith(f"calls on {OSKAR}")]
    assert calls and calls[0]["location"] == "Harbour Office"
    assert ran.holds(OSKAR, "flu", "trawlers")  # the visit told him
    before = simulate("cove_visit", talk_rules=2)  # the rules before visits: the two never meet
    assert not [s for s in before.appointments(RUTH) if s.activity.startswith("visit")]
    assert not before.holds(OSKAR, "flu", "trawlers")


def test_a_visit_is_bounded_and_in_the_plan_the_command_line_writes(tmp_path: Path) -> None:
    out = tmp_path / "visit"
    assert main(["run", "--scenario", str(EXAMPLES / "cove_visit.yaml"), "--embedder", "hash",
                 "--out", str(out)]) == 0
    run = RunDir.open(out)
    plans = [m for _, m in measures.memories(run) if m.kind == PLAN and "plan" in m.metadata]
    visits = [s for m in plans for s in m.metadata["plan"]["strokes"] if s.get("why")]
    assert visits and all(s["cites"] for s in visits)  # an appointment resting on the news it tells
    per_day: dict[tuple[str, str], int] = {}
    for m in plans:
        key = (m.owner, m.metadata["plan"]["day"])
        per_day[key] = max(per_day.get(key, 0), sum(bool(s.get("why")) for s in m.metadata["plan"]["strokes"]))
    assert max(per_day.values()) <= 2  # VISITS_PER_DAY
    lines = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert any(e["action"].startswith("calls on") for e in lines)
    assert datetime.fromisoformat(lines[-1]["time"]) <= run.config.start + timedelta(hours=5, minutes=1)


def test_whom_news_concerns_is_read_from_the_town_never_the_one_whose_doings_it_tells() -> None:
    from memstream.sim.agents.agent import Agent, Body, Social, Visit
    from memstream.sim.talk.visits import concern

    sc = scenario("cove_visit")
    assert sc.town is not None
    people = {r.name: Agent(r, Body(r.home)) for r in load_town(sc.town).residents}
    oskar, anjali = people[OSKAR], people[ANJALI]
    assert concern("the harbour masters are to meet the ferry", oskar) == (
        ("Harbour Office", "Larch Row"), "the news names Oskar Lindqvist's occupation (harbour master)")
    assert concern("a leak was found under the Quayside Chandlery", anjali) == (
        ("Quayside Chandlery",), "the news names Quayside Chandlery, where Anjali Bose works")
    assert concern("Felix Ambrose told Ruth Okonkwo that Oskar's boat has broken its mooring", oskar) is not None
    assert concern("Oskar Lindqvist is retiring at midsummer", oskar) is None  # his own news
    assert concern("Felix Ambrose told Ruth Okonkwo that Anjali Bose is selling the Quayside Chandlery",
                   anjali) is None
    assert concern("the ferry is late again", oskar) is None
    social = Social(visits=[Visit(start=1.0, end=2.0, place="Harbour Office", persons=[OSKAR], news="x", memory=3)])
    again = Social()
    again.set_state(json.loads(json.dumps(social.get_state())))  # a checkpoint keeps the day's visits
    assert again.visits == social.visits


def test_a_visitor_tells_what_it_came_to_tell_first_the_listener_as_you() -> None:
    from memstream.sim.talk import prompts
    from memstream.sim.talk.offline import answer_turn

    messages = prompts.turn_messages("Name: x", RUTH, OSKAR, "07:05", "Harbour Office", "", "- (nothing)",
                                     "(nothing yet)", "Felix Ambrose told Ruth Okonkwo that Oskar Lindqvist's "
                                     "mooring fees are going up")
    line = json.loads(answer_turn(messages))["utterance"]
    assert "your mooring fees are going up" in line and "Felix Ambrose told" not in line
