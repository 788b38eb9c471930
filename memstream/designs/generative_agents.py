"""``stream``: the Generative Agents memory stream (Park et al. 2023), as memstream implements it.

Every entry becomes a memory whose importance the model rates when it is written; a context is
the memories the paper's score ranks best (recency + importance + relevance, min-max normalised,
with memstream's optional time term), best first until the budget is full, shown in time order.
Consolidation is the paper's reflection: when the summed importance since the last reflection
passes ``reflect_threshold``, questions, retrieved evidence and cited insights, written back as
memories; an insight's provenance is every memory it cites, through earlier insights too.
Retrieval for a context records no access by default (``touch``), so a question does not change
what the next one sees; the paper's agent does record it (``touch=True``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache

from pydantic import Field, JsonValue

from memstream.designs.base import DesignConfig, MemoryDesign, OwnFile, check_budget, own_config
from memstream.designs.context import Context, Line, fit_best
from memstream.designs.entries import Entry
from memstream.designs.log import stamped
from memstream.designs.state import DesignState, Moment, Saved
from memstream.designs.stream_file import ENTRY_KEY, StreamFile
from memstream.designs.tiers import Tier, assemble, fill_tiers
from memstream.models import Embedder, Stage
from memstream.reflection import THRESHOLD, maybe_reflect_stage
from memstream.stream import (
    DIALOGUE,
    OBSERVATION,
    REFLECTION,
    Memory,
    MemoryStream,
    Weights,
    check_file,
    importance_stage,
    new_memory,
    normalise_owner,
)

#: Memories ranked per context before the budget is filled (a 4k budget holds ~100 turns).
CANDIDATES = 400
_KINDS = {"turn": DIALOGUE, "observation": OBSERVATION, "tool": OBSERVATION, "pinned": OBSERVATION}


class StreamConfig(DesignConfig):
    """The ``stream`` design's settings: retrieval weights, the reflection threshold, and whether reads record
    accesses.
    """

    weights: Weights = Field(default_factory=Weights)
    reflect_threshold: int = Field(default=THRESHOLD, gt=0)
    touch: bool = False


class SavedMemory(Saved):
    """One memory of the stream, as its state file keeps it (its owner is the owner it is kept under)."""

    id: int = Field(ge=1)
    kind: str
    text: str
    created_at: Moment
    importance: int
    cites: list[int] = Field(default_factory=list)
    metadata: dict[str, JsonValue] = Field(default_factory=dict)


class StreamOwner(Saved):
    """An owner's memories, the accesses retrieval recorded (memory id, when), and the id it reflected through."""

    memories: list[SavedMemory] = Field(default_factory=list)
    accesses: list[tuple[int, Moment]] = Field(default_factory=list)
    reflected_through: int = Field(default=0, ge=0)


class StreamState(DesignState):
    """The state of ``stream``: the embedder that made its vectors, and each owner's memories."""

    embedder: str
    owners: dict[str, StreamOwner] = Field(default_factory=dict)


class StreamDesign(MemoryDesign[StreamState]):
    """The Generative Agents memory stream as a design: the paper's score, importance ratings and reflection."""

    name = "stream"
    records_stay = "its reflections cite the memories and would still hold the text (the stream's file is append-only)"
    Config = StreamConfig
    State = StreamState
    config: StreamConfig

    @classmethod
    def made(cls, config: DesignConfig, embedder: Embedder | None = None) -> StreamDesign:
        return cls(own_config(config, StreamConfig), embedder=embedder)

    keeps_own_file = True  # the stream's own tables (append-only by triggers), not the store's rows

    def __init__(self, config: StreamConfig | None = None, *, embedder: Embedder | None = None) -> None:
        super().__init__(config)
        self.given_embedder = embedder  # a file opened later is read with it (None: the file's own)
        self.stream = MemoryStream(":memory:", embedder, weights=self.config.weights)
        self.reflections = 0
        self._lines: dict[int, Line] = {}

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        ratings = yield from importance_stage([e.text for e in entries])
        return [self.stream.write(new_memory(
            owner=owner, text=e.text, kind=_KINDS[e.kind], created_at=e.at, importance=rating,
            metadata={"source": e.source, "session": e.session, "entry": e.kind, ENTRY_KEY: e.key}))
            for e, rating in
            zip(entries, ratings, strict=True)]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        if not self.stream.has(owner):
            return 0
        result = yield from maybe_reflect_stage(self.stream, owner, now, self.config.reflect_threshold,
                                                checker=self.checker)
        self.reflections += result is not None
        return len(result.insights) if result else 0

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        if not self.stream.has(owner):
            return Context([], budget_tokens)
        recalls = self.stream.retrieve(owner, query, now=now, k=CANDIDATES, touch=self.config.touch)
        ranked = (self._line(owner, r.memory) for r in recalls)
        fits = fill_tiers([Tier("retrieved", lambda room, _: fit_best(ranked, room))], budget_tokens)
        return assemble(fits, ("retrieved",), budget_tokens, in_time={"retrieved"})

    @property
    def weights(self) -> Weights:
        return self.config.weights

    def forget_lines(self) -> None:
        """Drop every line made (after a forget: they held the owner's text)."""
        self._lines = {}

    def _line(self, owner: str, memory: Memory) -> Line:
        """A memory's line in a context, made once (memories never change)."""
        if (made := self._lines.get(memory.id)) is not None:
            return made
        text = f"(insight) {memory.text}" if memory.kind == REFLECTION else memory.text
        ids = _closure(self.stream, normalise_owner(owner), memory.id) if memory.cites else (memory.id,)
        made = self._lines[memory.id] = stamped(text, ids, memory.created_at)
        return made

    def attach_file(self, path: str, scope: str, *, read_only: bool = False) -> OwnFile:
        return StreamFile(self, path, scope, read_only=read_only)

    @classmethod
    def check_own_file(cls, path: str) -> list[str]:
        return check_file(path)

    def counters(self) -> dict[str, int]:
        """Reflections made (the stream never compacts or drops what it was given)."""
        return {"reflections": self.reflections}

    def get_state(self) -> StreamState:
        whole = self.stream.get_state()  # the stream's own JSON-ready state, read per owner here
        memories: dict[str, list[SavedMemory]] = {o: [] for o in self.stream.owners()}
        owner_of: dict[int, str] = {}
        for m in whole["memories"]:
            owner_of[m["id"]] = m["owner"]
            memories.setdefault(m["owner"], []).append(SavedMemory.model_validate(
                {k: v for k, v in m.items() if k != "owner"}))
        accesses: dict[str, list[tuple[int, datetime]]] = {o: [] for o in memories}
        for mid, at in whole["accesses"]:
            accesses[owner_of[mid]].append((mid, datetime.fromisoformat(at)))
        return StreamState(embedder=whole["embedder"], owners={
            o: StreamOwner(memories=mine, accesses=accesses[o], reflected_through=self.stream.reflected_through(o))
            for o, mine in memories.items()})

    def set_state(self, state: StreamState) -> None:
        memories = sorted(((o, m) for o, saved in state.owners.items() for m in saved.memories), key=lambda x: x[1].id)
        self.stream.set_state({
            "embedder": state.embedder,
            "memories": [{"id": m.id, "owner": o, **m.model_dump(mode="json", exclude={"id"})} for o, m in memories],
            "accesses": [[mid, at.isoformat()] for saved in state.owners.values() for mid, at in saved.accesses]})
        for owner, saved in state.owners.items():
            self.stream.mark_reflected(owner, saved.reflected_through)


def _closure(stream: MemoryStream, owner: str, memory_id: int) -> tuple[int, ...]:
    """The memory and everything it cites, through earlier insights (its provenance)."""
    @cache
    def sources(mid: int) -> tuple[int, ...]:
        memory = stream.get(owner, mid)
        return tuple(dict.fromkeys([mid, *(i for c in memory.cites for i in sources(c))]))

    return sources(memory_id)
