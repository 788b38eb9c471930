"""Sense checks on a plan's times: hour blocks and decompositions that keep to the agent's day
(``docs/sense-checks.md``).

A small model's answer can parse and still lay the day out wrong: the strokes one per consecutive
hour (lunch at 09:00, dinner at 11:00), "sleep" at midday, a one-hour decomposition that holds the
whole day (lunch at 08:25, dinner at 08:45), or 20 minutes of actions for an hour. These checks
compare an answer with what the stage already knows -- the agent's wake and bed times, the day's
strokes and the identity's routine (*anchors*: an activity and the span of the day it holds) -- and
raise :class:`ImplausibleAnswerError` naming the problem, so the one retry shows it to the model.

They are generic and conservative: an activity is tied to the anchors that share a word bound to a
time of day (a meal, waking up: :data:`TIMED_WORDS`, plain English, nothing of any one town), and it is
refused only when every such anchor is far (more than :data:`SLACK_MINUTES`) from where it is put.
An activity sharing no such word with any anchor is not held to a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memstream.errors import ImplausibleAnswerError
from memstream.offline_text import content_words
from memstream.planning.identity import Identity
from memstream.planning.parse import ActionIn, HourIn
from memstream.planning.plan import Stroke, appointment_span
from memstream.planning.prompts import MIN_ACTION
from memstream.timeutil import minute_of_day

#: How far (minutes) an activity may sit from the span of the strokes or routine items it names.
SLACK_MINUTES = 90
#: Sleep may sit this close (minutes) to the agent's wake and bed times; further in, it is midday.
SLEEP_MARGIN = 120
#: Words that say the agent sleeps (a nap is not refused: it says "nap").
SLEEP_WORDS = frozenset({"sleep", "sleeping", "asleep", "sleeps"})
#: A decomposition's minutes may differ from its block's by this share (or MIN_ACTION, if more).
MINUTES_SHARE = 0.25
#: Words that tie an activity to a time of day, and the word each counts as (supper is dinner).
TIMED_WORDS = {"breakfast": "breakfast", "brunch": "brunch", "lunch": "lunch", "dinner": "dinner",
               "supper": "dinner", "wake": "wake"}


@dataclass(frozen=True)
class Anchor:
    """An activity the day already holds (a stroke of the plan, an item of the routine), and its span."""

    start: int  # minute of the day
    end: int
    activity: str
    words: frozenset[str]  # its timed words (TIMED_WORDS)

    def distance(self, start: int, end: int) -> int:
        """Minutes between this anchor's span and ``[start, end)`` (0 when they overlap)."""
        return max(self.start - end, start - self.end, 0)


def activity_words(activity: str) -> frozenset[str]:
    """The content words of an activity (lower case)."""
    return frozenset(content_words(activity))


def timed_words(activity: str) -> frozenset[str]:
    """The words of ``activity`` that tie it to a time of day (:data:`TIMED_WORDS`), as counted."""
    return frozenset(TIMED_WORDS[w] for w in activity_words(activity) if w in TIMED_WORDS)


def anchors_of(identity: Identity, strokes: Sequence[Stroke], extra: Iterable[Anchor] = ()) -> tuple[Anchor, ...]:
    """The day's anchors: the plan's strokes (each until the next; an appointment its span) and the
    identity's routine items (each until the next), and ``extra`` (a reaction, say)."""
    found = list(extra)
    times = sorted({minute_of_day(s.time) for s in strokes})
    for s in strokes:
        start, end = appointment_span(s, list(strokes)) if s.minutes else (
            minute_of_day(s.time), min((t for t in times if t > minute_of_day(s.time)), default=24 * 60))
        found.append(Anchor(start, end, s.activity, timed_words(s.activity)))
    routine = sorted(identity.routine, key=lambda r: r.time)
    for i, r in enumerate(routine):
        end = minute_of_day(routine[i + 1].time) if i + 1 < len(routine) else minute_of_day(identity.sleep)
        found.append(Anchor(minute_of_day(r.time), max(end, minute_of_day(r.time) + 60), r.activity,
                            timed_words(r.activity)))
    return tuple(a for a in found if a.words)


@dataclass(frozen=True)
class DayFrame:
    """What a planning answer's times are checked against: the agent's waking day and the anchors."""

    wake: int  # minute of the day
    sleep: int
    anchors: tuple[Anchor, ...]

    @classmethod
    def of(cls, identity: Identity, strokes: Sequence[Stroke], extra: Iterable[Anchor] = ()) -> DayFrame:
        return cls(minute_of_day(identity.wake), minute_of_day(identity.sleep), anchors_of(identity, strokes, extra))

    def problem(self, activity: str, start: int, end: int, own: str = "") -> str | None:
        """Why ``activity`` makes no sense in ``[start, end)`` (minutes of the day), or None.

        ``own`` is the activity of the span it belongs to (a decomposition's block): anchors it names
        are the span's own and are not held against it.
        """
        midday = start >= self.wake + SLEEP_MARGIN and end <= self.sleep - SLEEP_MARGIN
        if midday and activity_words(activity) & SLEEP_WORDS:
            return (f"{activity!r} at {_hhmm(start)} puts sleep in the middle of the waking day "
                    f"({_hhmm(self.wake)}-{_hhmm(self.sleep)})")
        words = timed_words(activity) - timed_words(own)
        named = [a for a in self.anchors if a.words & words]
        if named and all(a.distance(start, end) > SLACK_MINUTES for a in named):
            near = min(named, key=lambda a: a.distance(start, end))
            return (f"{activity!r} at {_hhmm(start)} is far from when the day has it "
                    f"({near.activity!r} at {_hhmm(near.start)})")
        return None


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def hour_problems(hours: Sequence[HourIn], frame: DayFrame) -> list[tuple[int, str]]:
    """``(index, problem)`` for each hour block that makes no sense, and for each out of time order."""
    found = []
    for i, h in enumerate(hours):
        if i and h.hour <= hours[i - 1].hour:
            found.append((i, f"hour {h.hour} comes after hour {hours[i - 1].hour}; give the hours in order, "
                             "one entry each"))
        elif why := frame.problem(h.activity, h.hour * 60, h.hour * 60 + 60):
            found.append((i, why))
    return found


def check_hours(hours: list[HourIn], frame: DayFrame) -> list[HourIn]:
    """``hours`` if every block keeps to the day (:func:`hour_problems`), else refused naming the first
    problems."""
    found = hour_problems(hours, frame)
    if found:
        raise ImplausibleAnswerError("; ".join(why for _, why in found[:3]) + "; lay each hour's activity at its "
                                     "own time, as the plan's strokes and the routine have it")
    return hours


def sensible_hours(hours: list[HourIn], frame: DayFrame) -> list[HourIn]:
    """What can be kept of ``hours``: the blocks that make sense (the stage fills the others' hours)."""
    bad = {i for i, _ in hour_problems(hours, frame)}
    return [h for i, h in enumerate(hours) if i not in bad]


def check_actions(actions: list[ActionIn], frame: DayFrame, start: int, minutes: int, activity: str, *,
                  whole: bool = True) -> list[ActionIn]:
    """``actions`` if they fill about their block's ``minutes`` (within :data:`MINUTES_SHARE`; not
    checked unless ``whole``) and each keeps to the block's part of the day, laid end to end from
    ``start``; else refused naming why."""
    total = sum(a.minutes for a in actions)
    if whole and abs(total - minutes) > max(MINUTES_SHARE * minutes, MIN_ACTION):
        raise ImplausibleAnswerError(f"the actions add up to {total} minutes for a block of {minutes} "
                                     f"({_hhmm(start)}-{_hhmm(start + minutes)}); make them fill it")
    at = start
    for a in actions:
        span_end = min(at + a.minutes, start + minutes)
        why = frame.problem(a.activity, at, max(span_end, at + 1), own=activity)
        if why:
            raise ImplausibleAnswerError(f"{why}; this block is {activity!r} from {_hhmm(start)} to "
                                         f"{_hhmm(start + minutes)}: its actions belong to it")
        at = span_end
    return actions


def short_of(actions: list[ActionIn], minutes: int) -> str | None:
    """``"stretched"`` when ``actions`` fall short of their block's ``minutes`` (the stage stretches
    them to fit: counted, not silent), else None."""
    return "stretched" if sum(a.minutes for a in actions) < minutes else None
