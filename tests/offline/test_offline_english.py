"""The offline stand-in reads an event as ordinary English writes it: times in words or digits, 12 or 24
hours, ranges, weekdays and relative days, a place of the town in any case after at/in/to/by.

The property tests write the same event many ways (hypothesis) and check that the reader gets back
the time, the length, the day and the place that were written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.offline_events import commitment, named_places
from memstream.sim.town.world import default_town_path, load_town

TOWN = sorted(b.name for a in load_town(default_town_path()).areas for b in a.buildings)
NUMBERS = "one two three four five six seven eight nine ten eleven twelve".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
#: Words a made-up place name must not use: they say a time or a day, or are function words.
RESERVED = {*NUMBERS, *(d.lower() for d in WEEKDAYS), "noon", "midday", "midnight", "morning", "afternoon",
            "evening", "night", "tonight", "today", "tomorrow", "half", "quarter", "past", "am", "pm",
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december", "the", "and", "of", "on", "at", "in", "to", "by", "for", "from", "with"}


def part_of_day(minute: int) -> str:
    return "in the morning" if minute < 12 * 60 else "in the afternoon" if minute < 18 * 60 else "in the evening"


def twelve(minute: int) -> tuple[int, str]:
    hour = minute // 60
    return (hour % 12 or 12), ("am" if hour < 12 else "pm")


def spoken(minute: int, draw: st.DrawFn) -> str:
    """One way of saying a time of day (``minute`` after midnight), chosen by hypothesis."""
    hour, half = twelve(minute)
    mm = minute % 60
    forms = [f"{minute // 60:02d}:{mm:02d}", f"{hour}:{mm:02d} {half}", f"{hour}:{mm:02d}{half}",
             f"{hour}:{mm:02d} {half[0]}.m."]
    if mm == 0:
        forms += [f"{hour}{half}", f"{hour} {half}", f"{NUMBERS[hour - 1]} o'clock {part_of_day(minute)}",
                  f"{NUMBERS[hour - 1]} {part_of_day(minute)}"]
        if 7 * 60 <= minute <= 18 * 60:  # a bare hour is read in waking hours
            forms.append(str(hour) if draw(st.booleans()) else NUMBERS[hour - 1])
    if mm == 30:
        forms.append(f"half past {NUMBERS[hour - 1]} {part_of_day(minute)}")
    if mm == 15:
        forms.append(f"quarter past {NUMBERS[hour - 1]} {part_of_day(minute)}")
    if mm == 45:
        forms.append(f"quarter to {NUMBERS[hour % 12]} {part_of_day(minute)}")
    if minute == 12 * 60:
        forms += ["noon", "midday"]
    return draw(st.sampled_from(forms))


@dataclass(frozen=True)
class Written:
    sentence: str
    start: int
    minutes: int | None
    place: str
    weekday: int | None
    offset: int | None
    month_day: tuple[int, int] | None


def cased(text: str, draw: st.DrawFn) -> str:
    return draw(st.sampled_from([text, text.lower(), text.title() if "'" not in text else text, text.upper()]))


made_up_name = st.lists(st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True)
                        .filter(lambda w: w.lower() not in RESERVED), min_size=1, max_size=3).map(" ".join)


@st.composite
def events(draw: st.DrawFn) -> Written:
    """A sentence announcing an event, its parts in any order and any of their wordings."""
    place = draw(st.sampled_from(TOWN) | made_up_name)
    start = draw(st.integers(6, 21)) * 60 + draw(st.sampled_from([0, 15, 30, 45]))
    minutes = None
    if draw(st.booleans()) and start % 60 == 0 and start <= 20 * 60:  # a range
        minutes = draw(st.integers(1, 3)) * 60
        end = start + minutes
        (h1, half1), (h2, half2) = twelve(start), twelve(end)
        first = f"{h1}{' ' + half1 if half1 != half2 or draw(st.booleans()) else ''}"
        link = draw(st.sampled_from(["from {a} to {b}", "between {a} and {b}", "from {a} until {b}", "{a}-{b}"]))
        when = link.format(a=first, b=f"{h2} {half2}" if draw(st.booleans()) else f"{h2}{half2}")
    else:
        when = "at " + spoken(start, draw)
    weekday = offset = month_day = None
    day = draw(st.sampled_from(["", "weekday", "tomorrow", "today", "date"]))
    if day == "weekday":
        weekday = draw(st.integers(0, 6))
        day_words = "on " + cased(WEEKDAYS[weekday], draw)
    elif day == "date":
        month_day = (2, draw(st.integers(1, 28)))
        day_words = draw(st.sampled_from([f"on February {month_day[1]}", f"on {month_day[1]} February",
                                          f"on the {month_day[1]}th of February"]))
    else:
        offset = {"tomorrow": 1, "today": 0}.get(day)
        day_words = day
    preposition = draw(st.sampled_from(["at", "in", "to", "by"]))
    where = f"{preposition} {'the ' if draw(st.booleans()) else ''}{cased(place, draw)}"
    parts = draw(st.permutations([when, where, day_words]))
    opening = draw(st.sampled_from(["Ann is holding a get-together", "There is a meeting", "Come over",
                                    "Ben told me the market is on"]))
    sentence = " ".join([opening, *(p for p in parts if p)]) + draw(st.sampled_from(["", ".", "!", " and bring snacks."]))
    return Written(sentence, start, minutes, place, weekday, offset, month_day)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(events())
def test_the_reader_gets_back_what_was_written(written: Written) -> None:
    places = [*TOWN, written.place]
    event = commitment(written.sentence, places)
    assert event is not None, written.sentence
    assert event.time == f"{written.start // 60:02d}:{written.start % 60:02d}", written.sentence
    assert event.minutes == written.minutes, written.sentence
    assert event.place.lower() == written.place.lower(), written.sentence
    assert (event.weekday, event.offset, event.month_day) == (written.weekday, written.offset, written.month_day)


@pytest.mark.parametrize(("text", "time", "minutes", "place"), [
    ("Isabella's party is at noon in the cafe", "12:00", None, "the cafe"),
    ("we meet at eleven in the morning at hobbs cafe", "11:00", None, "hobbs cafe"),
    ("half past five at Johnson Park", "17:30", None, "Johnson Park"),
    ("dinner from 5 to 7 at the pub", "17:00", 120, "the pub"),
    ("the market runs from nine to eleven at the square", "09:00", 120, "the square"),
    ("a talk at 5pm at the library for 90 minutes", "17:00", 90, "the library"),
    ("a talk at 5 pm in the library", "17:00", None, "the library"),
    ("drinks tomorrow evening at 8 at the pub", "20:00", None, "the pub"),
    ("breakfast at 05:30 at the diner", "05:30", None, "the diner"),
])
def test_hand_picked_wordings(text: str, time: str, minutes: int | None, place: str) -> None:
    event = commitment(text)
    assert event and (event.time, event.minutes, event.place) == (time, minutes, place)


def test_days_against_the_day_it_was_said() -> None:
    monday = date(2023, 2, 13)
    tuesday = commitment("the party is on tuesday at 5pm at the cafe")
    assert tuesday and tuesday.on(date(2023, 2, 14), monday) and not tuesday.on(monday, monday)
    tomorrow = commitment("the party is tomorrow evening at five at the cafe")
    assert tomorrow and tomorrow.time == "17:00" and tomorrow.next_day(monday, monday) == date(2023, 2, 14)
    later = commitment("the party is the day after tomorrow at noon at the cafe")
    assert later and later.on(date(2023, 2, 15), monday) and later.when == "the day after tomorrow"


@pytest.mark.parametrize("text", [
    "Klaus is reading at the library",          # no time
    "I need to finish this by 5pm",             # a time, no place
    "at one point we talked to two friends",    # numbers that are not times
    "The meeting went well at the office",
])
def test_no_event_without_a_time_and_a_place(text: str) -> None:
    assert commitment(text) is None


def test_the_place_names_a_prompt_spells_out_are_found_in_any_case() -> None:
    prompt = "Occupation: barista at Hobbs Cafe\nRoutine: 08:00 work (Hobbs Cafe); 18:00 dinner (Lin family's house)"
    assert named_places(prompt) == ["Hobbs Cafe", "Lin family's house"]
    event = commitment("dinner at lin family's house at 7 pm", named_places(prompt))
    assert event and event.place == "Lin family's house" and event.time == "19:00"
