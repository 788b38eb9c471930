"""Small text helpers the offline stand-in model uses to answer like a (very plain) writer."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta

from memstream.timeutil import minute_of_day

_STOPWORDS = """a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more most my
myself no nor not now of off on once only or other our ours out over own same she should so some such than
that the their theirs them then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself today yesterday tomorrow
said says told tell one two also really going get got went go"""
STOPWORDS = frozenset(_STOPWORDS.split())

_NAME = re.compile(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b")
_WORD = re.compile(r"[a-z][a-z'-]+")


def names(text: str) -> list[str]:
    """Capitalised words and runs of them (people, places), minus sentence-starting function words."""
    return [n for n in _NAME.findall(text) if n.lower() not in STOPWORDS]


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 2]


def frequent(items: list[str], n: int, min_count: int = 1) -> list[str]:
    """The n most frequent items, ties broken by first appearance (deterministic)."""
    counts = Counter(items)
    first = {x: i for i, x in reversed(list(enumerate(items)))}
    ranked = sorted(counts, key=lambda x: (-counts[x], first[x]))
    return [x for x in ranked if counts[x] >= min_count][:n]


_IRREGULAR = {"be": "being", "have": "having", "lie": "lying", "die": "dying", "see": "seeing", "go": "going"}
_DOUBLE = {"run", "sit", "get", "set", "shop", "swim", "stop", "plan", "chat", "jog", "put", "cut", "begin"}


#: First words that do not start a verb phrase ("the party", "his work", "at the cafe").
_NOT_VERBS = frozenset("""a an the his her their my our your its this that these those at in on to for from with by
of and or but as after before during while about into onto""".split())


def is_verb_phrase(phrase: str) -> bool:
    """Whether ``phrase`` starts with a verb, as plan activities do ("serve coffee"): its first word is
    a lowercase word that is not an article, a pronoun's possessive or a preposition."""
    head = phrase.strip().split(" ", 1)[0]
    return bool(head) and head.isalpha() and head.islower() and head not in _NOT_VERBS


def doing(name: str, activity: str) -> str:
    """What another agent sees: "Ann is serving coffee", or "Ann is busy with the party" for a noun phrase."""
    return f"{name} is {gerund(activity)}" if is_verb_phrase(activity) else f"{name} is busy with {activity}"


def gerund(phrase: str) -> str:
    """'have breakfast' -> 'having breakfast': the first verb of a plan activity in -ing form.
    Anything that is not a verb phrase is returned as it is."""
    head, _, rest = phrase.strip().partition(" ")
    word = head.lower()
    if not word or word.endswith("ing") or not is_verb_phrase(phrase):
        return phrase
    if word in _IRREGULAR:
        ing = _IRREGULAR[word]
    elif word in _DOUBLE:
        ing = word + word[-1] + "ing"
    elif word.endswith("ie"):
        ing = word[:-2] + "ying"
    elif word.endswith("e") and not word.endswith(("ee", "ye", "oe")):
        ing = word[:-1] + "ing"
    else:
        ing = word + "ing"
    return f"{ing} {rest}".strip()


# -- commitments: an event with a time and a place, as plain rules read them ----------------------

_MONTHS = ("january february march april may june july august september october november "
           "december").split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_MONTH = "(" + "|".join(m.capitalize() for m in _MONTHS) + ")"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_ORDINAL}\b|\b{_ORDINAL}\s+(?:of\s+)?{_MONTH}\b")
_WEEKDAY = re.compile(r"\b(" + "|".join(d.capitalize() for d in _WEEKDAYS) + r")\b")
_RELATIVE = re.compile(r"\b(today|tonight|this (?:morning|afternoon|evening)|tomorrow)\b", re.IGNORECASE)
_CLOCK = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_AMPM = re.compile(r"\b(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*([ap])\.?m\b\.?", re.IGNORECASE)
_CLOCK_RANGE = re.compile(r"\bfrom\s+([01]?\d|2[0-3]):([0-5]\d)\s*(?:to|until|till|-)\s*([01]?\d|2[0-3]):([0-5]\d)\b")
_RANGE = re.compile(r"\bfrom\s+(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*(?:([ap])\.?m\.?)?\s*(?:to|until|till|-)\s*"
                    r"(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*([ap])\.?m\b", re.IGNORECASE)
_PLACE = re.compile(r"\bat\s+((?:[Tt]he\s+)?[A-Z][\w'’]*(?:\s+(?:[A-Z][\w'’]*|and|of|the|de|la))*)")
_ARTICLES = frozenset("a an the his her their my our".split())


@dataclass(frozen=True)
class Commitment:
    """An event read from a sentence by rules: when (``HH:MM``, how long if said), where, on what day.

    ``month_day`` is an explicit date; ``weekday`` a named day; ``offset`` 0 for today/tonight and
    1 for tomorrow, counted from the day the sentence was written. With none of them, the event is
    on the day it was written.
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
        return "tomorrow" if self.offset == 1 else "today"

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


def _hhmm(hour: str, minute: str | None, half: str | None) -> tuple[int, int]:
    h, m = int(hour), int(minute or 0)
    if half and half.lower() == "p" and h < 12:
        h += 12
    if half and half.lower() == "a" and h == 12:
        h = 0
    return h, m


def commitment(text: str) -> Commitment | None:
    """The first event in ``text`` that has both a clock time and a capitalised place after "at"."""
    place_match = _PLACE.search(text)
    span = _RANGE.search(text)
    clock_span = _CLOCK_RANGE.search(text)
    if clock_span:
        h1, m1, h2, m2 = (int(g) for g in clock_span.groups())
        clock, minutes = (h1, m1), (h2 * 60 + m2) - (h1 * 60 + m1)
    elif span:
        start = _hhmm(span.group(1), span.group(2), span.group(3) or span.group(6))
        end = _hhmm(span.group(4), span.group(5), span.group(6))
        minutes = (end[0] * 60 + end[1]) - (start[0] * 60 + start[1])
        clock = start
    else:
        minutes = None
        found = _AMPM.search(text)
        clock = _hhmm(*found.groups()) if found else None
        if clock is None and (c := _CLOCK.search(text)):
            clock = (int(c.group(1)), int(c.group(2)))
    if place_match is None or clock is None:
        return None
    place = re.sub(r"\s+(and|of|the|de|la)$", "", place_match.group(1).strip())
    before = text[: place_match.start()].split()
    event = ""
    for back in range(1, min(7, len(before)) + 1):
        if before[-back].lower() in _ARTICLES:
            event = " ".join(before[-back + 1:]) if back > 1 else ""
            break
    md = _MONTH_DAY.search(text)
    month_day = None
    if md:
        month, day = (md.group(1), md.group(2)) if md.group(1) else (md.group(4), md.group(3))
        month_day = (_MONTHS.index(month.lower()) + 1, int(day))
    weekday = _WEEKDAY.search(text)
    relative = _RELATIVE.search(text)
    return Commitment(time=f"{clock[0]:02d}:{clock[1]:02d}", place=place, event=event.strip(" ,;:"),
                      minutes=minutes if minutes and minutes > 0 else None, month_day=month_day,
                      weekday=_WEEKDAYS.index(weekday.group(1).lower()) if weekday else None,
                      offset=(1 if relative.group(1).lower() == "tomorrow" else 0) if relative else None)


def date_words(day: date) -> str:
    """How a commitment names a day: "14 February"."""
    return f"{day.day} {_MONTHS[day.month - 1].capitalize()}"
