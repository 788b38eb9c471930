"""Where a memory came from, and everything that came of it, read from what the stream records.

No column is added for it: a memory's kind, its citations and its metadata already say where its
text came from (a whisper's id, the agent a conversation was with, what was perceived, the stage
that wrote a model-written thought), so old run directories answer too.

Downstream of a memory: within its owner, every memory that cites it (through any chain of
citations: a memo, a plan, an insight); across agents, the conversations that carried it. A
conversation memory cites nothing (it is what was said), so what carried a claim onwards is found
by its words: with ``fact`` (a phrase), every conversation a carrier took part in after it came to
hold the fact and that mentions it, followed from agent to agent; without one, the conversations
the source's owner had afterwards, one hop, as what *may* have carried it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TypedDict

from memstream.errors import MemstreamError
from memstream.sim.analysis.measures import fact_terms, mentions
from memstream.stream import DIALOGUE, PLAN, REFLECTION, THOUGHT, Memory, MemoryRecord, MemoryStream

IDENTITY = "identity"


def source_of(m: Memory) -> str:
    """Where the memory's text came from, in a short phrase, from its kind and metadata."""
    md = m.metadata
    cited = f" from memor{'y' if len(m.cites) == 1 else 'ies'} {', '.join(map(str, m.cites))}" if m.cites else ""
    if "whisper" in md:
        return f"whispered (whisper {md['whisper']})"
    if m.kind == IDENTITY:
        return "given at the start (the town's description of the agent)"
    if m.kind == DIALOGUE:
        return f"told by {md.get('with_', 'someone')} in a conversation"
    if md.get("memo"):
        return f"model-written: the memo of a conversation{cited}"
    if md.get("planning"):
        return f"model-written: a planning thought after a conversation{cited}"
    if m.kind == REFLECTION:
        return f"model-written: a reflection insight{cited}"
    if m.kind == PLAN:
        return f"model-written: a plan{cited}"
    if "place" in md:
        return f"a place learned ({md.get('how', 'somehow')})"
    if md.get("own"):
        return "its own action"
    if "about" in md:
        return f"perceived ({md['about']})"
    if "source" in md:
        return f"{md.get('entry', 'entry')} from {md['source']}"
    if m.kind == THOUGHT:
        return f"model-written: a thought{cited}"
    return "added directly (no source recorded)"


class TracedRecord(TypedDict):
    """A memory downstream of the source, as ``memstream provenance --json`` writes it."""

    owner: str
    id: int
    kind: str
    created_at: str
    text: str
    source: str
    how: str
    possibly: bool


class SourcedMemory(MemoryRecord):
    """The memory asked about, with where its text came from."""

    source: str


class Upstream(TypedDict):
    """A memory the source cites (through any chain), with where its text came from."""

    id: int
    kind: str
    text: str
    source: str


class Provenance(TypedDict):
    """Where a memory came from and what came of it (dumped to JSON as is)."""

    memory: SourcedMemory
    upstream: list[Upstream]
    fact: str | None
    downstream: list[TracedRecord]


@dataclass(frozen=True)
class Traced:
    """A memory downstream of the source, and how it came of it."""

    memory: Memory
    how: str
    possibly: bool = False  # found by time alone (no --fact): it may or may not carry the source

    def to_dict(self) -> TracedRecord:
        m = self.memory
        return {"owner": m.owner, "id": m.id, "kind": m.kind, "created_at": m.created_at.isoformat(),
                "text": m.text, "source": source_of(m), "how": self.how, "possibly": self.possibly}


def provenance(stream: MemoryStream, agent: str, memory_id: int, fact: str | None = None) -> Provenance:
    """The memory, where it came from (through every memory it cites), and everything downstream of it,
    from every owner's memories in ``stream`` (a run's: ``RunDir.stream``)."""
    by_owner = {o: stream.memories(o) for o in stream.owners()}
    owner = next((o for o in by_owner if o.lower() == agent.lower()), None)
    if owner is None:
        raise MemstreamError(f"unknown agent {agent!r} (it has no memories)")
    mine = {m.id: m for m in by_owner[owner]}
    if memory_id not in mine:
        raise MemstreamError(f"{owner} has no memory {memory_id}; list them with memstream replay")
    source = mine[memory_id]
    return {"memory": {**source.to_dict(), "source": source_of(source)},
            "upstream": [{"id": m.id, "kind": m.kind, "text": m.text, "source": source_of(m)}
                         for m in _upstream(mine, source)],
            "fact": fact, "downstream": [t.to_dict() for t in downstream(by_owner, source, fact)]}


def downstream(by_owner: dict[str, list[Memory]], source: Memory, fact: str | None = None) -> list[Traced]:
    """Everything that came of ``source``, in the order found (breadth first)."""
    pattern = mentions(fact_terms(fact)) if fact else None
    cited_by: dict[tuple[str, int], list[Memory]] = defaultdict(list)
    talks: dict[str, list[Memory]] = defaultdict(list)  # agent -> conversations it took part in (either side's)
    for owner, ms in by_owner.items():
        for m in ms:
            for c in m.cites:
                cited_by[(owner, c)].append(m)
            if m.kind == DIALOGUE:
                talks[owner].append(m)
                if (other := m.metadata.get("with_")) in by_owner:
                    talks[other].append(m)
    found: list[Traced] = []
    seen = {(source.owner, source.id)}
    queue = [source]
    while queue:
        carrier = queue.pop(0)
        for m in cited_by[(carrier.owner, carrier.id)]:
            if (m.owner, m.id) not in seen:
                seen.add((m.owner, m.id))
                found.append(Traced(m, f"cites {carrier.owner}'s memory {carrier.id}"))
                queue.append(m)
        if pattern is None and carrier is not source:
            continue
        for m in talks[carrier.owner]:
            if (m.owner, m.id) in seen or m.created_at < carrier.created_at:
                continue
            if pattern is not None and not pattern.match(m.text):
                continue
            seen.add((m.owner, m.id))
            told = "told" if m.owner != carrier.owner else "said"
            found.append(Traced(m, f"{told} in a conversation after {carrier.owner}'s memory {carrier.id}",
                                possibly=pattern is None))
            if pattern is not None:
                queue.append(m)
    return found


def _upstream(mine: dict[int, Memory], memory: Memory) -> list[Memory]:
    """Every memory ``memory`` cites, through earlier citations, nearest first."""
    out, queue, seen = [], list(memory.cites), set()
    while queue:
        mid = queue.pop(0)
        if mid in seen or mid not in mine:
            continue
        seen.add(mid)
        out.append(mine[mid])
        queue.extend(mine[mid].cites)
    return out
