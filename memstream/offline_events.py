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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from memstream.offline_text import STOPWORDS
from memstream.timeutil import minute_of_day

_MONTHS = ("january february march april may june july august september october november "
           "december").split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUMBERS = "one two three four five six seven eight nine ten eleven twelve".split()
_MINUTES = {"five": 5, "ten": 10, "fifteen": 15, "twenty": 20, "twenty-five": 25, "thirty": 30,
            "thirty-five": 35, "forty": 40, "forty-five": 45, "fifty": 50, "fifty-five": 55, "oh five": 5}
_AMOUNTS = {"an": 1, "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

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
_CONNECTOR = re.compile(r"\s*(?:to|until|till|and|-|–|—)\s*", _I)
_BARE_END = re.compile(rf"{_HOUR}\b(?:\s*{_HALF})?", _I)
_LENGTH = re.compile(r"\bfor\s+(an?|one|two|three|four|five|six|\d{1,3}|half an?)\s+(hours?|minutes?|mins?)\b", _I)
_MORNING = re.compile(r"\b(?:in the morning|this morning|(?:tomorrow|monday|tuesday|wednesday|thursday|friday|"
                      r"saturday|sunday) morning|a\.?m\b)", _I)
_LATER = re.compile(r"\b(?:in the (?:afternoon|evening)|at night|tonight|this (?:afternoon|evening)|"
                    r"(?:tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday) "
                    r"(?:afternoon|evening|night))\b", _I)

_MONTH = "(" + "|".join(rf"{m[:3]}(?:{m[3:]})?\.?" if len(m) > 3 else m for m in _MONTHS) + ")"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(?:the\s+)?{_ORDINAL}\b|\b(?:the\s+)?{_ORDINAL}\s+(?:of\s+)?{_MONTH}(?!\w)", _I)
_WEEKDAY = re.compile(r"\b(?:on\s+|next\s+|this\s+)?(" + "|".join(_WEEKDAYS) + r")\b", _I)
_RELATIVE = re.compile(r"\b(the day after tomorrow|tomorrow|today|tonight|this (?:morning|afternoon|evening))\b", _I)
_OFFSETS = {"the day after tomorrow": 2, "tomorrow": 1}

_PREPOSITION = re.compile(r"\b(at|in|inside|to|by)\s+", _I)
_RANK = {"at": 0, "in": 0, "inside": 0, "by": 1, "to": 2}
_WORD = re.compile(r"[\w'’&-]+")
_JOINERS = frozenset({"and", "of", "the", "de", "la", "on"})
_ARTICLES = frozenset("a an the his her their my our".split())
_NOT_PLACES = STOPWORDS | frozenset("""least first last once all noon midday midnight morning afternoon evening
night o'clock half quarter past where because then soon which who while when""".split()) | frozenset(_NUMBERS)
_MASK = "\x00"


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
            return day.weekday() == self.weekday and 0 <= (day - written).days < 7
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


def _times(text: str) -> list[_Time]:
    """Every time written in ``text``, in order, none overlapping (the earlier, then the longer, wins)."""
    if not _MAY_HOLD_A_TIME.search(text):
        return []
    found = sorted((_read(form, m) for pattern, form in _FORMS for m in pattern.finditer(text)),
                   key=lambda t: (t.start, -t.end))
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


def _range_end(text: str, first: _Time, times: list[_Time]) -> _Time | None:
    """The end of a range that starts at ``first`` ("from 5 to 7 pm", "between five and seven")."""
    link = _CONNECTOR.match(text, first.end)
    if not link:
        return None
    after = next((t for t in times if t.start == link.end()), None)
    if after:
        return after
    bare = _BARE_END.match(text, link.end())
    return _Time(bare.start(), bare.end(), _number(bare.group(1)), 0, _half(bare.group(2)), False) if bare else None


def _when(text: str) -> tuple[tuple[int, int], int | None, tuple[int, int]] | None:
    """(start (hour, minute), minutes it lasts if said, the span of text it took), or None."""
    times = _times(text)
    if not times:
        return None
    first = times[0]
    said = _part_of_day(text, first.start)
    end = _range_end(text, first, times)
    if end is None:
        start = _minutes_of(first, said)
        length = _LENGTH.search(text, first.end)
        minutes = _length(length) if length else None
        return (start // 60, start % 60), minutes, (first.start, first.end)
    if end.fixed or end.half:  # "from 5 to 7 pm": the start takes the end's half of the day if it can
        stop = _minutes_of(end, said)
        before = [o for o in _readings(first) if o < stop]
        start = _minutes_of(first, said) if first.fixed or first.half or not before else max(before)
    else:  # "from five to seven", "from 9 to 11": the end is the first reading after the start
        start = _minutes_of(first, said)
        stop = min((o for o in _readings(end) if o > start), default=_minutes_of(end, said))
    minutes = (stop - start) % (24 * 60)
    return (start // 60, start % 60), minutes or None, (first.start, end.end)


def _part_of_day(text: str, near: int) -> str | None:
    """"a" or "p": the part of the day said nearest to ``near`` ("tomorrow evening at five"), if any."""
    said = [(abs(m.start() - near), half) for pattern, half in ((_MORNING, "a"), (_LATER, "p"))
            for m in pattern.finditer(text)]
    return min(said)[1] if said else None


def _length(m: re.Match[str]) -> int:
    amount = m.group(1).lower()
    n = 0.5 if amount.startswith("half") else _AMOUNTS.get(amount) or int(amount)
    return round(n * (60 if m.group(2).lower().startswith("hour") else 1))


def _day(text: str) -> tuple[tuple[int, int] | None, int | None, int | None, list[tuple[int, int]]]:
    """(month and day, weekday, offset in days, the spans of text that said them)."""
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
    return (valid, _WEEKDAYS.index(weekday.group(1).lower()) if weekday else None,
            _OFFSETS.get(relative.group(1).lower(), 0) if relative else None, spans)


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
            while named and named[-1].lower() in STOPWORDS:
                named.pop()
            return " ".join(named).strip(" ,;:")
    return ""


def commitment(text: str, places: Iterable[str] = ()) -> Commitment | None:
    """The event in ``text`` if it says both a time and a place (None otherwise). ``places``: the
    town's place names the reader knows, matched in any case ahead of the grammar's guesses."""
    when = _when(text)
    if when is None:
        return None
    (hour, minute), minutes, time_span = when
    month_day, weekday, offset, day_spans = _day(text)
    parts_of_day = [m.span() for pattern in (_MORNING, _LATER) for m in pattern.finditer(text)]
    masked = _masked(text, [time_span, *day_spans, *parts_of_day, *((t.start, t.end) for t in _times(text))])
    found = _place(masked, places)
    if found is None:
        return None
    place, start = found
    return Commitment(time=f"{hour:02d}:{minute:02d}", place=place, event=_event(masked, start),
                      minutes=minutes if minutes and minutes > 0 else None, month_day=month_day,
                      weekday=weekday, offset=offset)


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
