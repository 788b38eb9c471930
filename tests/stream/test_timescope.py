"""Reading the span of time a query names: relative to the moment of asking, or to a date it names."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from memstream.stream.timescope import RETELLING, time_scope

# A Wednesday evening.
NOW = datetime(2023, 5, 31, 19, 0, tzinfo=UTC)


def span(query: str, now: datetime = NOW) -> tuple[str, str]:
    scope = time_scope(query, now)
    assert scope is not None, query
    return scope.start.date().isoformat(), scope.end.date().isoformat()


@pytest.mark.parametrize(("query", "expected"), [
    # N units ago: one unit either side (a day for days), then RETELLING after
    ("What did I plant two weeks ago?", ("2023-05-10", "2023-05-31")),
    ("Which cafe did I try 3 days ago?", ("2023-05-27", "2023-05-31")),
    ("Where did I move from a couple of years ago?", ("2020-05-31", "2022-06-08")),
    # spans that reach the present end at the moment of asking
    ("Which races did I run during the past month?", ("2023-04-30", "2023-05-31")),
    ("What have I cooked in the last 10 days?", ("2023-05-20", "2023-05-31")),
    ("What did I buy last month?", ("2023-04-01", "2023-05-31")),  # calendar month or past 30 days
    ("What did I read this week?", ("2023-05-29", "2023-05-31")),
    ("Who did I meet yesterday?", ("2023-05-30", "2023-05-30")),  # the day before, nothing of today
    ("What did I eat today?", ("2023-05-31", "2023-05-31")),
    ("Which artist did I find last Friday?", ("2023-05-26", "2023-05-31")),
    ("Where did I go last weekend?", ("2023-05-27", "2023-05-31")),
    # dates, with the retelling week after them
    ("What did Maria share on 7 July, 2022?", ("2022-07-07", "2022-07-15")),
    ("What did Tim read on December 8th, 2022?", ("2022-12-08", "2022-12-16")),
    ("What did John host in May 2022?", ("2022-05-01", "2022-06-08")),
    ("Where did I travel in March?", ("2023-03-01", "2023-04-08")),
    ("Where did I travel in July?", ("2022-07-01", "2022-08-08")),  # the latest July up to now
    ("How many races has Nate won in 2022?", ("2022-01-01", "2023-01-08")),
    # relative to a date the query names
    ("What did Joanna finish last Friday, on 23 January 2022?", ("2022-01-21", "2022-01-29")),
    ("Which puppy did Maria get two weeks before August 11, 2022?", ("2022-07-21", "2022-08-12")),
    ("What did John do the week before August 3, 2022?", ("2022-07-26", "2022-08-10")),
    ("What did she finish the Sunday before October 25, 2022?", ("2022-10-23", "2022-10-31")),
    ("How many tournaments has Nate won by July 10, 2022?", ("0001-01-01", "2022-07-18")),
    ("What have I learnt since February 2023?", ("2023-02-01", "2023-05-31")),
])
def test_spans(query: str, expected: tuple[str, str]) -> None:
    assert span(query) == expected


@pytest.mark.parametrize("query", [
    "How many months ago did I attend the photography workshop?",  # asks for the span, names none
    "How long ago did I adopt my cat?",
    "What did I do two weeks before the wedding?",  # "before" counts back only from a date
    "Which streaming service did I start using most recently?",
    "What may I bring to the party?",  # the verb, not the month
    "Is my cat named Biscuit?",
])
def test_no_span(query: str) -> None:
    assert time_scope(query, NOW) is None


def test_a_span_never_ends_in_the_future_and_contains_reads_epochs() -> None:
    scope = time_scope("What did I do last Monday?", NOW)
    assert scope is not None and scope.end == NOW  # last Monday + RETELLING would pass the present
    assert RETELLING.days == 7
    times = np.array([datetime(2023, 5, 28, 12, tzinfo=UTC).timestamp(),
                      datetime(2023, 5, 29, 12, tzinfo=UTC).timestamp(), NOW.timestamp()])
    assert scope.contains(times).tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("zone", [UTC, ZoneInfo("America/Los_Angeles"), ZoneInfo("Asia/Kolkata")])
def test_yesterday_is_the_calendar_day_before_now_in_nows_zone(zone: ZoneInfo) -> None:
    now = datetime(2023, 3, 13, 0, 30, tzinfo=zone)  # just after midnight (Los Angeles: the day after DST began)
    scope = time_scope("What did I do yesterday?", now)
    assert scope is not None
    def at(day: int, hour: int, minute: int = 0) -> float:
        return datetime(2023, 3, day, hour, minute, tzinfo=zone).timestamp()
    inside = [at(12, 0), at(12, 12), at(12, 23, 59)]
    outside = [at(11, 23, 59), at(13, 0), at(13, 0, 20), now.timestamp()]  # nothing of today, however early
    assert scope.contains(np.array(inside + outside)).tolist() == [1.0] * 3 + [0.0] * 4


def test_an_impossible_date_is_not_read() -> None:
    assert time_scope("What happened on 31 February, 2023?", NOW) is None
