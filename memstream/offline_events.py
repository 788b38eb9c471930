"""An event read from an ordinary English sentence by plain rules: when (a time, perhaps a range and a
day) and where (a place after "at", "in", "to" or "by"). The offline stand-in model's reader only;
a real model answers in structure and never passes through here.

What it reads, as a person would write it:

- times: "17:00", "5:30 pm", "5pm", "5 p.m.", "noon", "midnight", "five o'clock", "half past five",
  "quarter to six", "ten past seven", "five thirty", and a bare hour after "at"/"from"/"between"/
  "around" ("at five", "at 5"); the part of the day said anywhere in the sentence ("in the
  morning", "this evening", "tonight"; the one nearest the time) sets am or pm. A bare hour with none is read in waking
  hours (the rules' assumption): 7 to 11 in the morning, 12 at noon, 1 to 6 in the afternoon.
  A clock from 13:00, or written with a leading zero ("05:30"), is a 24-hour clock; "5:30" is read
  like a bare hour.
- ranges: "from 5 to 7 pm", "between five and seven in the evening", "5-7pm", "from 17:00 to 19:00":
  the start takes the end's half of the day when it can, so a range never runs backwards;
  "for two hours" or "for 90 minutes" after a single time gives its length.
- days: a month and day ("February 14th", "14 Feb", "the 14th of February"), a weekday ("on
  Tuesday", in any case), or a day relative to the sentence's own day ("today", "tonight",
  "this evening", "tomorrow evening", "the day after tomorrow").
- places: a phrase after at/in/to/by that is not a time or a day: a name of the town (any case)
  when the caller knows the names, else a capitalised name, else "the ..." ("in the cafe"), else
  any plain phrase; "at" and "in" before "by", before "to" ("go to the party at the cafe" is at
  the cafe). A place named in lower case resolves to the town's building as any plan location
  does (by words, case-insensitively).
- times said in words when no clock time is said ("just before sunset", "after lunch", "first
  thing", "by the end of the day": :mod:`memstream.spoken_times`), each reading kept in
  ``Commitment.reading``; "next Monday", "in two days"; "an hour long", "for an hour and a half".
- corrections: what a statement takes back ("no longer at noon", "not on Friday", "moved from 2
  pm") is not read, so the new time, day or place is (:mod:`memstream.offline_corrections`);
  ``corrects`` and ``cancelled`` say so, for :func:`memstream.offline_news.standing` to replace
  the older statement. ``docs/offline.md`` has every rule and what is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from memstream.offline_corrections import cancels, corrects, taken_back
from memstream.offline_text import STOPWORDS
from memstream.spoken_times import MAY_HOLD_WORDS, anchor_at, spoken_times
from memstream.timeutil import minute_of_day

_MONTHS = ("january february march april may june july august september october november "
           "december").split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUMBERS = "one two three four five six seven eight nine ten eleven twelve".split()
_MINUTES = {"five": 5, "ten": 10, "fifteen": 15, "twenty": 20, "twenty-five": 25, "thirty": 30,
            "thirty-five": 35, "forty": 40, "forty-five": 45, "fifty": 50, "fifty-five": 55, "oh five": 5}
_AMOUNTS = {"an": 1, "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10}

_I = re.IGNORECASE
_HOUR = r"(1[0-2]|0?[1-9]|" + "|".join(_NUMBERS) + r")"
_MINUTE_WORD = "(" + "|".join(sorted(_MINUTES, key=len, reverse=True)) + ")"
_HALF = r"(a\.?m\b\.?|p\.?m\b\.?)"
#: Each way of writing one time: (pattern, how to read its groups). Groups: hour, minute, half (am/pm).
_FORMS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b([01]?\d|2[0-3]):([0-5]\d)(?:\s*{_HALF})?", _I), "clock"),
    (re.compile(rf"\b{_HOUR}(?:\s*o'?clock)?\s*{_HALF}", _I), "hour-half"),
    (re.compile(rf"\b(half|quarter|{_MINUTE_WORD[1:-1]}|\d{{1,2}}(?=\s+minutes))(?:\s+minutes)?\s+(past|after|to)\s+{_HOUR}\b"
                rf"(?:\s*{_HALF})?", _I), "past-to"),
    (re.compile(rf"\b{_HOUR}[\s-]+{_MINUTE_WORD}\b(?!\s+(?:minutes|past|to|after)\b)(?:\s*{_HALF})?", _I), "words"),
    (re.compile(rf"\b{_HOUR}\s+o'?clock\b", _I), "oclock"),
    (re.compile(r"\b(noon|midday|midnight)\b", _I), "noon"),
    (re.compile(rf"\b(?:at|from|between|around|about)\s+{_HOUR}\b"
                r"(?=\s*(?:$|[.,;!?)]|(?:to|until|till|and|in|inside|on|at|by|near|for|with|sharp|tonight|today|tomorrow|this|next)\b"
                r"|[-–]))", _I), "bare"),
    (re.compile(rf"\b{_HOUR}(?=\s*(?:-|–|to|until|till)\s*{_HOUR}(?::[0-5]\d)?\s*{_HALF})", _I), "bare"),
]
#: A bare hour a correction moves to ("moved to four"), read with the corrections.
_MOVED_TO = (re.compile(rf"\b(?:moved|changed|rescheduled|postponed|pushed back|put back|brought forward)\s+"
                        rf"(?:to|till|until)\s+{_HOUR}\b", _I), "bare")
_CONNECTOR = re.compile(r"\s*(?:to|until|till|and|-|–|—)\s*", _I)
_BARE_END = re.compile(rf"{_HOUR}\b(?:\s*{_HALF})?", _I)
_AMOUNT = r"(an?|one|two|three|four|five|six|\d{1,3}|half an?)"
#: How long: "for two hours", "for half an hour", "for an hour and a half", "lasts 90 minutes", "an hour long",
#: "a two-hour picnic".
_LENGTH = re.compile(rf"\b(?:for|lasts?|lasting|takes?)\s+{_AMOUNT}\s+(hours?|minutes?|mins?)\b(\s+and\s+a\s+half)?"
                     rf"|\b{_AMOUNT}[\s-](hours?|minutes?)[\s-]long\b|\b{_AMOUNT}-(hour|minute)\b", _I)
_MORNING = re.compile(r"\b(?:in the morning|this morning|(?:tomorrow|monday|tuesday|wednesday|thursday|friday|"
                      r"saturday|sunday) morning|a\.?m\b)", _I)
_LATER = re.compile(r"\b(?:in the (?:afternoon|evening)|at night|tonight|this (?:afternoon|evening)|"
                    r"(?:tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday) "
                    r"(?:afternoon|evening|night))\b", _I)

_MONTH = "(" + "|".join(rf"{m[:3]}(?:{m[3:]})?\.?" if len(m) > 3 else m for m in _MONTHS) + ")"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(?:the\s+)?{_ORDINAL}\b|\b(?:the\s+)?{_ORDINAL}\s+(?:of\s+)?{_MONTH}(?!\w)", _I)
_WEEKDAY = re.compile(r"\b(?:on\s+|(next)\s+|this\s+(?:coming\s+)?)?(" + "|".join(_WEEKDAYS) + r")\b", _I)
_RELATIVE = re.compile(r"\b(the day after tomorrow|tomorrow|today|tonight|this (?:morning|afternoon|evening)"
                       r"|in (?:a|one|two|three|four|five|six|\d) (?:days?|weeks?))\b", _I)
_OFFSETS = {"the day after tomorrow": 2, "tomorrow": 1}
_IN_DAYS = re.compile(r"in (\w+) (day|week)", _I)

_PREPOSITION = re.compile(r"\b(at|in|inside|to|by)\s+", _I)
_RANK = {"at": 0, "in": 0, "inside": 0, "by": 1, "to": 2}
_WORD = re.compile(r"[\w'’&-]+")
_JOINERS = frozenset({"and", "of", "the", "de", "la", "on"})
_ARTICLES = frozenset("a an the his her their my our".split())
_NOT_PLACES = STOPWORDS | frozenset("""least first last once all noon midday midnight morning afternoon evening
night o'clock half quarter past where because then soon which who while when""".split()) | frozenset(_NUMBERS)
_MASK = "\x00"
#: Words that end an event's name ("the picnic is ...", "the choir meets ..."): a verb after the name.
_ENDS_A_NAME = frozenset("""is are was were has have had will would it its starts start begins begin meets meet runs
opens takes starting beginning""".split())


@dataclass(frozen=True)
class Commitment:
    """An event read from a sentence by rules: when (``HH:MM``, how long if said), where, on what day.

    ``month_day`` is an explicit date; ``weekday`` a named day; ``offset`` the days after the one the
    sentence was written (0 today or tonight, 1 tomorrow, 2 the day after). With none of them, the
    event is on the day it was written.
    """

    time: str
    place: str
    event: str = ""
    minutes: int | None = None
    month_day: tuple[int, int] | None = None
    weekday: int | None = None
    offset: int | None = None
    next_week: bool = False  # "next Tuesday": a weekday after the day it was said, never that day itself
    reading: str = ""        # the words read as a time, a day or a length, and what they were read as
    corrects: bool = False   # the sentence corrects (or calls off) something said before
    cancelled: bool = False  # the sentence calls the event off

    @property
    def has_day(self) -> bool:
        """Whether the sentence named a day (else the event is on the day it was said)."""
        return self.month_day is not None or self.weekday is not None or self.offset is not None

    @property
    def activity(self) -> str:
        return f"go to the {self.event}" if self.event else f"go to {self.place}"

    @property
    def hours(self) -> str:
        """"from 16:00 to 17:00" when the end is known, else "at 16:00"."""
        if not self.minutes:
            return f"at {self.time}"
        end = minute_of_day(self.time) + self.minutes
        return f"from {self.time} to {end // 60 % 24:02d}:{end % 60:02d}"

    @property
    def when(self) -> str:
        """The day as the sentence named it: "on 14 February", "on Friday", "tomorrow" or "today"."""
        if self.month_day:
            return f"on {self.month_day[1]} {_MONTHS[self.month_day[0] - 1].capitalize()}"
        if self.weekday is not None:
            return f"on {_WEEKDAYS[self.weekday].capitalize()}"
        return {1: "tomorrow", 2: "the day after tomorrow"}.get(self.offset or 0, "today")

    def on(self, day: date, written: date) -> bool:
        """Whether the event falls on ``day``, for a sentence written on ``written``."""
        if self.month_day:
            return (day.month, day.day) == self.month_day
        if self.weekday is not None:
            ahead = (day - written).days
            return day.weekday() == self.weekday and (1 <= ahead <= 7 if self.next_week else 0 <= ahead < 7)
        return day == written + timedelta(days=self.offset or 0)

    def next_day(self, day: date, written: date) -> date | None:
        """The day of the event if it is ``day`` or later (still to come), else None."""
        if self.month_day:
            return date(day.year, *self.month_day) if (day.month, day.day) <= self.month_day else None
        return next((day + timedelta(days=n) for n in range(8) if self.on(day + timedelta(days=n), written)), None)


@dataclass(frozen=True)
class _Time:
    start: int           # where it was written
    end: int
    hour: int            # 0-23 when ``fixed``, else 1-12
    minute: int
    half: str | None     # "a" or "p" when said
    fixed: bool          # a 24-hour clock (or noon/midnight): no half of the day to choose
    reading: str = ""    # for a time said in words: what the words were read as


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS.index(word.lower()) + 1


def _half(text: str | None) -> str | None:
    return text.lower()[0] if text else None


def _read(form: str, m: re.Match[str]) -> _Time:
    g = m.groups()
    if form == "clock":
        hour, minute, half = int(g[0]), int(g[1]), _half(g[2])
        fixed = half is None and (hour == 0 or hour > 12 or g[0].startswith("0"))
        return _Time(m.start(), m.end(), hour, minute, half, fixed)
    if form == "hour-half":
        return _Time(m.start(), m.end(), _number(g[0]), 0, _half(g[1]), False)
    if form == "past-to":
        amount = {"half": 30, "quarter": 15}.get(g[0].lower()) or _MINUTES.get(g[0].lower()) or int(g[0])
        hour = _number(g[2])
        if g[1].lower() == "to":
            hour, amount = (hour - 2) % 12 + 1, 60 - amount
        return _Time(m.start(), m.end(), hour, amount % 60, _half(g[3]), False)
    if form == "words":
        return _Time(m.start(), m.end(), _number(g[0]), _MINUTES[g[1].lower()], _half(g[2]), False)
    if form == "oclock":
        return _Time(m.start(), m.end(), _number(g[0]), 0, None, False)
    if form == "noon":
        return _Time(m.start(), m.end(), 0 if g[0].lower() == "midnight" else 12, 0, None, True)
    return _Time(m.start(), m.end(), _number(g[0]), 0, None, False)  # bare: "at five", its preposition too


#: Whether a text may hold a time at all (a digit or a time word): most statements do not, and are
#: read no further (an agent's every observation is rated, so this is on the simulation's hot path).
_MAY_HOLD_A_TIME = re.compile(r"\d|\b(?:noon|midday|midnight|" + "|".join(_NUMBERS) + r")\b", _I)


def _times(text: str, day: date | None = None, words: bool = True) -> list[_Time]:
    """Every time written in ``text``, in order, none overlapping (the earlier, then the longer, wins):
    the clock times, or (``words``) when there are none the times said in words
    (:mod:`memstream.spoken_times`, ``day`` being the day the sentence is about, for the sun)."""
    found: list[_Time] = []
    if _MAY_HOLD_A_TIME.search(text):
        forms = [*_FORMS, _MOVED_TO] if words else _FORMS
        found = sorted((_read(form, m) for pattern, form in forms for m in pattern.finditer(text)),
                       key=lambda t: (t.start, -t.end))
    if words and not found and MAY_HOLD_WORDS.search(text):
        found = [_Time(t.start, t.end, t.minute // 60, t.minute % 60, None, True, t.reading)
                 for t in spoken_times(text, day)]
    kept: list[_Time] = []
    for t in found:
        if not kept or t.start >= kept[-1].end:
            kept.append(t)
    return kept


def _minutes_of(t: _Time, half: str | None) -> int:
    """Minutes after midnight; ``half`` ("a"/"p") is the part of the day said around it, if any."""
    if t.fixed:
        return t.hour * 60 + t.minute
    half = t.half or half
    hour = t.hour % 12
    if half == "p" or (half is None and 1 <= t.hour <= 6):
        hour += 12
    if half is None and t.hour == 12:
        hour = 12
    return hour * 60 + t.minute


def _readings(t: _Time) -> list[int]:
    """The minutes after midnight a time may mean: one for a 24-hour clock, else am and pm."""
    if t.fixed:
        return [t.hour * 60 + t.minute]
    return [(t.hour % 12) * 60 + t.minute + 12 * 60 * k for k in (0, 1)]


def _range_end(text: str, first: _Time, times: list[_Time], day: date | None, words: bool) -> _Time | None:
    """The end of a range that starts at ``first`` ("from 5 to 7 pm", "between five and seven", "from
    three until sunset")."""
    link = _CONNECTOR.match(text, first.end)
    if not link:
        return None
    after = next((t for t in times if t.start == link.end()), None)
    if after:
        return after
    if words and (spoken := anchor_at(text, link.end(), day)):
        return _Time(spoken.start, spoken.end, spoken.minute // 60, spoken.minute % 60, None, True, spoken.reading)
    bare = _BARE_END.match(text, link.end())
    return _Time(bare.start(), bare.end(), _number(bare.group(1)), 0, _half(bare.group(2)), False) if bare else None


def _when(text: str, day: date | None = None,
          words: bool = True) -> tuple[tuple[int, int], int | None, tuple[int, int], str] | None:
    """(start (hour, minute), minutes it lasts if said, the span of text it took, how words were read),
    or None; ``words``: times said in words too."""
    times = _times(text, day, words)
    if not times:
        return None
    first = times[0]
    said = _part_of_day(text, first.start)
    end = _range_end(text, first, times, day, words)
    if end is None:
        start = _minutes_of(first, said)
        length = _LENGTH.search(text)
        minutes = _length(length) if length else None
        readings = [first.reading, f"'{length.group().strip()}' as {minutes} minutes"
                    if length and not re.search(r"\d", length.group()) else ""]
        return (start // 60, start % 60), minutes, (first.start, first.end), "; ".join(r for r in readings if r)
    if end.fixed or end.half:  # "from 5 to 7 pm": the start takes the end's half of the day if it can
        stop = _minutes_of(end, said)
        before = [o for o in _readings(first) if o < stop]
        start = _minutes_of(first, said) if first.fixed or first.half or not before else max(before)
    else:  # "from five to seven", "from 9 to 11": the end is the first reading after the start
        start = _minutes_of(first, said)
        stop = min((o for o in _readings(end) if o > start), default=_minutes_of(end, said))
    minutes = (stop - start) % (24 * 60)
    reading = "; ".join(r for r in (first.reading, end.reading) if r)
    return (start // 60, start % 60), minutes or None, (first.start, end.end), reading


def _part_of_day(text: str, near: int) -> str | None:
    """"a" or "p": the part of the day said nearest to ``near`` ("tomorrow evening at five"), if any."""
    said = [(abs(m.start() - near), half) for pattern, half in ((_MORNING, "a"), (_LATER, "p"))
            for m in pattern.finditer(text)]
    return min(said)[1] if said else None


def _length(m: re.Match[str]) -> int:
    """Minutes of a length said (:data:`_LENGTH`'s three forms)."""
    amount, unit = next((m.group(i), m.group(i + 1)) for i in (1, 4, 6) if m.group(i))
    n = 0.5 if amount.lower().startswith("half") else _AMOUNTS.get(amount.lower()) or int(amount)
    n += 0.5 if m.group(3) else 0
    return round(n * (60 if unit.lower().startswith("hour") else 1))


def _day(text: str) -> tuple[tuple[int, int] | None, int | None, int | None, bool, list[tuple[int, int]]]:
    """(month and day, weekday, offset in days, whether the weekday is "next", the spans of text that said
    them)."""
    spans = []
    month_day = None
    if md := _MONTH_DAY.search(text):
        month, day = (md.group(1), md.group(2)) if md.group(1) else (md.group(4), md.group(3))
        month_day = (next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(month.lower().rstrip(".")[:3])),
                     int(day))
        spans.append(md.span())
    weekday = _WEEKDAY.search(text)
    if weekday:
        spans.append(weekday.span())
    relative = _RELATIVE.search(text)
    if relative:
        spans.append(relative.span())
    valid = month_day if month_day and 1 <= month_day[1] <= 31 else None
    offset = None
    if relative:
        said = relative.group(1).lower()
        counted = _IN_DAYS.match(said)
        offset = _OFFSETS.get(said, 0) if not counted else \
            (_AMOUNTS.get(counted.group(1)) or int(counted.group(1))) * (7 if counted.group(2) == "week" else 1)
    return (valid, _WEEKDAYS.index(weekday.group(2).lower()) if weekday else None, offset,
            bool(weekday and weekday.group(1)), spans)


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with the spans (times, days) blanked, so that no place is read from them."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = _MASK * (b - a)
    return "".join(chars)


def _phrase(text: str, at: int) -> str:
    """The place phrase starting at ``at``: up to five words, ending at a function word (a joiner
    like "and"/"of" only between capitalised words), at punctuation or at a blanked time."""
    words: list[str] = []
    pos = at
    for m in _WORD.finditer(text, at):
        if text[pos:m.start()].strip() or len(words) == 5:  # punctuation or a blanked time between
            break
        word, lower = m.group(), m.group().lower()
        if lower in _JOINERS and not (lower == "the" and not words):
            following = _WORD.match(text, m.end() + 1)
            if not (words and words[-1][:1].isupper() and text[m.end():m.end() + 1] == " " and following
                    and following.group()[:1].isupper()):
                break
        elif (lower in _NOT_PLACES and not (lower == "the" and not words)) or lower.isdigit():
            break
        words.append(word)
        pos = m.end()
    while words and words[-1].lower() in _JOINERS:
        words.pop()
    return " ".join(words)


def _place(text: str, places: Iterable[str]) -> tuple[str, int] | None:
    """(the place, where its preposition starts) in the blanked ``text``: a known name of the town
    first, then a capitalised name, "the ...", a plain phrase; "at"/"in" before "by" before "to";
    then the earlier."""
    lowered = text.lower()
    candidates = [(-1, _RANK[m.group(1)], m.start(), name) for name in places
                  for m in re.finditer(rf"\b(at|in|inside|to|by)\s+(?:the\s+)?{re.escape(name.lower())}\b", lowered)]
    for m in _PREPOSITION.finditer(text):
        phrase = _phrase(text, m.end())
        core = phrase[4:] if phrase.lower().startswith("the ") else phrase
        rank = _RANK[m.group(1).lower()]
        kind = 0 if core[:1].isupper() else 1 if phrase != core else 2
        if core and core.lower() not in _ARTICLES and not (kind == 2 and rank > 0):  # not "to finish", "by now"
            candidates.append((kind, rank, m.start(), phrase))
    if not candidates:
        return None
    _, _, start, place = min(candidates)
    return place, start


def _event(text: str, before: int) -> str:
    """What the event is called: the words after the last article within six words before the place."""
    words = [w for w in text[:before].split() if _MASK not in w]
    for back in range(1, min(7, len(words)) + 1):
        if words[-back].lower() in _ARTICLES:
            named = words[-back + 1:] if back > 1 else []
            cut = next((i for i, w in enumerate(named) if w.lower().strip(",;:") in _ENDS_A_NAME), len(named))
            named = named[:cut]
            while named and named[-1].lower() in STOPWORDS:
                named.pop()
            return " ".join(named).strip(" ,;:")
    return ""


def commitment(text: str, places: Iterable[str] = (), day: date | None = None, *,
               clock_only: bool = False) -> Commitment | None:
    """The event in ``text`` if it says both a time and a place (None otherwise). ``places``: the
    town's place names the reader knows, matched in any case ahead of the grammar's guesses; ``day``:
    the day the sentence was said, if known (for the sun and days said relative to it). What a
    correction takes back ("no longer at noon") is not read (:mod:`memstream.offline_corrections`).
    ``clock_only``: only a time said on the clock, no correction read (the importance rule's reading:
    :mod:`memstream.stream.offline`)."""
    if clock_only:
        c = _read_event(text, places if isinstance(places, tuple) else tuple(places), day, True)
    else:
        c = partial_commitment(text, places, day)
    return c if c and c.time and c.place else None


def partial_commitment(text: str, places: Iterable[str] = (), day: date | None = None) -> Commitment | None:
    """What ``text`` says of an event, a time or a place possibly missing ("" then): a correction may
    say only the new time ("it now starts at three"); None when it says neither and corrects nothing.

    Read once per (text, places, day): the same memories are shown to stage after stage, and every
    observation is rated (the simulation's hot path)."""
    return _read_event(text, places if isinstance(places, tuple) else tuple(places), day, False)


@lru_cache(maxsize=1 << 16)
def _read_event(text: str, places: tuple[str, ...], day: date | None, clock_only: bool) -> Commitment | None:
    words = not clock_only
    may_correct = words and bool(_MAY_CORRECT.search(text))
    if not (may_correct or _MAY_HOLD_A_TIME.search(text) or (words and MAY_HOLD_WORDS.search(text))):
        return None
    correcting = may_correct and corrects(text)
    if correcting:
        text = _masked(text, taken_back(text))
    month_day, weekday, offset, next_week, day_spans = _day(text)
    when = _when(text, _event_day(day, month_day, weekday, offset, next_week), words)
    if when is None and not correcting:
        return None
    (hour, minute), minutes, time_span, reading = when or ((0, 0), None, (0, 0), "")
    parts_of_day = [m.span() for pattern in (_MORNING, _LATER) for m in pattern.finditer(text)]
    written_times = [(t.start, t.end) for t in _times(text, None, words)]
    masked = _masked(text, [time_span, *day_spans, *parts_of_day, *written_times])
    found = _place(masked, places)
    place, start = found if found else ("", len(masked))
    if not when and not found and not correcting:
        return None
    day_words = [text[a:b].strip() for a, b in day_spans if text[a:b].strip().lower() not in ("today", "tomorrow")
                 and not _MONTH_DAY.fullmatch(text[a:b].strip())]
    reading = "; ".join([reading, *(f"'{w}' as a day" for w in day_words if w.lower().startswith(("next", "in ")))])
    return Commitment(time=f"{hour:02d}:{minute:02d}" if when else "", place=place,
                      event=_event(masked, start) if found else _subject(masked),
                      minutes=minutes if minutes and minutes > 0 else None, month_day=month_day,
                      weekday=weekday, offset=offset, next_week=next_week, reading=reading.strip("; "),
                      corrects=correcting, cancelled=correcting and cancels(text))


_MAY_CORRECT = re.compile(r"no longer|not\b|n't|instead|rather|moved|cancel|called off|scrapped|turns out|actually|"
                          r"postponed|rescheduled|brought forward|changed to|correction", _I)


def _event_day(written: date | None, month_day: tuple[int, int] | None, weekday: int | None, offset: int | None,
               next_week: bool) -> date | None:
    """The day a sentence is about, as far as it can be told (for the sun): its date, else the day
    named relative to the day it was said, else that day; None when neither is known."""
    if month_day:
        try:
            return date(written.year if written else 2001, *month_day)
        except ValueError:
            return written
    if written is None:
        return None
    if weekday is not None:
        return next(written + timedelta(days=n) for n in range(1 if next_week else 0, 8)
                    if (written + timedelta(days=n)).weekday() == weekday)
    return written + timedelta(days=offset or 0)


def _subject(text: str) -> str:
    """What a sentence without a place is about: the words after its first article ("the picnic is
    cancelled" -> "picnic"), up to a verb or a function word."""
    words = [w for w in _WORD.findall(text) if _MASK not in w]
    for i, w in enumerate(words):
        if w.lower() in _ARTICLES:
            named = []
            for nxt in words[i + 1:i + 5]:
                if nxt.lower() in STOPWORDS or nxt.lower() in _NOT_PLACES:
                    break
                named.append(nxt)
            if named:
                return " ".join(named)
    return ""


_NAMED = re.compile(r"\b(?:at|in|to) +((?:The +)?[A-Z][\w'’]*(?: +(?:[A-Z][\w'’]*|and|of|de|la))*)"
                    r"|\(([A-Z][^()]*)\)")


def named_places(text: str) -> list[str]:
    """The place names a prompt spells out (capitalised after at/in/to, or in brackets as a routine's
    places are), for :func:`commitment` to find again in any case."""
    found = (a or b for a, b in _NAMED.findall(text))
    return sorted({re.sub(r"\s+(?:and|of|de|la)$", "", name.strip()) for name in found})


def date_words(day: date) -> str:
    """How a commitment names a day: "14 February"."""
    return f"{day.day} {_MONTHS[day.month - 1].capitalize()}"
