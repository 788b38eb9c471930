"""Times of day said in words ("just before sunset", "after lunch", "first thing in the morning") read
as a clock time by plain rules, each reading saying what words it took for what time. The offline
stand-in's reader (:mod:`memstream.offline_events`) uses them when a sentence says no clock time.

The rules' assumptions (``docs/offline.md``), one source of truth each:

- **the sun**: sunrise and sunset from the date by the textbook day-length formula at
  :data:`LATITUDE` (solar declination from the day of the year, the sunrise hour angle), solar noon
  at 12:00 on the clock (no time zones, daylight saving or equation of time: within half an hour
  or so of an almanac at mid latitudes); with no date known, the equinox (06:00 and 18:00). Dawn
  is :data:`TWILIGHT` minutes before sunrise, dusk as long after sunset.
- **meals and parts of the day** (:data:`ANCHORS`): breakfast 08:00, lunch 12:00, dinner and
  supper 18:00 (an hour each); morning 09:00, afternoon 15:00, evening 19:00, tonight 20:00,
  "first thing" 08:00, "end of the day" 17:00.
- **before and after**: "before X" is :data:`BEFORE` minutes before X starts, "just (shortly,
  right) before X" :data:`JUST` minutes before; "after X" is when X ends (a meal's hour, a moment
  like sunset :data:`BEFORE` minutes later), "just after X" when a meal ends or :data:`JUST`
  minutes after a moment.

A meal or the sun is a time only after a word that says when ("at", "around", "by", "from",
"until", "over", "before", "after"): "having lunch at the cafe" sets no time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date

#: The latitude (degrees north) the sun's rules assume: a mid-latitude town.
LATITUDE = 40.0
#: Minutes between dawn and sunrise, and between sunset and dusk.
TWILIGHT = 30
#: Minutes "before X" is before X (and "after" a moment is after it); "just before/after" is JUST.
BEFORE = 30
JUST = 15

#: Each word for a time of day: (minute of the day it starts, minutes it lasts). The sun's are computed.
ANCHORS: dict[str, tuple[int, int]] = {
    "breakfast": (8 * 60, 60), "brunch": (11 * 60, 60), "lunch": (12 * 60, 60), "lunchtime": (12 * 60, 60),
    "dinner": (18 * 60, 60), "dinnertime": (18 * 60, 60), "supper": (18 * 60, 60), "suppertime": (18 * 60, 60),
    "noon": (12 * 60, 0), "midday": (12 * 60, 0), "midnight": (0, 0),
}
#: Parts of the day said as the time itself, when no clock time is said.
PARTS: dict[str, int] = {"first thing": 8 * 60, "early morning": 7 * 60, "morning": 9 * 60, "afternoon": 15 * 60,
                         "late afternoon": 17 * 60, "early evening": 18 * 60, "evening": 19 * 60, "night": 20 * 60,
                         "tonight": 20 * 60, "end of the day": 17 * 60, "late evening": 21 * 60}
_SUN = ("sunrise", "dawn", "daybreak", "sunset", "sundown", "dusk")

_I = re.IGNORECASE
_ANCHOR = r"(?:the\s+)?(" + "|".join(sorted([*ANCHORS, *_SUN], key=len, reverse=True)) + r")\b"
_MODIFIER = r"(?:(just|shortly|right|soon|immediately)\s+)?(before|after)"
#: "just before sunset", "after lunch", "at dinnertime", "around dawn", "by noon" (a plain "noon" is a clock word).
_AT_ANCHOR = re.compile(rf"\b(?:{_MODIFIER}|at|around|about|by|from|until|till|over)\s+{_ANCHOR}", _I)
_BARE_ANCHOR = re.compile(_ANCHOR, _I)
_DAY_WORD = r"(?:in the|this|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_PART = re.compile(r"(?<!the )\b(?:(first thing)(?=\s+(?:in the morning|tomorrow|this morning|on|at|in)\b)"
                   r"|(?:at\s+|by\s+|towards?\s+|until\s+)(?:the\s+)?(end of the day)"
                   r"|" + _DAY_WORD + r"\s+(early morning|late afternoon|early evening|late evening|morning|"
                   r"afternoon|evening|night)|(tonight)|at (night))\b", _I)
#: Whether a text may hold a time said in words at all (read no further when not: the hot path).
MAY_HOLD_WORDS = re.compile(r"\b(?:" + "|".join([*ANCHORS, *_SUN]) + r"|morning|afternoon|evening|night|tonight|"
                            r"first thing|end of the day)\b", _I)


@dataclass(frozen=True)
class SpokenTime:
    """A time said in words: where it was written, the minute of the day it means and how it was read."""

    start: int
    end: int
    minute: int
    reading: str  # "'just before sunset' as 17:20 (sunset 17:35 on 3 March, 15 minutes before)"


def sun(day: date | None) -> tuple[int, int]:
    """(sunrise, sunset) in minutes of the day on ``day`` at :data:`LATITUDE` (the equinox's when None)."""
    if day is None:
        return 6 * 60, 18 * 60
    n = day.timetuple().tm_yday
    declination = math.radians(23.44) * math.sin(2 * math.pi * (n - 81) / 365)
    cos_hour = -math.tan(math.radians(LATITUDE)) * math.tan(declination)
    half_day = math.degrees(math.acos(max(-1.0, min(1.0, cos_hour)))) / 15 * 60  # minutes from solar noon
    return round(12 * 60 - half_day), round(12 * 60 + half_day)


def _hhmm(minute: int) -> str:
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def anchor_span(word: str, day: date | None) -> tuple[int, int, str]:
    """(start, minutes it lasts, what the rules took it for) of a time-of-day word."""
    word = word.lower()
    if word in ANCHORS:
        start, length = ANCHORS[word]
        return start, length, f"{word} {_hhmm(start)}"
    rise, set_ = sun(day)
    on = f" on {day.day} {day:%B}" if day else " (no date: the equinox)"
    if word in ("sunrise", "daybreak"):
        return rise, 0, f"sunrise {_hhmm(rise)}{on}"
    if word == "dawn":
        return rise - TWILIGHT, 0, f"dawn {_hhmm(rise - TWILIGHT)}, {TWILIGHT} minutes before sunrise{on}"
    if word == "dusk":
        return set_ + TWILIGHT, 0, f"dusk {_hhmm(set_ + TWILIGHT)}, {TWILIGHT} minutes after sunset{on}"
    return set_, 0, f"sunset {_hhmm(set_)}{on}"


def _relative(just: str | None, side: str, start: int, length: int) -> tuple[int, str]:
    """The minute "before/after X" means, and how far from X it is."""
    if side.lower() == "before":
        gap = JUST if just else BEFORE
        return start - gap, f"{gap} minutes before"
    if length:
        return start + length, "when it ends"
    gap = JUST if just else BEFORE
    return start + gap, f"{gap} minutes after"


def spoken_times(text: str, day: date | None) -> list[SpokenTime]:
    """Every time said in words in ``text`` (a meal or the sun after a word saying when, a part of the
    day), in order; ``day`` is the day the sentence is about (for the sun)."""
    found = []
    for m in _AT_ANCHOR.finditer(text):
        just, side, word = m.group(1), m.group(2), m.group(3)
        start, length, what = anchor_span(word, day)
        minute, how = _relative(just, side, start, length) if side else (start, "")
        found.append(SpokenTime(m.start(), m.end(), minute % (24 * 60),
                                f"'{m.group().strip()}' as {_hhmm(minute)} ({what}{', ' + how if how else ''})"))
    for m in _PART.finditer(text):
        part = next(g for g in m.groups() if g).lower()
        minute = PARTS[part]
        found.append(SpokenTime(m.start(), m.end(), minute, f"'{m.group().strip()}' as {_hhmm(minute)}"))
    found.sort(key=lambda t: (t.start, -t.end))
    kept: list[SpokenTime] = []
    for t in found:
        if not kept or t.start >= kept[-1].end:
            kept.append(t)
    return kept


def anchor_at(text: str, at: int, day: date | None) -> SpokenTime | None:
    """A time-of-day word starting at ``at`` (the end of a range: "from three until sunset")."""
    m = _BARE_ANCHOR.match(text, at)
    if m is None:
        return None
    start, _, what = anchor_span(m.group(1), day)
    return SpokenTime(m.start(), m.end(), start, f"'{m.group().strip()}' as {_hhmm(start)} ({what})")
