"""Times said in words become clock times in the plan (docs/offline.md, "Times said in words").

Scenarios of the small Fernhollow town (tests/sim/fidelity_town.py), none of the bundled town's words:
the organiser of a walk "just before sunset" plans it at the sun's time for the day; a class "the day
after tomorrow after lunch, two hours long" is in that day's plan from 13:00 to 15:00; each reading
is in the plan's provenance.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.models import OfflineChatModel
from memstream.offline_events import commitment
from memstream.offline_news import standing
from memstream.planning import plan_day
from memstream.spoken_times import JUST, sun
from tests.sim.fidelity_town import GRETA, PETRA, START, fresh_stream, identity, run, told

MONDAY = date(2024, 3, 4)


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


@pytest.mark.parametrize(("text", "time", "minutes", "day"), [
    ("a bonfire at the allotments just after sunset tomorrow", _hhmm(sun(MONDAY + timedelta(days=1))[1] + JUST),
     None, 1),
    ("a swim at the lido around dawn on Wednesday", _hhmm(sun(date(2024, 3, 6))[0] - 30), None, 2),
    ("the book swap is at the library after breakfast", "09:00", None, 0),
    ("tea at the vicarage shortly before dinner", "17:45", None, 0),
    ("choir practice in the chapel this evening for an hour and a half", "19:00", 90, 0),
    ("the plumber comes to the flat first thing tomorrow", "08:00", None, 1),
    ("drop the keys at the office by the end of the day", "17:00", None, 0),
    ("bingo at the social club at quarter to eight tonight", "19:45", None, 0),
    ("boarding at the quay at half past nine in the morning next Monday", "09:30", None, 7),
    ("the darts final at the pub on Monday at 8 pm", "20:00", None, 0),
    ("a seminar at the town hall in two days at midday, a three-hour long session", "12:00", 180, 2),
    ("the market at the square on Friday from lunchtime until sunset", "12:00",
     sun(date(2024, 3, 8))[1] - 12 * 60, 4),
])
def test_times_said_in_words_resolve_to_a_clock_time_and_a_day(text: str, time: str, minutes: int | None,
                                                             day: int) -> None:
    event = commitment(text, day=MONDAY)
    assert event is not None, text
    assert (event.time, event.minutes) == (time, minutes), (text, event)
    assert event.next_day(MONDAY, MONDAY) == MONDAY + timedelta(days=day), (text, event)
    if not any(clock in text for clock in ("quarter to", "half past", " pm")):  # clock times, not words
        assert event.reading, text  # what words were read as what


def test_the_sun_follows_the_season() -> None:
    winter, summer = sun(date(2024, 12, 21)), sun(date(2024, 6, 21))
    assert winter[1] - winter[0] < 10 * 60 < 14 * 60 < summer[1] - summer[0]  # about 9.3 h and 14.8 h at 40N
    assert sun(None) == (6 * 60, 18 * 60)


def test_the_organiser_plans_a_walk_just_before_sunset_at_the_suns_time() -> None:
    assert commitment("Tomas Reyes is having lunch at Heron Bakery", day=MONDAY) is None  # a meal is no event
    assert commitment("Good morning! The first thing I saw at the green was a heron", day=MONDAY) is None
    stream = fresh_stream()
    told(stream, PETRA, ["Petra Novak is leading a lantern walk at Millbrook Green today just before sunset"],
         START - timedelta(hours=1))
    sim, _ = run([PETRA], 0.1, stream)
    [walk] = [s for s in sim.agents[PETRA].mind.plan.strokes if s.appointment]
    assert (walk.time, walk.location) == (_hhmm(sun(MONDAY)[1] - JUST), "Millbrook Green")
    assert "sunset" in walk.reading and walk.time in walk.reading


def test_a_class_the_day_after_tomorrow_after_lunch_is_in_that_days_plan() -> None:
    stream = fresh_stream()
    told(stream, GRETA, ["Greta Holm is teaching a jam-making class at Old Mill Hall the day after tomorrow "
                         "after lunch, two hours long"], START)
    chat = OfflineChatModel()
    assert not [s for s in plan_day(stream, identity(GRETA), START, chat=chat).strokes if s.appointment]
    wednesday = plan_day(stream, identity(GRETA), START + timedelta(days=2), chat=chat)
    [lesson] = [s for s in wednesday.strokes if s.appointment]
    assert (lesson.time, lesson.minutes, lesson.location) == ("13:00", 120, "Old Mill Hall")
    assert "'after lunch' as 13:00" in lesson.reading and "'two hours long' as 120 minutes" in lesson.reading


_WORDS = st.sampled_from(["just", "before", "after", "sunset", "dawn", "lunch", "at", "the", "green", "no", "longer",
                          "now", "starts", "three", "noon", "cancelled", "moved", "to", "from", "next", "Monday",
                          "in", "two", "days", "an", "hour", "long", "evening", "first", "thing", ",", "not", "on"])


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_WORDS, st.text(max_size=8)), max_size=14).map(" ".join), st.dates())
def test_the_reader_takes_any_words_on_any_day(text: str, day: date) -> None:
    event = commitment(text, day=day)
    assert event is None or (len(event.time) == 5 and "00:00" <= event.time <= "23:59" and event.place)
    for s in standing([(text, day), (text.upper(), day), (text, None)]):
        assert s.event.time and s.event.place
    rise, set_ = sun(day)
    assert 0 < rise < 12 * 60 < set_ < 24 * 60
