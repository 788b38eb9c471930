"""Reading planning answers: JSON, or plain lines like ``07:00 wake up (home)``."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from memstream.errors import StructuredOutputError
from memstream.models.base import maybe_structured, parse_yes_no


class StrokeIn(BaseModel):
    time: str
    activity: str
    location: str = ""


class Strokes(BaseModel):
    strokes: list[StrokeIn] = Field(min_length=1)


class HourIn(BaseModel):
    hour: int = Field(ge=0, le=23)
    activity: str
    location: str = ""


class Hours(BaseModel):
    hours: list[HourIn] = Field(min_length=1)


class ActionIn(BaseModel):
    minutes: int
    activity: str
    location: str = ""


class Actions(BaseModel):
    actions: list[ActionIn] = Field(min_length=1)


class Reaction(BaseModel):
    react: bool
    reaction: str = ""


_TIMED = re.compile(r"^\s*(?:\d+[.)]\s*)?(\d{1,2}):(\d{2})\s*(?:[-–:]\s*)?(.+?)(?:\s*\(([^)]*)\))?\s*$")


def _hhmm(h: str, m: str) -> str:
    if not (0 <= int(h) <= 23 and 0 <= int(m) <= 59):
        raise StructuredOutputError(f"time {h}:{m} is not a time of day")
    return f"{int(h):02d}:{int(m):02d}"


def parse_strokes(text: str) -> list[StrokeIn]:
    parsed = maybe_structured(text, Strokes)
    if parsed:
        try:
            for s in parsed.strokes:
                s.time = _hhmm(*s.time.split(":")[:2]) if ":" in s.time else _hhmm(s.time, "0")
            return sorted(parsed.strokes, key=lambda s: s.time)
        except (StructuredOutputError, ValueError):
            pass
    out = [StrokeIn(time=_hhmm(m.group(1), m.group(2)), activity=m.group(3), location=m.group(4) or "")
           for line in text.splitlines() if (m := _TIMED.match(line))]
    if not out:
        raise StructuredOutputError(f"no timed plan items in the answer (began {text[:60]!r})")
    return sorted(out, key=lambda s: s.time)


def parse_hours(text: str) -> list[HourIn]:
    if parsed := maybe_structured(text, Hours):
        return parsed.hours
    out = [HourIn(hour=int(m.group(1)), activity=m.group(3), location=m.group(4) or "")
           for line in text.splitlines() if (m := _TIMED.match(line)) and int(m.group(1)) <= 23]
    if not out:
        raise StructuredOutputError(f"no hourly items in the answer (began {text[:60]!r})")
    return out


def parse_actions(text: str) -> list[ActionIn]:
    if parsed := maybe_structured(text, Actions):
        return parsed.actions
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s*(?:\d+[.)]\s*|[-*]\s*)?(.+?)\s*\((\d+)\s*min[^)]*\)\s*$", line)
        if m:
            out.append(ActionIn(minutes=int(m.group(2)), activity=m.group(1)))
    if not out:
        raise StructuredOutputError(f"no actions with durations in the answer (began {text[:60]!r})")
    return out


def parse_reaction(text: str) -> Reaction:
    if parsed := maybe_structured(text, Reaction):
        return parsed
    react = parse_yes_no(text)
    return Reaction(react=react, reaction=text.strip()[3:].strip(" :,.-"))
