"""Reading planning answers: JSON (whole, or every well-formed item in a damaged answer), or plain
lines like ``07:00 wake up (home)``; then checked against what was asked.

Nothing free-form becomes structure unchecked: every activity must be a short phrase
(:func:`activity`), and an answer that falls short of the request (too few strokes, hours that
leave the waking day uncovered, actions that do not fill their block) raises
:class:`StructuredOutputError` naming the problem, which the runner shows the model once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, Field

from memstream.errors import StructuredOutputError
from memstream.models import Citations, items_of, out_of_character, parse_yes_no, register_answer_schema
from memstream.planning import prompts

#: One item of an answer (a stroke, an hour, an action), as parsed.
Item = TypeVar("Item", bound=BaseModel)
#: An activity is a short phrase ("serve coffee at the counter"), never a paragraph.
MAX_ACTIVITY_WORDS = 12
#: Lines of the identity paragraph a model may copy into a plan; they are not activities.
_IDENTITY_LINE = re.compile(r"\b(usually wakes|goes to bed at|lives at)\b|^(occupation|routine|name|age):",
                            re.IGNORECASE)


class StrokeIn(BaseModel):
    time: str
    activity: str
    location: str = ""
    because: Citations = Field(default_factory=list)  # numbers of the listed memories it rests on
    minutes: int | None = Field(default=None, ge=1, le=24 * 60)
    #: How the cited memories' words were read as this time, when the answer says (the offline rules do).
    reading: str = Field(default="", max_length=400)


class Strokes(BaseModel):
    strokes: list[StrokeIn] = Field(min_length=1)


class HourIn(BaseModel):
    hour: int = Field(ge=0, le=23)
    activity: str
    location: str = ""


class Hours(BaseModel):
    hours: list[HourIn] = Field(min_length=1)


class ActionIn(BaseModel):
    minutes: int = Field(ge=1, le=24 * 60)
    activity: str
    location: str = ""


class Actions(BaseModel):
    actions: list[ActionIn] = Field(min_length=1)


class Reaction(BaseModel):
    react: bool
    reaction: str = ""
    time: str = ""      # HH:MM if the reaction is for later today (an appointment), else it starts now
    location: str = ""
    minutes: int | None = Field(default=None, ge=1, le=24 * 60)  # how long the appointment lasts, if said
    drop: str = ""      # HH:MM of today's appointment the observation moves or calls off, if any


class Revision(BaseModel):
    currently: str
    because: Citations = Field(default_factory=list)


#: A revised "currently" is a short paragraph, not an essay.
MAX_CURRENTLY_WORDS = 80


def activity(text: str, name: str = "") -> str:
    """``text`` as an activity: one short line, not a line of the identity, not prose about the agent."""
    one = " ".join(str(text).split()).strip(" .;:-\"'")
    one = re.sub(r"\s*\([^()]*\)$", "", one) or one  # "serve coffee (Hobbs Cafe)": the place is said apart
    if name and one.lower().startswith(name.lower() + " "):
        one = one[len(name):].strip(" ,:")  # "Klaus Mueller would ..." is prose about Klaus, not an activity
    if not one:
        raise StructuredOutputError("an activity is empty")
    if _IDENTITY_LINE.search(one) or out_of_character(one):
        raise StructuredOutputError(f"{one[:50]!r} is not an activity (it repeats the identity or refuses)")
    words = len(one.split())
    if words > MAX_ACTIVITY_WORDS or re.search(r"\b(would|should|might|could|will)\b", one, re.IGNORECASE):
        raise StructuredOutputError(f"{one[:50]!r}... is not a short activity; write a phrase of at most "
                                    f"{MAX_ACTIVITY_WORDS} words such as 'serve coffee at the counter'")
    return one


def _usable(items: list[Item], check: Callable[[Item], object]) -> list[Item]:
    """The items that pass ``check``, which raises on an item it refuses (each is kept or dropped on its own)."""
    out = []
    for item in items:
        try:
            check(item)
            out.append(item)
        except (StructuredOutputError, ValueError):
            continue
    return out


_TIMED = re.compile(r"^\s*(?:\d+[.)]\s*)?(\d{1,2}):(\d{2})\s*(?:[-–:]\s*)?(.+?)(?:\s*\(([^)]*)\))?\s*$")


def _hhmm(h: str, m: str) -> str:
    if not (h.isdigit() and m.isdigit() and 0 <= int(h) <= 23 and 0 <= int(m) <= 59):
        raise StructuredOutputError(f"time {h}:{m} is not a time of day")
    return f"{int(h):02d}:{int(m):02d}"


def parse_strokes(text: str, *, at_least: int = 1, name: str = "") -> list[StrokeIn]:
    """The day's broad strokes, in time order; fewer than ``at_least`` usable ones is a problem."""

    def check(s: StrokeIn) -> None:
        hour, _, minute = s.time.strip().partition(":")
        s.time = _hhmm(hour, minute or "0")
        s.activity = activity(s.activity, name)
        s.location = " ".join(s.location.split())

    found = items_of(text, StrokeIn)
    if not found:
        found = [StrokeIn(time=f"{m.group(1)}:{m.group(2)}", activity=m.group(3), location=m.group(4) or "")
                 for line in text.splitlines() if (m := _TIMED.match(line))]
    strokes = _usable(found, check)
    copied = {(s.activity.lower(), s.location.lower()) for s in strokes} & prompts.EXAMPLE_DAY
    if len(copied) >= 2:
        raise StructuredOutputError("that is the example's plan, for someone else; plan this person's own day from "
                                    "their identity")
    if len(strokes) < at_least:
        raise StructuredOutputError(f"{len(strokes)} usable plan items (each a time, a short activity and a place); "
                                    f"give {at_least} or more (began {text[:40]!r})")
    return sorted({s.time: s for s in strokes}.values(), key=lambda s: s.time)


def parse_hours(text: str, *, must_cover: tuple[int, ...] = (), name: str = "") -> list[HourIn]:
    """Hour blocks; fewer than half of the hours in ``must_cover`` (the waking hours asked for) is a problem."""

    def check(h: HourIn) -> None:
        h.activity = activity(h.activity, name)

    found = items_of(text, HourIn)
    if not found:
        found = [HourIn(hour=int(m.group(1)), activity=m.group(3), location=m.group(4) or "")
                 for line in text.splitlines() if (m := _TIMED.match(line)) and int(m.group(1)) <= 23]
    hours = _usable(found, check)
    covered = {h.hour for h in hours} & set(must_cover)
    if not hours or (must_cover and len(covered) * 2 < len(must_cover)):
        missing = sorted(set(must_cover) - covered)
        raise StructuredOutputError(f"the hours {', '.join(map(str, missing[:6]))}{'...' if len(missing) > 6 else ''}"
                                    f" have no block; give one entry per hour, each a short activity")
    return hours


def parse_actions(text: str, *, minutes: int = 0, name: str = "") -> list[ActionIn]:
    """Actions in order; if ``minutes`` is given, they must fill between half and twice of it."""

    def check(a: ActionIn) -> None:
        a.activity = activity(a.activity, name)

    found = items_of(text, ActionIn)
    if not found:
        for line in text.splitlines():
            m = re.match(r"^\s*(?:\d+[.)]\s*|[-*]\s*)?(.+?)\s*\((\d{1,4})\s*min[^)]*\)\s*$", line)
            if m and int(m.group(2)) >= 1:
                found.append(ActionIn(minutes=int(m.group(2)), activity=m.group(1)))
    actions = _usable(found, check)
    total = sum(a.minutes for a in actions)
    if not actions or (minutes and not minutes / 2 <= total <= 2 * minutes):
        raise StructuredOutputError(f"the actions add up to {total} minutes; they must fill the block's {minutes}, "
                                    "each a short activity with its minutes")
    return actions


def parse_reaction(text: str, *, name: str = "") -> Reaction:
    """Whether to react, and the reaction as a short activity (prose about the agent is refused)."""
    found = items_of(text, Reaction)
    if found:
        decision = found[0]
    else:
        react = parse_yes_no(text)
        decision = Reaction(react=react, reaction=text.strip()[3:].strip(" :,.-"))
    if decision.react:
        decision.reaction = activity(decision.reaction, name)
        hour, _, minute = decision.time.strip().partition(":")
        try:
            decision.time = _hhmm(hour, minute) if decision.time.strip() else ""
        except StructuredOutputError:
            decision.time = ""  # a time that is not a time of day: the reaction starts now
        decision.location = " ".join(decision.location.split())
    return decision


def parse_revision(text: str, *, name: str = "") -> Revision:
    """The agent's revised current situation: a short paragraph in the third person, with citations."""
    found = items_of(text, Revision)
    revision = found[0] if found else Revision(currently=text)
    one = " ".join(revision.currently.split()).strip(" \"'")
    if not one or "{" in one:
        raise StructuredOutputError('no "currently" in the answer; answer as JSON {"currently": "...", '
                                    '"because": [numbers]}')
    if out_of_character(one):
        raise StructuredOutputError("the answer is the model speaking as itself; describe the person's situation")
    if len(one.split()) > MAX_CURRENTLY_WORDS:
        raise StructuredOutputError(f"the situation runs to {len(one.split())} words; write at most "
                                    f"{MAX_CURRENTLY_WORDS}")
    revision.currently = one
    return revision


register_answer_schema(prompts.DAY_PURPOSE, Strokes)
register_answer_schema(prompts.HOURS_PURPOSE, Hours)
register_answer_schema(prompts.ACTIONS_PURPOSE, Actions)
register_answer_schema(prompts.REACT_PURPOSE, Reaction)
register_answer_schema(prompts.REVISE_PURPOSE, Revision)
