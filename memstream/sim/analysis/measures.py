"""What emerges in a run, measured as the paper measured Smallville, model-free from the run's streams
and event log: information diffusion (who knows a fact, hour by hour), relationship formation (who
knows whom) and coordination (who was at a place during an event, among those who knew of it).

Every count comes with the memory ids it rests on, so a reader can audit it against the stream
(``memstream recall``/``replay``). "Knowing" here is having a memory that mentions the fact or the
person. The paper asked the agents instead; the ``*_by_interview`` measures do that with a chat
model, and check each answer against the memories (a "yes" no memory supports is hallucinated).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta

from memstream.errors import MemstreamError
from memstream.models import ChatModel, concurrently, run_direct
from memstream.offline_text import content_words
from memstream.planning import Stroke, appointment_span
from memstream.sim.agents.agent import Places
from memstream.sim.agents.spatial import place_tree
from memstream.sim.analysis.results import (
    Attendance,
    DensityAt,
    Diffusion,
    DiffusionAsked,
    InterviewAnswer,
    KnownAt,
    KnownPlaces,
    Network,
    NetworkAsked,
)
from memstream.sim.run.rundir import RunDir
from memstream.sim.talk.interview import battery_stage, judge_stage, knows_stage
from memstream.stream import Memory

#: Memory ids listed per agent as evidence (the first ones; the count is complete).
EVIDENCE_IDS = 5


def memories(run: RunDir) -> Iterator[tuple[str, Memory]]:
    """Every agent's memories, agent by agent in name order, each oldest first."""
    for agent in run.agents:
        if run.stream.has(agent):
            for m in run.stream.memories(agent):
                yield agent, m


def places(run: RunDir, agent: str) -> KnownPlaces:
    """The places ``agent`` knows where the run stands (its latest checkpoint), as the paper's tree: areas ->
    buildings (how each is known: been, seen, told) -> rooms -> objects (:mod:`memstream.sim.agents.spatial`)."""
    if agent not in run.agents:
        raise MemstreamError(f"unknown agent {agent!r} in {run.path}; one of: {', '.join(run.agents[:8])}"
                             + (", ..." if len(run.agents) > 8 else ""))
    point = run.checkpoints.latest()
    if point is None:
        raise MemstreamError(f"{run.path} has no checkpoint yet; run it for a simulated hour first")
    state = next(s for s in point.state["agents"] if s["name"] == agent)
    known = Places.from_state(state).known
    return {"run": str(run.path), "agent": agent, "at": point.time.isoformat(),
            "spatial_ablated": "spatial" in run.config.ablate, "known": len(known), "tree": place_tree(run.town, known)}


def check_time(run: RunDir, t: datetime, flag: str) -> datetime:
    """``t`` if it lies within the run, else one line naming ``flag`` and the run's span."""
    if not run.config.start <= t <= run.end:
        raise MemstreamError(f"{flag} {t.isoformat()} is outside the run {run.path} "
                             f"({run.config.start.isoformat()} to {run.end.isoformat()})")
    return t


def fact_terms(fact: str) -> list[str]:
    """The words a memory must all contain to mention ``fact`` (its content words, in any case)."""
    terms = list(dict.fromkeys(content_words(fact)))
    if not terms:
        raise MemstreamError(f"--fact {fact!r} has no words to look for; give a phrase such as "
                             "\"Valentine's Day party\"")
    return terms


def mentions(terms: list[str]) -> re.Pattern[str]:
    return re.compile("".join(rf"(?=.*\b{re.escape(t)}\b)" for t in terms), re.IGNORECASE | re.DOTALL)


#: Words that deny what a sentence says: a fact and its denial are two facts ("is closing", "is not closing").
NEGATION = re.compile(r"\b(?:not|no longer|never|no|nobody|nothing|denied|denies|deny|untrue|false|isn't|aren't|"
                      r"wasn't|weren't|won't|doesn't|don't|didn't|can't|cannot)\b|n't\b", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n")


def states(text: str, pattern: re.Pattern[str], denied: bool) -> bool:
    """Whether a sentence (or line) of ``text`` holds every term of the fact, denied as the fact is (both
    with a negation or both without): so a rumour and its denial are counted apart."""
    return any(pattern.match(part) and bool(NEGATION.search(part)) == denied for part in _SENTENCE_BREAK.split(text))


def knowers(run: RunDir, fact: str) -> dict[str, list[Memory]]:
    """Each agent's memories that state ``fact`` (as it is stated: a denial is another fact), oldest first
    (agents with none are left out)."""
    pattern = mentions(fact_terms(fact))
    denied = bool(NEGATION.search(fact))
    found: dict[str, list[Memory]] = {}
    for agent, m in memories(run):
        if pattern.match(m.text) and states(m.text, pattern, denied):
            found.setdefault(agent, []).append(m)
    return found


def _hours(run: RunDir) -> list[datetime]:
    times, t = [], run.config.start
    while t < run.end:
        times.append(t)
        t += timedelta(hours=1)
    return [*times, run.end]


def _evidence(memories: list[Memory]) -> list[int]:
    return [m.id for m in memories[:EVIDENCE_IDS]]


def diffusion(run: RunDir, fact: str) -> Diffusion:
    """The share of agents with a memory of ``fact``, at the start and every simulated hour."""
    found = knowers(run, fact)
    n = len(run.agents)
    by_hour: list[KnownAt] = []
    for t in _hours(run):
        knowing = sorted(a for a, ms in found.items() if ms[0].created_at <= t)
        by_hour.append({"time": t.isoformat(), "knowers": len(knowing), "share": round(len(knowing) / n, 4),
                        "agents": knowing})
    return {"run": str(run.path), "fact": fact, "agents": n, "by_hour": by_hour,
            "final_share": by_hour[-1]["share"], "evidence": {a: _evidence(ms) for a, ms in sorted(found.items())}}


def _acquaintances(run: RunDir) -> dict[tuple[str, str], Memory]:
    """(who, whom) -> the first memory of ``who`` that names ``whom`` in full."""
    names = run.agents
    if not names:
        return {}
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    first: dict[tuple[str, str], Memory] = {}
    for agent, m in memories(run):
        if "place" in m.metadata:  # a place memory names a building ("Adam Smith's house"), not an acquaintance
            continue
        for whom in set(pattern.findall(m.text)) - {agent}:
            pair = (agent, whom)
            if pair not in first or m.created_at < first[pair].created_at:
                first[pair] = m
    return first


def network(run: RunDir) -> Network:
    """Who knows whom at the start and the end: an undirected edge where one agent has a memory
    naming the other; density = edges / pairs, as the paper's η = 2|E| / (|V|(|V|-1))."""
    known = _acquaintances(run)
    n = len(run.agents)
    pairs = n * (n - 1) / 2 or 1

    def edges(at: datetime) -> list[list[str]]:
        return sorted({tuple(sorted(p)) for p, m in known.items() if m.created_at <= at})  # type: ignore[misc]

    start, end = edges(run.config.start), edges(run.end)
    by_hour: list[DensityAt] = [{"time": t.isoformat(), "pairs": len(e), "density": round(len(e) / pairs, 4)}
                                for t in _hours(run) for e in [edges(t)]]
    return {"run": str(run.path), "agents": n, "density_start": round(len(start) / pairs, 4),
            "density_end": round(len(end) / pairs, 4), "edges_start": [list(e) for e in start],
            "edges_end": [list(e) for e in end], "by_hour": by_hour,
            "evidence": {f"{a} -> {b}": m.id for (a, b), m in sorted(known.items())}}


def resolve_place(run: RunDir, place: str) -> str:
    buildings = {b.name: b for a in run.town.areas for b in a.buildings}
    match = next((name for name in buildings if name.lower() == place.strip().lower()), None)
    if match is None:
        raise MemstreamError(f"--place {place!r} is not a building of the run's town; one of: "
                             + ", ".join(sorted(buildings)[:12]) + ("..." if len(buildings) > 12 else ""))
    return match


def presence(run: RunDir, place: str, start: datetime, end: datetime) -> dict[str, str]:
    """Agents at ``place`` at some moment in [start, end), with the time they were first seen there."""
    where: dict[str, tuple[str, str]] = {}  # agent -> (location, since) before the window
    present: dict[str, str] = {}
    for e in run.records.events():
        if not e["agent"] or e["agent"] in present:
            continue
        at = datetime.fromisoformat(e["time"])
        if at >= end:
            continue
        if at < start:
            where[e["agent"]] = (e["location"], e["time"])
        elif e["location"] == place:
            present[e["agent"]] = e["time"]
    for agent, (location, _) in where.items():
        if location == place and agent not in present:
            present[agent] = start.isoformat()
    return dict(sorted(present.items()))


def planned(run: RunDir, place: str, start: datetime, end: datetime) -> dict[str, int]:
    """Agents whose plan for the day held an appointment at ``place`` overlapping [start, end): the id of
    the first plan memory that did."""
    wanted = place.lower()
    found: dict[str, int] = {}
    for agent, m in memories(run):
        plan = m.metadata.get("plan") if m.kind == "plan" else None
        if not isinstance(plan, dict) or agent in found or m.created_at >= end:
            continue
        day = datetime.fromisoformat(plan["day"])
        strokes = [Stroke.from_dict(s) for s in plan["strokes"]]
        for s in strokes:
            if not s.appointment or not (wanted in s.location.lower() or s.location.lower() in wanted):
                continue
            a, b = appointment_span(s, strokes)
            if day + timedelta(minutes=a) < end and day + timedelta(minutes=b) > start:
                found[agent] = m.id
                break
    return dict(sorted(found.items()))


def attendance(run: RunDir, place: str, start: datetime, end: datetime, invited_fact: str | None = None) -> Attendance:
    """Who was at ``place`` during [start, end), who had planned to be (an appointment in a day plan),
    and among them who knew ``invited_fact`` beforehand."""
    place = resolve_place(run, place)
    check_time(run, start, "--from")
    check_time(run, end, "--to")
    if end <= start:
        raise MemstreamError(f"--to {end.isoformat()} must come after --from {start.isoformat()}")
    present = presence(run, place, start, end)
    meant = planned(run, place, start, end)
    out: Attendance = {"run": str(run.path), "place": place, "from": start.isoformat(), "to": end.isoformat(),
                           "present": sorted(present), "arrived": present, "planned": sorted(meant),
                           "planned_and_came": len(set(meant) & set(present)), "plan_evidence": meant}
    if invited_fact:
        knew = {a: ms for a, ms in knowers(run, invited_fact).items() if ms[0].created_at < start}
        out |= {"invited_fact": invited_fact, "knew": sorted(knew),
                "attended_and_knew": len(set(present) & set(knew)),
                "evidence": {a: _evidence(ms) for a, ms in sorted(knew.items())}}
    return out


# -- the same, by interview (the paper's way), checked against the memories -----------------------

def _ends(run: RunDir) -> dict[str, datetime]:
    return {a: run.end for a in run.agents}


def diffusion_by_interview(run: RunDir, fact: str, chat: ChatModel) -> DiffusionAsked:
    """Every agent asked at the run's end whether it knows of ``fact``; a "yes" without a memory that
    mentions it is flagged as hallucinated, a "no" despite one as missed."""
    residents = list(run.town.residents)
    said = run_direct(knows_stage(run.stream, residents, fact, _ends(run)), chat)
    remembered = set(knowers(run, fact))
    yes = sorted(a for a, (k, _) in said.items() if k is not None and k.knows)
    n = len(residents)
    return {"time": run.end.isoformat(), "knowers": len(yes), "share": round(len(yes) / n, 4), "agents": yes,
            "hallucinated": sorted(set(yes) - remembered), "missed": sorted(remembered - set(yes)),
            "unanswered": sorted(a for a, (k, _) in said.items() if k is None),
            "answers": {a: {"knows": k.knows, "what": k.what, "memory_ids": ids} for a, (k, ids) in said.items()
                        if k is not None}}


def network_by_interview(run: RunDir, chat: ChatModel) -> NetworkAsked:
    """Every agent asked at the run's end whether it knows each other agent (n(n-1) questions)."""
    residents = list(run.town.residents)
    stages = [knows_stage(run.stream, [r for r in residents if r.name != other.name], other.name, _ends(run))
              for other in residents]
    answers = run_direct(concurrently(stages), chat)
    named = set(_acquaintances(run))
    said = {(who, other.name) for other, by in zip(residents, answers, strict=True)
            for who, (k, _) in by.items() if k is not None and k.knows}
    edges = sorted({tuple(sorted(p)) for p in said})
    pairs = len(residents) * (len(residents) - 1) / 2 or 1
    return {"time": run.end.isoformat(), "density": round(len(edges) / pairs, 4), "edges": [list(e) for e in edges],
            "hallucinated": [f"{a} -> {b}" for a, b in sorted(said - named)]}


def interviews(run: RunDir, battery: dict[str, list[str]], chat: ChatModel, judge: ChatModel | None = None,
               *, k: int = 10) -> list[InterviewAnswer]:
    """The battery put to every agent at the run's end (scored by ``judge`` if given)."""
    residents = list(run.town.residents)
    answers = run_direct(battery_stage(run.stream, residents, battery, _ends(run), k=k), chat)
    if judge is not None:
        answers = run_direct(judge_stage(run.stream, {r.name: r for r in residents}, answers), judge)
    return [{"run": str(run.path), **a.to_dict()} for a in answers]
