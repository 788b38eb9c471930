"""The planning stages' readers: an answer parsed for its shape (:mod:`memstream.planning.parse`),
then checked for sense (:mod:`memstream.planning.sense`, :mod:`memstream.planning.places`).

Each reader takes the context its checks need as keyword arguments, bound with ``functools.partial``
into a :class:`~memstream.models.Request`'s ``parse`` (or ``salvage``) by the stage that asks. A parse
refuses (the one retry is shown why); a salvage keeps what makes sense and drops the rest, item by
item, so the stage fills the dropped hours from its plan rather than keep a nonsense one.
"""

from __future__ import annotations

from memstream.errors import ImplausibleAnswerError, StructuredOutputError
from memstream.planning.parse import ActionIn, HourIn, Reaction, StrokeIn, parse_actions, parse_hours, parse_reaction
from memstream.planning.parse import parse_strokes as _parse_strokes
from memstream.planning.places import NOWHERE, KnownPlaces, check_reaction
from memstream.planning.sense import DayFrame, check_actions, check_hours, sensible_hours


def strokes_answer(text: str, *, at_least: int = 1, name: str = "",
                   places: KnownPlaces = NOWHERE) -> list[StrokeIn]:
    """A day's strokes, each place one the agent knows (when it knows its places)."""
    strokes = _parse_strokes(text, at_least=at_least, name=name)
    for s in strokes:
        s.location = places.resolve(s.location)
    return strokes


def hours_answer(text: str, *, frame: DayFrame, must_cover: tuple[int, ...] = (), name: str = "",
                 places: KnownPlaces = NOWHERE) -> list[HourIn]:
    """Hour blocks in time order, each kept to the day (:func:`check_hours`) at a known place."""
    hours = check_hours(parse_hours(text, must_cover=must_cover, name=name), frame)
    for h in hours:
        h.location = places.resolve(h.location)
    return hours


def hours_salvage(text: str, *, frame: DayFrame, name: str = "",
                  places: KnownPlaces = NOWHERE) -> list[HourIn]:
    """The hour blocks of an answer that make sense at a known place; the others are dropped."""
    kept = []
    for h in sensible_hours(parse_hours(text, name=name), frame):
        try:
            h.location = places.resolve(h.location)
        except ImplausibleAnswerError:
            continue
        kept.append(h)
    if not kept:
        raise StructuredOutputError("no hour block of the answer keeps to the day")
    return kept


def actions_answer(text: str, *, frame: DayFrame, start: int, minutes: int, activity: str, location: str,
                   name: str = "", places: KnownPlaces = NOWHERE, whole: bool = True) -> list[ActionIn]:
    """A block's actions, kept to its part of the day (and, if ``whole``, filling about its minutes).

    An action's place that is no known place is the block's own (a room of it, as a decomposition
    names: "kitchen" in a block at home); only a place that names several known ones is refused.
    """
    actions = parse_actions(text, name=name)  # the minutes are the sense check's to judge, not the shape's
    check_actions(actions, frame, start, minutes, activity, whole=whole)
    for a in actions:
        if a.location and places and not places.matches(a.location):
            a.location = location
        a.location = places.resolve(a.location)
    return actions


def reaction_answer(text: str, *, observation: str, here: str, name: str = "",
                    places: KnownPlaces = NOWHERE) -> Reaction:
    """Whether and how to react, the reaction staying with what it reacts to (:func:`check_reaction`)."""
    return check_reaction(parse_reaction(text, name=name), observation, here, places)
