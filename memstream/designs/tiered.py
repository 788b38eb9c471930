"""``tiered``: pinned + summary + recent window + retrieved, each tier under its own share of the budget.

The shape of MemGPT's main context (system and core memory always in, a recursive summary, the
FIFO queue of recent messages) with retrieval from the whole history added, as Zep and Mem0
assemble theirs: a small always-present part, the gist of the past, the last few turns, and
whatever the query needs from anywhere. Tiers are filled in that order, each up to its share of
the budget; what a tier leaves unused goes to the retrieved tier, which takes the rest. Retrieval
is any of memstream's retrievers (``memstream.designs.RETRIEVERS``; records already in the window
are not retrieved twice); the generative ones rate importance as entries are written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from pydantic import Field, JsonValue, field_validator

from memstream.designs.base import COMPACTIONS, DesignConfig, MemoryDesign, OwnerRows, check_budget, own_config
from memstream.designs.context import Context, Fit, fit_best, fit_newest
from memstream.designs.entries import Entry, Record
from memstream.designs.ids import IdSource
from memstream.designs.index import RecordIndex
from memstream.designs.log import RecordLog
from memstream.designs.retrievers import (
    LEXICAL,
    NEEDS_IMPORTANCE,
    NEEDS_VECTORS,
    RETRIEVAL_WEIGHTS,
    check_retriever,
    score,
)
from memstream.designs.state import DesignState, SavedSummary, SummarisedOwner, records_of
from memstream.designs.summary import Summary, absorb_stage, summary_doc, summary_of
from memstream.designs.tiers import Tier, assemble, fill_tiers, shown_ids
from memstream.models import Embedder, Stage, make_embedder
from memstream.stream import Weights, importance_stage, normalise_owner, top_k


class TieredConfig(DesignConfig):
    """The ``tiered`` design's settings: its retriever and weights, the recent window, the summary's batches and
    tier shares.
    """

    retriever: str = "hybrid"
    weights: Weights = RETRIEVAL_WEIGHTS
    window_turns: int = Field(default=10, gt=0, description="recent turns kept verbatim")
    batch: int = Field(default=10, gt=0, description="turns summarised per request")
    summary_words: int = Field(default=150, gt=0)
    pinned_share: float = Field(default=0.1, ge=0, le=1)
    summary_share: float = Field(default=0.1, ge=0, le=1)
    window_share: float = Field(default=0.15, ge=0, le=1)

    @field_validator("retriever")
    @classmethod
    def _known(cls, value: str) -> str:
        return check_retriever(value)


class TieredOwner(SummarisedOwner):
    """An owner's records, summary and the importance the model rated each record (the generative retrievers')."""

    importance: dict[int, int] = Field(default_factory=dict)


class TieredState(DesignState):
    """The state of ``tiered``: each owner's records, summary and ratings."""

    next_id: int = Field(default=1, ge=1)
    owners: dict[str, TieredOwner] = Field(default_factory=dict)


class TieredDesign(MemoryDesign[TieredState]):
    """Pinned, summary, recent window and retrieved tiers in one context: MemGPT's main context plus retrieval."""

    name = "tiered"
    records_stay = "its session and long-term summaries are written from the records and would still hold the text"
    Config = TieredConfig
    State = TieredState
    config: TieredConfig

    @classmethod
    def made(cls, config: DesignConfig, embedder: Embedder | None = None) -> TieredDesign:
        return cls(own_config(config, TieredConfig), embedder=embedder)

    def __init__(self, config: TieredConfig | None = None, *, embedder: Embedder | None = None) -> None:
        super().__init__(config)
        dense = self.config.retriever in NEEDS_VECTORS
        self.embedder = (embedder or make_embedder()) if dense else None
        self.log = RecordLog()
        self.indexes: dict[str, RecordIndex] = {}
        self.summaries: dict[str, Summary] = {}
        self.importance: dict[int, int] = {}
        self.turns: dict[str, list[Record]] = {}  # each owner's records but the pinned ones (what is summarised)

    def _index(self, owner: str) -> RecordIndex:
        return self.indexes.setdefault(normalise_owner(owner), RecordIndex(self.embedder))

    def _summary(self, owner: str) -> Summary:
        return self.summaries.setdefault(normalise_owner(owner), Summary())

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        ratings: list[int] | None = None
        if self.config.retriever in NEEDS_IMPORTANCE:
            ratings = yield from importance_stage([e.text for e in entries])
        records = self.log.append(owner, entries)
        if ratings is not None:
            self.importance.update((r.id, x) for r, x in zip(records, ratings, strict=True))
        self._index(owner).add(records, [float(self.importance.get(r.id, 5)) for r in records])
        summary = self._summary(owner)
        turns = self.turns.setdefault(normalise_owner(owner), [])
        turns.extend(r for r in records if r.kind != "pinned")
        seen = summary.done + len(summary.pending)
        summary.pending.extend(turns[seen:max(seen, len(turns) - self.config.window_turns)])
        yield from absorb_stage(summary, self.config.batch, self.config.summary_words, checker=self.checker,
                                owner=owner)
        return [r.id for r in records]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        made = yield from absorb_stage(self._summary(owner), self.config.batch, self.config.summary_words,
                                       everything=True, checker=self.checker, owner=owner)
        if self.config.retriever in LEXICAL:
            self._index(owner).prepare()
        return made

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        c = self.config
        lines = self.log.lines_of(owner)
        records = self.log.records(owner)
        summary = self._summary(owner)
        pinned = [x for x, r in zip(lines, records, strict=True) if r.kind == "pinned"]
        absorbed = {*summary.covers, *summary.skipped}
        window = [x for x, r in zip(lines, records, strict=True) if r.kind != "pinned" and r.id not in absorbed]
        fits = fill_tiers([
            Tier("pinned", lambda room, _: fit_newest(pinned, room), c.pinned_share),
            Tier("summary", lambda room, _: fit_newest(summary.lines(), room), c.summary_share),
            Tier("window", lambda room, _: fit_newest(window, room), c.window_share),
            Tier("retrieved", lambda room, fits: self._retrieve(owner, query, now, room,
                                                                shown_ids(fits, "window", "pinned")))], budget_tokens)
        return assemble(fits, ("pinned", "summary", "retrieved", "window"), budget_tokens, in_time={"retrieved"})

    def _retrieve(self, owner: str, query: str, now: datetime, room: int, shown: set[int]) -> Fit:
        index = self._index(owner)
        if not len(index) or room <= 0:
            return Fit([])
        name = self.config.retriever
        signals = index.signals(query, now, dense=name in NEEDS_VECTORS,
                                lexical=name in LEXICAL)
        scores = score(name, signals, self.config.weights)
        lines = self.log.lines_of(owner)
        ranked = (lines[i] for i in top_k(scores, len(lines)) if lines[i].ids[0] not in shown)
        return fit_best(ranked, room)

    def counters(self) -> dict[str, int]:
        """Compactions: summary requests, each folding a batch of evicted turns into the summary."""
        return {COMPACTIONS: sum(s.calls for s in self.summaries.values())}

    # -- kept in a store ------------------------------------------------------------------------

    def owner_rows(self, owner: str) -> OwnerRows:
        """Records; beside each, the importance the model rated it (if it did); the summary, as a document."""
        extras = cast(Mapping[int, JsonValue], self.importance)  # read only for the records being written
        summary = summary_doc(self._summary(owner), self.turns.get(owner, []))
        return OwnerRows(self.log.records(owner), extras, {"summary": summary})

    def load_owner(self, owner: str, rows: OwnerRows) -> None:
        self.log.hold(owner, rows.records)
        records = self.log.records(owner)
        self.importance.update((i, int(cast(int, x))) for i, x in rows.extras.items())
        self._hold_turns(owner, records)
        if "summary" in rows.docs:
            self.summaries[owner] = summary_of(cast(dict[str, Any], rows.docs["summary"]), self.turns[owner])

    def drop_owner(self, owner: str) -> None:
        for r in self.log.records(owner):
            self.importance.pop(r.id, None)
        self.log.drop(owner)
        for held in (self.indexes, self.summaries, self.turns):
            held.pop(owner, None)

    def use_ids(self, ids: IdSource) -> None:
        self.log.ids = ids

    def _hold_turns(self, owner: str, records: list[Record]) -> None:
        """The owner's index and turns made from ``records`` (as the design holds them)."""
        self.turns[owner] = [r for r in records if r.kind != "pinned"]
        self.indexes.pop(owner, None)
        self._index(owner).add(records, [float(self.importance.get(r.id, 5)) for r in records])

    def get_state(self) -> TieredState:
        records = self.log.saved()
        owners = {}
        for o in dict.fromkeys([*records, *self.summaries]):
            mine = records[o].records if o in records else []
            owners[o] = TieredOwner(records=mine, summary=SavedSummary.of(self._summary(o)),
                                    importance={r.id: self.importance[r.id] for r in mine if r.id in self.importance})
        return TieredState(next_id=self.log.next_id, owners=owners)

    def set_state(self, state: TieredState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
        by_id = self.log.by_id()
        self.summaries = {o: saved.summary.summary(by_id) for o, saved in state.owners.items()}
        self.importance = {i: x for saved in state.owners.values() for i, x in saved.importance.items()}
        self.indexes, self.turns = {}, {}
        for owner, records in self.log.by_owner.items():
            self._hold_turns(owner, records)
