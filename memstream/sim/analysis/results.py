"""What the measures return (:mod:`memstream.sim.analysis.measures`): TypedDicts, not models, since
``memstream measure --json`` dumps each as is and a sweep reads numbers out of them; plots draw them."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memstream.sim.agents.spatial import KnownArea
from memstream.sim.talk.interview import AnswerRecord


class KnownPlaces(TypedDict):
    """The places an agent knows where the run stands, as the paper's tree."""

    run: str
    agent: str
    at: str
    spatial_ablated: bool
    known: int
    tree: list[KnownArea]


class KnownAt(TypedDict):
    """Who knew the fact at one moment (the start, each simulated hour, the end): their memory gave it back when
    asked; and how many had heard it by then (the record)."""

    time: str
    knowers: int
    share: float
    agents: list[str]
    heard: NotRequired[int]


class KnowsAnswer(TypedDict):
    """An agent's answer to "do you know of ...?", with the memories it was shown."""

    knows: bool
    what: str
    memory_ids: list[int]


class DiffusionAsked(KnownAt):
    """The agents asked at the run's end, each answer checked against the memories."""

    hallucinated: list[str]
    missed: list[str]
    unanswered: list[str]
    answers: dict[str, KnowsAnswer]


class Diffusion(TypedDict):
    """The share of agents with a memory of the fact, hour by hour, with the memory ids it rests on."""

    run: str
    fact: str
    agents: int
    by_hour: list[KnownAt]
    final_share: float
    final_heard: float
    evidence: dict[str, list[int]]
    by_interview: NotRequired[DiffusionAsked]


class NetworkAsked(TypedDict):
    """Who says they know whom at the run's end, and the claims no memory supports."""

    time: str
    density: float
    edges: list[list[str]]
    hallucinated: list[str]


class DensityAt(TypedDict):
    """Who knows whom at one simulated hour: how many pairs, their density, and how many pairs had heard of each
    other by then (the record)."""

    time: str
    pairs: int
    density: float
    heard: int


class Network(TypedDict):
    """Who knows whom at the start and the end: the pairs, their density, the first memory of each."""

    run: str
    agents: int
    density_start: float
    density_end: float
    edges_start: list[list[str]]
    edges_end: list[list[str]]
    by_hour: list[DensityAt]
    density_end_heard: float
    evidence: dict[str, int]
    by_interview: NotRequired[NetworkAsked]


#: Who was at a place during a window (``from``, ``to``: a keyword, so the functional form), who had
#: planned to be, and with an invited fact, who knew it beforehand.
Attendance = TypedDict("Attendance", {
    "run": str, "place": str, "from": str, "to": str, "present": list[str], "arrived": dict[str, str],
    "planned": list[str], "planned_and_came": int, "plan_evidence": dict[str, int],
    "invited_fact": NotRequired[str], "knew": NotRequired[list[str]], "attended_and_knew": NotRequired[int],
    "evidence": NotRequired[dict[str, list[int]]],
})
Attendance.__doc__ = "Who was at a place in a window, who had planned to be, and who knew an invited fact."


class InterviewAnswer(AnswerRecord):
    """An answer of the battery, with the run it was asked in."""

    run: str
