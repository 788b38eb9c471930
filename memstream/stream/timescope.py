"""The span of time a query asks about, read from its words ("two weeks ago", "on 7 July, 2023").

Relevance and BM25 cannot see that "What did I plant two weeks ago?" is about a
moment: its words match every gardening memory equally, whenever it happened.
Time-aware retrieval (Wu et al. 2024, LongMemEval, section 5.4) narrows the search
to the span the query names. This module is the reader: plain rules for the common
English expressions, no model.

- Dates: ``7 July, 2023``, ``July 7th 2023``, ``July 2023``, ``in 2023``, ``in July``
  (the latest July up to now), ``July 7`` (the latest one).
- Relative to the moment of asking, or to a date the query names ("last Friday,
  on 23 January 2022"): ``N days|weeks|months|years ago``, ``N units before <date>``,
  ``(in) the past|last N units``, ``past|last|this week|month|year``, ``the week
  before <date>``, ``today``, ``yesterday``, ``last weekend``, ``last Friday``.
- ``by|as of|until <date>``: everything up to it; ``since <date>``: from it to now.

Spans err wide, because people say "two weeks ago" of anything between one and three
weeks, and "last month" of the calendar month or the past 30 days: both are
covered. A span that ends before now is extended by :data:`RETELLING`, because a
memory is written when something is told, which is often days after it happened. Not
"yesterday": it means the calendar day before ``now`` in ``now``'s zone, midnight to
midnight, and nothing of today (whoever asks about yesterday does not mean this morning).
A question about *how long ago* something was ("how many months ago") names no span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

DAY = timedelta(days=1)
#: How long after something happens it may still be told (and so remembered) for the first time.
RETELLING = 7 * DAY
UNITS = {"day": DAY, "week": 7 * DAY, "month": 30 * DAY, "year": 365 * DAY}
#: The phrase whose span is exactly the day before now (no retelling after it).
YESTERDAY = "yesterday"
_INSTANT = timedelta(microseconds=1)  # a span's end is inclusive: yesterday ends just before today's midnight
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2,
            "a few": 3, "several": 4}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_N = r"(\d+|" + "|".join(sorted((re.escape(k) for k in _NUMBERS), key=len, reverse=True)) + r")"
_UNIT = r"(day|week|month|year)s?"
_MONTH = r"(" + "|".join(_MONTHS) + r")"
_YEAR = r"((?:19|20)\d\d)"
_AGO = re.compile(rf"\b{_N}\s+{_UNIT}\s+(?:ago|before)\b")
_PAST_N = re.compile(rf"\b(?:past|last|previous)\s+{_N}\s+{_UNIT}\b")
_PAST = re.compile(rf"\b(past|last|previous|this)\s+{_UNIT}\b")
_WEEK_BEFORE = re.compile(r"\bthe\s+week\s+before\b")
_WEEKDAY = re.compile(r"\b(?:last|the)\s+(" + "|".join(_WEEKDAYS) + r")\b(\s+before\b)?")
_HOW_LONG = re.compile(rf"\bhow\s+(?:many|much|long)\s+(?:\w+\s+)?{_UNIT}?\s*ago\b")
# Absolute dates, most precise first; each yields (day or None, month or None, year or None).
_DATES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"\b(\d{{1,2}})\s+{_MONTH},?\s*{_YEAR}\b"), "dmy"),
    (re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}),?\s*{_YEAR}\b"), "mdy"),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b"), "my"),
    (re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})\b"), "md"),
    (re.compile(rf"\b(\d{{1,2}})\s+{_MONTH}\b"), "dm"),
    (re.compile(rf"\b(?:in|during|since|of|by)\s+(?:early\s+|late\s+|mid-?\s*)?{_MONTH}\b"), "m"),
    (re.compile(rf"\b(?:in|during|since|of|by|summer|winter|spring|autumn|fall)\s+{_YEAR}\b"), "y"),
)


@dataclass(frozen=True)
class TimeScope:
    """A span of time, ``start`` to ``end``, named in a query by ``phrase``."""

    start: datetime
    end: datetime
    phrase: str

    def contains(self, epochs: np.ndarray) -> np.ndarray:
        """1.0 where a time (UTC epoch seconds) falls in the span, else 0.0."""
        return ((epochs >= self.start.timestamp()) & (epochs <= self.end.timestamp())).astype(np.float64)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _day(t: datetime) -> datetime:
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def _unit_start(t: datetime, unit: str) -> datetime:
    """Start of the calendar day, week (Monday), month or year holding ``t``."""
    day = _day(t)
    return {"week": day - day.weekday() * DAY, "month": day.replace(day=1),
            "year": day.replace(month=1, day=1)}.get(unit, day)


def _next_month(t: datetime) -> datetime:
    return t.replace(year=t.year + t.month // 12, month=t.month % 12 + 1)


def _absolute(text: str, now: datetime) -> tuple[datetime, datetime, re.Match[str]] | None:
    """The first date ``text`` names, as the span it covers (a day, a month, a year)."""
    for pattern, form in _DATES:
        if not (m := pattern.search(text)):
            continue
        parts = dict(zip(form, m.groups(), strict=True))
        month = _MONTHS.index(parts["m"]) + 1 if "m" in parts else 1
        year = int(parts["y"]) if "y" in parts else now.year
        try:
            start = _day(now).replace(year=year, month=month, day=int(parts.get("d", 1)))
        except ValueError:
            return None  # "31 February": not a date, so no span
        if "y" not in parts and start > now:  # "in July", "July 7": the latest one up to now
            start = start.replace(year=year - 1)
        if "d" in parts:
            end = start + DAY
        else:
            end = _next_month(start) if "m" in parts else start.replace(year=start.year + 1)
        return start, end, m
    return None


def _relative(text: str, now: datetime, anchored: bool) -> tuple[datetime, datetime, str] | None:
    """A span relative to ``now``: the moment of asking, or the date the query names (``anchored``).

    "Before" counts back only from a named date: "two weeks before the party" names no span.
    """
    if (m := _AGO.search(text)) and (anchored or m.group(0).endswith("ago")):
        n, unit = _count(m.group(1)), m.group(2)
        center, width = now - n * UNITS[unit], DAY if unit == "day" else UNITS[unit]
        return _day(center - width), _day(center + width) + DAY, m.group(0)
    if m := _PAST_N.search(text):
        n, unit = _count(m.group(1)), m.group(2)
        return _day(now - n * UNITS[unit]) - DAY, now, m.group(0)
    if anchored and (m := _WEEK_BEFORE.search(text)):
        return _day(now) - 8 * DAY, now, m.group(0)
    if (m := _WEEKDAY.search(text)) and (m.group(0).startswith("last") or (anchored and m.group(2))):
        back = (now.weekday() - _WEEKDAYS.index(m.group(1))) % 7 or 7
        return _day(now) - back * DAY, _day(now) - (back - 1) * DAY, m.group(0)
    if "last weekend" in text:
        saturday = _day(now) - ((now.weekday() - 5) % 7 or 7) * DAY
        return saturday, saturday + 2 * DAY, "last weekend"
    if m := _PAST.search(text):
        which, unit = m.group(1), m.group(2)
        if which == "this":
            return _unit_start(now, unit), now, m.group(0)
        start = _day(now - UNITS[unit]) - DAY
        if which in ("last", "previous"):  # the calendar unit before this one, or the past one
            start = min(start, _unit_start(_unit_start(now, unit) - DAY, unit))
        return start, now, m.group(0)
    if re.search(r"\byesterday\b", text):
        return _day(now) - DAY, _day(now) - _INSTANT, YESTERDAY
    if m := re.search(r"\b(today|tonight|this morning|this afternoon|this evening)\b", text):
        return _day(now), now, m.group(0)
    return None


def time_scope(query: str, now: datetime) -> TimeScope | None:
    """The span ``query`` names, relative to ``now`` (an aware datetime), or None."""
    text = re.sub(r"\b(\d{1,2})(?:st|nd|rd|th)\b", r"\1", " ".join(query.lower().split()))
    if _HOW_LONG.search(text):
        return None
    absolute = _absolute(text, now)
    if absolute is not None:
        start, end, m = absolute
        rest = text[: m.start()] + text[m.end() :]
        before = text[: m.start()].rstrip()
        if (rel := _relative(rest, min(now, start), anchored=True)) is not None:  # "last Friday, on 23 January 2022"
            span = (rel[0], min(rel[1], end), f"{rel[2]} ({m.group(0)})")
        elif re.search(r"\b(?:by|as of|until|before)$", before):
            span = (datetime.min.replace(tzinfo=now.tzinfo), end, m.group(0))
        elif m.group(0).startswith("since") or before.endswith("since"):
            span = (start, now, m.group(0))
        else:
            span = (start, end, m.group(0))
    elif (rel := _relative(text, now, anchored=False)) is not None:
        span = rel
    else:
        return None
    start, end, phrase = span
    if end < now and phrase != YESTERDAY:
        end = min(now, end + RETELLING)
    return TimeScope(start, end, phrase)
