"""Which remembered events still stand: a correction replaces what it corrects, a cancellation drops it,
and an event whose time has passed is stale. Plain rules for the offline stand-in (``docs/offline.md``);
a real model weighs its memories itself.

- **Supersedes** (:func:`standing`): a statement that corrects (:func:`memstream.offline_corrections.corrects`)
  replaces each earlier event it is about: one whose name shares a content word with it, or (an
  event without a name) whose place it names. What the correction says (a new time, day or place)
  replaces the old; what it leaves out is kept ("the picnic has been moved to four" keeps the
  picnic's place and day). A cancellation drops the event. A correction is newer than the plain
  statements it is about whatever order they are shown in; of two corrections, the later shown wins.
- **Stale** (:func:`is_past`): an event whose day is before today, or today with its end (its
  start when no end is said) at or before now.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta

from memstream.offline_events import Commitment, partial_commitment
from memstream.offline_text import content_words
from memstream.timeutil import minute_of_day

#: Words of a correction that say it corrects, not what it is about.
_CUE_WORDS = frozenset("""longer moved changed cancelled canceled cancel called scrapped rescheduled postponed
brought forward turns actually correction instead rather starts start begins now happening place""".split())


@dataclasses.dataclass(frozen=True)
class Standing:
    """An event that stands: what it is, the day its statement was said and which statement says it."""

    event: Commitment
    written: date | None
    index: int                  # the statement that set it last (the correction, when one moved it)
    replaced: tuple[int, ...]   # the statements it replaced


def _about(correction: str, older: Commitment) -> bool:
    """Whether ``correction`` is about the event ``older``: a word of its name, or else its place."""
    words = set(content_words(correction)) - _CUE_WORDS
    name = set(content_words(older.event)) - _CUE_WORDS
    if name:
        return bool(words & name)
    return bool(older.place) and older.place.lower().removeprefix("the ") in correction.lower()


def _merged(older: Commitment, newer: Commitment) -> Commitment:
    """The older event with what the newer statement says instead."""
    day = newer if newer.has_day else older
    return dataclasses.replace(older, month_day=day.month_day, weekday=day.weekday, offset=day.offset,
                               next_week=day.next_week, time=newer.time or older.time,
                               place=newer.place or older.place, minutes=newer.minutes if newer.time else older.minutes,
                               reading="; ".join(r for r in (newer.reading, older.reading) if r), corrects=True)


def standing(statements: Sequence[tuple[str, date | None]], places: Iterable[str] = ()) -> list[Standing]:
    """The events ``statements`` (text and the day it was said, oldest first) set that still stand."""
    places = list(places)
    read = [partial_commitment(text, places, written) for text, written in statements]
    events: dict[int, Standing] = {}
    corrections: list[int] = []
    for i, c in enumerate(read):
        if c is None:
            continue
        if c.corrects:
            corrections.append(i)
        elif c.time and c.place:
            events[i] = Standing(c, statements[i][1], i, ())
    for i in corrections:  # in the order shown: a correction is newer than every plain statement
        c, (text, written) = read[i], statements[i]
        assert c is not None
        about = [k for k, s in events.items() if k != i and _about(text, s.event)]
        for k in about:
            old = events.pop(k)
            if not c.cancelled:
                merged = _merged(old.event, c)
                events[i] = Standing(merged, written if c.has_day else old.written, i, (*old.replaced, k))
        if not about and not c.cancelled and c.time and c.place:
            events[i] = Standing(c, written, i, ())
    return sorted(events.values(), key=lambda s: s.index)


def superseded(statements: Sequence[str]) -> set[int]:
    """The indexes of ``statements`` whose event a later (or correcting) one replaces or calls off, and
    of the corrections that were themselves corrected again."""
    kept = standing([(t, None) for t in statements])
    live = {s.index for s in kept}
    replaced = {k for s in kept for k in s.replaced}
    read = [partial_commitment(t) for t in statements]
    gone = set(replaced)
    for i, c in enumerate(read):  # what a cancellation dropped: events neither standing nor replaced
        if c and c.time and c.place and i not in live and i not in replaced:
            gone.add(i)
    return gone


_DATED = re.compile(r"\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday) (\d{1,2}) (January|February|"
                    r"March|April|May|June|July|August|September|October|November|December) (\d{4})\b")


def latest_day(text: str) -> date | None:
    """The latest day ``text`` names in full ("Plan for Tuesday 14 February 2023"): today is no earlier."""
    days = [datetime.strptime(" ".join(m.groups()), "%d %B %Y").date() for m in _DATED.finditer(text)]
    return max(days, default=None)


def event_day(event: Commitment, written: date | None, today: date) -> date | None:
    """The day of ``event`` as seen from ``today`` (a date keeps ``today``'s year); None when it cannot
    be told (a day said relative to an unknown day)."""
    if event.month_day:
        try:
            return date(today.year, *event.month_day)
        except ValueError:
            return None
    if written is None:
        return None
    return next((written + timedelta(days=n) for n in range(9) if event.on(written + timedelta(days=n), written)),
                None)


def is_past(event: Commitment, written: date | None, now: datetime | date) -> bool:
    """Whether ``event`` is over at ``now`` (a date: the day has begun; a datetime: its end has passed);
    False when its day cannot be told."""
    today = now.date() if isinstance(now, datetime) else now
    day = event_day(event, written, today)
    if day is None or day > today:
        return False
    if day < today or not isinstance(now, datetime) or not event.time:
        return day < today
    end = minute_of_day(event.time) + (event.minutes or 0)
    return end <= now.hour * 60 + now.minute
