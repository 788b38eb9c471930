"""Sense checks on plans (docs/sense-checks.md): hour blocks and decompositions kept to the agent's day,
places among the ones it knows, reactions that stay with what they react to. Each refuses the shapes a
real small model answered with, accepts good answers, feeds the one retry and is counted; the offline
rules' answers pass them all over a whole day of the bundled town."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.cli.opening import answers_note
from memstream.errors import ImplausibleAnswerError
from memstream.models import OfflineChatModel, run_direct
from memstream.planning import Identity, RoutineItem, decompose, plan_day, react_stage
from memstream.planning.answers import actions_answer, hours_answer, reaction_answer, strokes_answer
from memstream.planning.parse import ActionIn, HourIn, Reaction
from memstream.planning.places import NOWHERE, KnownPlaces, check_reaction
from memstream.planning.plan import SLEEPING, Stroke
from memstream.planning.planner import UNPLANNED, _lay_blocks
from memstream.planning.sense import SLACK_MINUTES, DayFrame, check_actions, check_hours, short_of
from memstream.sim import RunConfig, start_run
from memstream.sim.town.world import PLACES_LABEL, Resident, default_town_path, load_town
from memstream.stream import MemoryStream
from memstream.testing import ScriptedChat

TZ = timezone(timedelta(hours=-8))
DAY = datetime(2023, 2, 13, tzinfo=TZ)
SETTINGS = settings(max_examples=60, deadline=None)
KNOWN = ("Oak Hill apartments", "Hobbs Cafe", "Johnson Park", "Oak Hill College", "Dorm for Oak Hill College")
ANN = Identity(name="Ann Lee", age=40, occupation="baker", workplace="Hobbs Cafe", home="Oak Hill apartments",
               wake="06:00", sleep="22:00",
               routine=[RoutineItem(time="08:00", activity="bake bread", location="Hobbs Cafe"),
                        RoutineItem(time="12:00", activity="have lunch", location="Hobbs Cafe"),
                        RoutineItem(time="13:00", activity="serve customers", location="Hobbs Cafe"),
                        RoutineItem(time="18:00", activity="have dinner", location="Oak Hill apartments")])
STROKES = [Stroke("06:00", "wake up and get ready", "Oak Hill apartments"),
           Stroke("08:00", "bake bread", "Hobbs Cafe"), Stroke("12:00", "have lunch", "Hobbs Cafe"),
           Stroke("13:00", "serve customers", "Hobbs Cafe"), Stroke("18:00", "have dinner", "Oak Hill apartments"),
           Stroke("20:00", "read a book", "Oak Hill apartments")]
FRAME = DayFrame.of(ANN, STROKES)
PLACES = KnownPlaces(KNOWN, home="Oak Hill apartments", workplace="Hobbs Cafe")


def hours_json(pairs: list[tuple[int, str]]) -> str:
    return json.dumps({"hours": [{"hour": h, "activity": a, "location": ""} for h, a in pairs]})


def good_hours() -> list[tuple[int, str]]:
    """Every hour of Ann's day as her strokes lay it out (sleep in her night)."""
    out = []
    for h in range(24):
        hhmm = f"{h:02d}:00"
        if hhmm < ANN.wake or hhmm >= ANN.sleep:
            out.append((h, SLEEPING))
        else:
            out.append((h, [s for s in STROKES if s.time <= hhmm][-1].activity))
    return out


# -- hour blocks ----------------------------------------------------------------------------------------------


def test_hours_laid_as_the_strokes_are_accepted() -> None:
    assert len(hours_answer(hours_json(good_hours()), frame=FRAME, places=PLACES)) == 24


def test_strokes_laid_on_consecutive_hours_are_refused() -> None:
    # the real shape: a small model put one stroke per hour from 08:00 (lunch at 09:00, dinner at 11:00)
    laid = [(8 + i, s.activity) for i, s in enumerate(STROKES[1:])]
    with pytest.raises(ImplausibleAnswerError, match=r"'have lunch' at 09:00 is far .*'have lunch' at 12:00"):
        hours_answer(hours_json(laid), frame=FRAME)


def test_sleep_at_midday_is_refused_but_not_at_the_edges_of_the_night() -> None:
    day = dict(good_hours())
    with pytest.raises(ImplausibleAnswerError, match="sleep in the middle of the waking day"):
        check_hours([HourIn(hour=h, activity="sleep" if h == 12 else a) for h, a in day.items()], FRAME)
    edges = [HourIn(hour=h, activity="sleep" if h in (6, 21) else a) for h, a in day.items()]
    assert check_hours(edges, FRAME) == edges  # waking late, going to bed early: not implausible


def test_hours_out_of_order_are_refused() -> None:
    with pytest.raises(ImplausibleAnswerError, match="in order"):
        check_hours([HourIn(hour=9, activity="bake bread"), HourIn(hour=8, activity="bake bread")], FRAME)


@given(st.integers(6, 19), st.sampled_from(["have lunch", "eat lunch with a friend", "have dinner", "supper"]))
@SETTINGS
def test_a_meal_is_refused_exactly_when_it_is_far_from_every_anchor_of_it(hour: int, meal: str) -> None:
    anchors = [(12 * 60, 13 * 60)] if "lunch" in meal else [(18 * 60, 20 * 60), (18 * 60, 22 * 60)]
    far = all(max(a - (hour * 60 + 60), hour * 60 - b, 0) > SLACK_MINUTES for a, b in anchors)
    day = dict(good_hours()) | {hour: meal}
    blocks = [HourIn(hour=h, activity=a) for h, a in sorted(day.items())]
    if far:
        with pytest.raises(ImplausibleAnswerError, match="far from when the day has it"):
            check_hours(blocks, FRAME)
    else:
        assert check_hours(blocks, FRAME) == blocks


@given(st.lists(st.tuples(st.integers(0, 23), st.text("abcdefgh ", min_size=3, max_size=20)), max_size=24))
@SETTINGS
def test_activities_tied_to_no_time_are_never_refused(pairs: list[tuple[int, str]]) -> None:
    blocks = [HourIn(hour=h, activity=a) for h, a in sorted(dict(pairs).items())]
    assert check_hours(blocks, FRAME) == blocks  # no meal, no sleep, no waking: nothing to hold them to


def test_a_waking_gap_before_the_first_stroke_is_filled_from_the_routine_never_with_sleep() -> None:
    late = [Stroke("10:00", "bake bread", "Hobbs Cafe")]
    blocks = _lay_blocks(ANN, DAY, late, DAY, {})
    at = {b.start.hour: b.activity for b in blocks}
    assert at[3] == SLEEPING and at[8] == "bake bread" and at[7] == UNPLANNED  # 06-08: before the routine
    assert all(at[h] != SLEEPING for h in range(6, 22))


# -- decompositions -----------------------------------------------------------------------------------------


def actions_json(items: list[tuple[int, str]]) -> str:
    return json.dumps({"actions": [{"minutes": m, "activity": a} for m, a in items]})


def read_actions(text: str, start: int = 8 * 60, minutes: int = 60, activity: str = "bake bread",
                 **kw) -> list[ActionIn]:
    return actions_answer(text, frame=FRAME, start=start, minutes=minutes, activity=activity,
                          location="Hobbs Cafe", **kw)


def test_a_decomposition_holding_the_whole_day_is_refused() -> None:
    # the real shape: an 08:00 block with lunch at 08:25 and dinner at 08:45
    whole_day = [(10, "wake up"), (15, "bake bread"), (20, "have lunch"), (15, "have dinner")]
    with pytest.raises(ImplausibleAnswerError, match="'have lunch' at 08:25 is far"):
        read_actions(actions_json(whole_day))


def test_a_decomposition_far_from_its_minutes_is_refused_and_a_near_one_stretched_and_counted() -> None:
    with pytest.raises(ImplausibleAnswerError, match="add up to 20 minutes for a block of 60"):
        read_actions(actions_json([(10, "knead dough"), (10, "shape loaves")]))
    with pytest.raises(ImplausibleAnswerError, match="add up to 90 minutes"):
        read_actions(actions_json([(45, "knead dough"), (45, "shape loaves")]))
    near = read_actions(actions_json([(25, "knead dough"), (25, "shape loaves")]))
    assert short_of(near, 60) == "stretched" and short_of(read_actions(actions_json([(60, "bake")])), 60) is None


@given(st.lists(st.integers(1, 30), min_size=1, max_size=8), st.integers(10, 120))
@SETTINGS
def test_actions_are_refused_exactly_when_their_minutes_are_far_from_the_block(parts: list[int], minutes: int) -> None:
    actions = [ActionIn(minutes=m, activity="knead dough") for m in parts]
    if abs(sum(parts) - minutes) > max(minutes / 4, 5):
        with pytest.raises(ImplausibleAnswerError):
            check_actions(actions, FRAME, 8 * 60, minutes, "bake bread")
    else:
        assert check_actions(actions, FRAME, 8 * 60, minutes, "bake bread") == actions


def test_a_meal_inside_its_own_block_and_a_meal_block_are_accepted() -> None:
    assert read_actions(actions_json([(30, "have lunch"), (30, "chat")]), start=12 * 60, activity="have lunch")
    assert read_actions(actions_json([(60, "have lunch")]), start=11 * 60 + 30, activity="bake bread")


# -- places -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("said", "meant"), [
    ("cafe", "Hobbs Cafe"), ("the cafe", "Hobbs Cafe"), ("park", "Johnson Park"), ("home", "Oak Hill apartments"),
    ("at home", "Oak Hill apartments"), ("work", "Hobbs Cafe"), ("hobbs cafe", "Hobbs Cafe"),
    ("Hobbs Cafe counter", "Hobbs Cafe"), ("Dorm for Oak Hill College", "Dorm for Oak Hill College"), ("", "")])
def test_a_generic_place_word_is_mapped_to_the_one_known_place_it_names(said: str, meant: str) -> None:
    assert PLACES.resolve(said) == meant


@pytest.mark.parametrize(("said", "problem"), [("the bakery", "is not one of them"), ("college", "names 2 of them")])
def test_a_place_naming_no_known_place_or_several_is_refused_naming_the_known(said: str, problem: str) -> None:
    with pytest.raises(ImplausibleAnswerError, match=f"{problem}.*known: Oak Hill apartments, Hobbs Cafe"):
        PLACES.resolve(said)


@given(st.sampled_from(KNOWN), st.sampled_from([str.lower, str.upper, str.title, lambda s: f"  {s} "]))
@SETTINGS
def test_a_known_name_however_written_is_itself(name: str, write) -> None:  # a str method
    assert PLACES.resolve(write(name)) == name


def test_outside_a_town_places_are_free_text() -> None:
    assert NOWHERE.resolve("the bakery") == "the bakery"
    strokes = strokes_answer(json.dumps({"strokes": [{"time": "08:00", "activity": "bake", "location": "bakery"}]}))
    assert strokes[0].location == "bakery"


def test_a_resident_knows_its_places_and_its_strokes_are_kept_to_them() -> None:
    town = load_town(default_town_path())
    resident = town.residents[0].model_copy()
    assert resident.known_places() == ()
    resident.know(KNOWN)
    answer = json.dumps({"strokes": [{"time": "08:00", "activity": "open up", "location": "cafe"},
                                     {"time": "18:00", "activity": "have dinner", "location": "home"}]})
    places = KnownPlaces.of(resident)
    assert isinstance(resident, Resident)
    assert [s.location for s in strokes_answer(answer, places=places)] == ["Hobbs Cafe", resident.home]
    with pytest.raises(ImplausibleAnswerError, match="must be one of the places known"):
        strokes_answer(answer.replace('"cafe"', '"the bakery"'), places=places)


def test_an_action_in_a_room_of_its_block_keeps_the_block_place() -> None:
    actions = read_actions(json.dumps({"actions": [{"minutes": 60, "activity": "knead", "location": "kitchen"}]}),
                           places=PLACES)
    assert actions[0].location == "Hobbs Cafe"


# -- reactions ----------------------------------------------------------------------------------------------


def test_a_reaction_walking_away_from_what_it_reacts_to_is_refused() -> None:
    # the real shape: a running shower at home, and a reaction that takes the agent to the cafe
    away = Reaction(react=True, reaction="get coffee", location="cafe")
    with pytest.raises(ImplausibleAnswerError, match="takes the agent to Hobbs Cafe, away from what it reacts to"):
        check_reaction(away, "the shower is running", "Oak Hill apartments", PLACES)
    walking = Reaction(react=True, reaction="walk to Johnson Park")
    with pytest.raises(ImplausibleAnswerError, match="Johnson Park"):
        check_reaction(walking, "the shower is running", "Oak Hill apartments", PLACES)


@pytest.mark.parametrize("decision", [
    Reaction(react=True, reaction="turn off the shower", location="home"),
    Reaction(react=True, reaction="turn off the shower"),
    Reaction(react=True, reaction="go to the party", time="17:00", location="cafe"),  # an appointment
    Reaction(react=True, reaction="run to the park to help", location="Johnson Park"),  # the observation's place
    Reaction(react=False)])
def test_a_reaction_where_it_happens_or_at_a_set_time_is_accepted(decision: Reaction) -> None:
    assert check_reaction(decision, "someone fell in Johnson Park; the shower is running", "Oak Hill apartments",
                          PLACES) is decision


def test_without_known_places_reactions_are_not_checked() -> None:
    text = json.dumps({"react": True, "reaction": "get coffee", "location": "the cafe"})
    assert reaction_answer(text, observation="the shower is running", here="home").location == "the cafe"


# -- the retry, the counters and the note ---------------------------------------------------------------------


def test_the_retry_is_shown_the_problem_and_the_refusal_is_counted(stream: MemoryStream) -> None:
    laid = hours_json(sorted((dict(good_hours()) | {9: "have lunch", 11: "have dinner"}).items()))
    answers = iter([laid])
    chat = ScriptedChat({"planning.hours": lambda messages: next(answers, None) or OfflineChatModel().complete(
        messages[:2], purpose="planning.hours")})  # the first question (system and user), not the retry
    plan = plan_day(stream, ANN, DAY, chat=chat)
    retry = [m for p, m in chat.calls if p == "planning.hours"][1]
    assert "'have lunch' at 09:00 is far from when the day has it" in retry[-1]["content"]
    usage = chat.usage.by_purpose["planning.hours"]
    assert (usage.implausible, usage.retried, usage.lost) == (1, 1, 0)
    assert plan.block_at(DAY + timedelta(hours=9)).activity != "have lunch"
    assert "refused by a sense check (docs/sense-checks.md): planning.hours 1" in answers_note(chat.usage)


def test_a_stretched_decomposition_is_counted_and_named_in_the_note(stream: MemoryStream) -> None:
    chat = ScriptedChat({"planning.actions": lambda _: actions_json([(25, "knead dough"), (25, "shape loaves")])})
    plan = plan_day(stream, ANN, DAY, chat=chat)
    block = decompose(stream, ANN, plan, DAY + timedelta(hours=8, minutes=30), chat=chat)
    assert sum(a.minutes for a in block.actions) == block.minutes == 60
    assert chat.usage.by_purpose["planning.actions"].stretched == 1
    assert "stretched to fill their span: planning.actions 1" in answers_note(chat.usage)


def test_a_reaction_refused_twice_changes_nothing(stream: MemoryStream) -> None:
    resident = load_town(default_town_path()).residents[0].model_copy()
    resident.know(KNOWN)
    plan = plan_day(stream, resident, DAY, chat=OfflineChatModel())
    chat = ScriptedChat({"planning.react": lambda _: json.dumps({"react": True, "reaction": "stroll in the park",
                                                                 "location": "Johnson Park"})})
    decision = run_direct(react_stage(stream, plan, resident, "the shower is running", DAY + timedelta(hours=7)),
                          chat)
    usage = chat.usage.by_purpose["planning.react"]
    assert not decision.react and decision.plan is plan and (usage.implausible, usage.unusable) == (1, 1)


# -- the offline rules pass every check --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_whole_offline_day_of_the_town_passes_every_check(tmp_path: Path) -> None:
    chat = ScriptedChat({})  # the offline rules, every call recorded
    result = start_run(RunConfig(agents=25, start=DAY, hours=24, embedder="hash"), tmp_path / "r", progress=False,
                       chat=chat)
    assert result.metrics["implausible_by_purpose"] == {} and result.metrics["retried"] == 0
    assert all(not u.stretched for u in chat.usage.by_purpose.values())
    planned = [m for p, m in chat.calls if p.startswith("planning.")]
    assert {"planning.day", "planning.hours", "planning.actions"} <= {p for p, _ in chat.calls}
    assert sum(PLACES_LABEL in m[-1]["content"] for m in planned) > len(planned) // 2  # the place checks were live
