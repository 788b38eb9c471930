"""What emerges in a run, measured as the paper measured Smallville, model-free from the run's memory, its
record and its event log: information diffusion (who knows a fact, hour by hour), relationship formation (who
knows whom) and coordination (who was at a place during an event, among those who knew of it).

Two sources, kept apart. What *happened* is read from the record (the event log, and the stream file of what
each agent took in): who was where (attendance's ``present``), who planned what (``planned``: the plan the
agent made that day), who *heard* a fact or a name (``heard``). What an agent *knows* is asked of the run's
memory (:meth:`~memstream.sim.run.rundir.RunDir.memory_at`: the stream, or on ``--design D`` the design's
context), as a stage of the town would ask it: a recall on the fact (or the other's name) of :data:`KNOWS_K`
memories (on a design, a context of ``KNOWS_K`` × the run's ``recall_tokens`` tokens), and the agent knows if
what comes back states it. So diffusion's knowers, the network's pairs, attendance's ``knew`` and the
interviews read the memory; an agent who heard the news and forgot it has ``heard`` it and does not know it.
On a design the memory is asked as it stood at each of the run's recall points (every simulated hour, where
the run stopped); on the stream at any time.

Every count comes with the memory ids it rests on, so a reader can audit it against the stream
(``memstream recall``/``replay``). The paper asked the agents instead; the ``*_by_interview`` measures do that
with a chat model, and check each answer against what the memory holds (a "yes" it does not hold is
hallucinated).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
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
from memstream.stream import Memory, MemoryStream

#: Memory ids listed per agent as evidence (the first ones; the count is complete).
EVIDENCE_IDS = 5
#: The memories an agent is asked to recall when a measure asks whether it knows something (a fact, a person):
#: the stream's top ``KNOWS_K``, a design's context of ``KNOWS_K`` x the run's ``recall_tokens`` tokens (as an
#: interview asks, :func:`memstream.sim.talk.interview.knows_stage`).
KNOWS_K = 10


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


def _stating(fact: str) -> Callable[[str], bool]:
    pattern = mentions(fact_terms(fact))
    denied = bool(NEGATION.search(fact))
    return lambda text: bool(pattern.match(text)) and states(text, pattern, denied)


def knowers(run: RunDir, fact: str) -> dict[str, list[Memory]]:
    """Who *heard* ``fact``: each agent's memories in the record that state it (as it is stated: a denial is
    another fact), oldest first (agents with none are left out). What an agent took in, not what it recalls
    (:func:`knowing`)."""
    says = _stating(fact)
    found: dict[str, list[Memory]] = {}
    for agent, m in memories(run):
        if says(m.text):
            found.setdefault(agent, []).append(m)
    return found


def recalled(run: RunDir, requests: Sequence[tuple[str, str]], at: datetime
             ) -> tuple[datetime, list[list[Memory]]] | None:
    """Each ``(agent, query)`` recalled of the run's memory as it stood at ``at`` (:data:`KNOWS_K` memories, or a
    design's context of as many), and the time the memory stood at; None if the run holds no memory of then."""
    found = run.memory_at(at)
    if found is None:
        return None
    stands, memory = found
    asked = [(a, q) for a, q in requests if memory.has(a)]
    recalls = iter(memory.retrieve_many(asked, now=stands, k=KNOWS_K, touch=False) if asked else [])
    return stands, [[r.memory for r in next(recalls)] if memory.has(a) else [] for a, _ in requests]


def knowing(run: RunDir, fact: str, at: datetime | None = None) -> dict[str, list[Memory]] | None:
    """Who *knows* ``fact`` at ``at`` (default: the run's end): each agent whose memory, asked on the fact, gives
    back memories stating it (those, oldest first); None if the run holds no memory of then."""
    says = _stating(fact)
    asked = recalled(run, [(a, fact) for a in run.agents], run.end if at is None else at)
    if asked is None:
        return None
    out = {a: sorted((m for m in ms if says(m.text)), key=lambda m: (m.created_at, m.id))
           for a, ms in zip(run.agents, asked[1], strict=True)}
    return {a: ms for a, ms in out.items() if ms}


def _hours(run: RunDir) -> list[datetime]:
    times, t = [], run.config.start
    while t < run.end:
        times.append(t)
        t += timedelta(hours=1)
    return [*times, run.end]


def _evidence(memories: list[Memory]) -> list[int]:
    return [m.id for m in memories[:EVIDENCE_IDS]]


def diffusion(run: RunDir, fact: str) -> Diffusion:
    """The share of agents who know ``fact`` (their memory, asked on it, gives it back: :func:`knowing`), at the
    start and every simulated hour the run's memory can be asked at, and beside it how many had *heard* it by
    then (the record: :func:`knowers`). An agent may know at one hour and not the next: it forgot."""
    heard = knowers(run, fact)
    n = len(run.agents)
    by_hour: list[KnownAt] = []
    last: dict[str, list[Memory]] = {}
    for t in _hours(run):
        found = knowing(run, fact, t)
        if found is None:  # no memory of then (a fork's shared past on another design)
            continue
        last = found
        knew = sorted(found)
        by_hour.append({"time": t.isoformat(), "knowers": len(knew), "share": round(len(knew) / n, 4),
                        "agents": knew, "heard": sum(1 for ms in heard.values() if ms[0].created_at <= t)})
    return {"run": str(run.path), "fact": fact, "agents": n, "by_hour": by_hour,
            "final_share": by_hour[-1]["share"] if by_hour else 0.0,
            "final_heard": round(len(heard) / n, 4),
            "evidence": {a: _evidence(ms) for a, ms in sorted(last.items())}}


def _names(run: RunDir) -> re.Pattern[str] | None:
    names = run.agents
    if not names:
        return None
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")


def _naming(pattern: re.Pattern[str], agent: str, m: Memory) -> set[str]:
    """The other agents ``agent``'s memory ``m`` names in full (a place memory names a building, "Adam Smith's
    house", not an acquaintance)."""
    return set() if "place" in m.metadata else set(pattern.findall(m.text)) - {agent}


def _names_in(seen: dict[tuple[str, int, str, bool], set[str]], pattern: re.Pattern[str], agent: str,
              m: Memory) -> set[str]:
    """:func:`_naming`, remembered in ``seen`` by what it reads (the agent, the memory's id and text, whether
    it is a place memory)."""
    key = (agent, m.id, m.text, "place" in m.metadata)
    if key not in seen:
        seen[key] = _naming(pattern, agent, m)
    return seen[key]


def first_known(run: RunDir, fact: str) -> dict[str, datetime]:
    """When each agent who came to know ``fact`` first did: at the first hour its memory gave the fact back, the
    time of the oldest memory it gave back stating it (an agent may forget it later: :func:`diffusion` says)."""
    first: dict[str, datetime] = {}
    for t in _hours(run):
        for a, ms in (knowing(run, fact, t) or {}).items():
            first.setdefault(a, ms[0].created_at)
    return first


def _acquaintances(run: RunDir) -> dict[tuple[str, str], Memory]:
    """(who, whom) -> the first memory of ``who`` in the record that names ``whom`` in full (who *heard of* whom)."""
    pattern = _names(run)
    first: dict[tuple[str, str], Memory] = {}
    if pattern is None:
        return first
    for agent, m in memories(run):
        for whom in _naming(pattern, agent, m):
            pair = (agent, whom)
            if pair not in first or m.created_at < first[pair].created_at:
                first[pair] = m
    return first


def acquainted(run: RunDir, at: datetime | None = None) -> dict[tuple[str, str], Memory] | None:
    """(who, whom) -> a memory naming ``whom`` that ``who``'s memory gives back when asked on ``whom``'s name at
    ``at`` (default: the run's end): who *knows* whom then; None if the run holds no memory of then."""
    pattern = _names(run)
    if pattern is None:
        return {}
    pairs = [(a, b) for a in run.agents for b in run.agents if a != b]
    asked = recalled(run, pairs, run.end if at is None else at)
    if asked is None:
        return None
    found: dict[tuple[str, str], Memory] = {}
    named: dict[tuple[str, int, str, bool], set[str]] = {}  # whom a memory names, found once (the same memories
    for (a, b), ms in zip(pairs, asked[1], strict=True):   # come back for many of an agent's questions)
        naming = [m for m in ms if b in _names_in(named, pattern, a, m)]
        if naming:
            found[(a, b)] = min(naming, key=lambda m: (m.created_at, m.id))
    return found


def network(run: RunDir) -> Network:
    """Who knows whom at the start and the end: an undirected edge where one agent's memory, asked on the
    other's name, gives back a memory naming them (:func:`acquainted`); density = edges / pairs, as the paper's
    η = 2|E| / (|V|(|V|-1)). Each hour also says how many pairs had *heard of* each other by then (the record)."""
    heard = _acquaintances(run)
    n = len(run.agents)
    pairs = n * (n - 1) / 2 or 1

    def undirected(known: dict[tuple[str, str], Memory]) -> list[tuple[str, str]]:
        return sorted({(min(p), max(p)) for p in known})

    by_hour: list[DensityAt] = []
    first: dict[tuple[str, str], Memory] | None = None
    last: dict[tuple[str, str], Memory] = {}
    for t in _hours(run):
        known = acquainted(run, t)
        if known is None:
            continue
        first = known if first is None else first
        last = known
        e = undirected(known)
        by_hour.append({"time": t.isoformat(), "pairs": len(e), "density": round(len(e) / pairs, 4),
                        "heard": len(undirected({p: m for p, m in heard.items() if m.created_at <= t}))})
    start, end = undirected(first or {}), undirected(last)
    return {"run": str(run.path), "agents": n, "density_start": round(len(start) / pairs, 4),
            "density_end": round(len(end) / pairs, 4), "edges_start": [list(e) for e in start],
            "edges_end": [list(e) for e in end], "by_hour": by_hour,
            "density_end_heard": round(len(undirected(heard)) / pairs, 4),
            "evidence": {f"{a} -> {b}": m.id for (a, b), m in sorted(last.items())}}


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
    """Who was at ``place`` during [start, end) and who had planned to be (an appointment in a day plan): what
    happened, from the record; and among them who knew ``invited_fact`` at ``start`` (the memory, as it stood
    then: :func:`knowing`)."""
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
        knew = knowing(run, invited_fact, start) or {}
        out |= {"invited_fact": invited_fact, "knew": sorted(knew),
                "attended_and_knew": len(set(present) & set(knew)),
                "evidence": {a: _evidence(ms) for a, ms in sorted(knew.items())}}
    return out


# -- the same, by interview (the paper's way), checked against the memories -----------------------

def _memory(run: RunDir) -> tuple[MemoryStream, dict[str, datetime]]:
    """The run's memory at its end (what interviews ask: the design's context on a design) and when each agent
    is asked."""
    found = run.memory_at(run.end)
    if found is None:
        raise MemstreamError(f"{run.path} holds no memory of its agents at its end to ask; run it for a simulated "
                             "hour first")
    stands, memory = found
    return memory, {a: stands for a in run.agents}


def diffusion_by_interview(run: RunDir, fact: str, chat: ChatModel) -> DiffusionAsked:
    """Every agent asked at the run's end whether it knows of ``fact``; a "yes" without a memory that
    mentions it is flagged as hallucinated, a "no" despite one as missed."""
    residents = list(run.town.residents)
    memory, ends = _memory(run)
    said = run_direct(knows_stage(memory, residents, fact, ends, k=KNOWS_K), chat)
    remembered = set(knowing(run, fact) or {})
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
    memory, ends = _memory(run)
    stages = [knows_stage(memory, [r for r in residents if r.name != other.name], other.name, ends, k=KNOWS_K)
              for other in residents]
    answers = run_direct(concurrently(stages), chat)
    named = set(acquainted(run) or {})
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
    memory, ends = _memory(run)
    answers = run_direct(battery_stage(memory, residents, battery, ends, k=k), chat)
    if judge is not None:
        answers = run_direct(judge_stage(memory, {r.name: r for r in residents}, answers), judge)
    return [{"run": str(run.path), **a.to_dict()} for a in answers]
