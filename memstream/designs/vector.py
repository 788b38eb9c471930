"""``vector``: relevance only, over every record (the "RAG over the whole history" baseline).

Each record is embedded (a long one by its best window) and the records most similar to the
query fill the budget, best first; they are shown in time order. No recency, no importance,
no summary: the retrieval baseline of MemEngine's FUMemory/LTMemory and of Mem0's comparisons.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from memstream.designs.base import DesignConfig, MemoryDesign, OwnerRows, check_budget
from memstream.designs.context import Context, fit_best
from memstream.designs.entries import Entry
from memstream.designs.index import RecordIndex
from memstream.designs.log import ChangeableLog, RecordLog
from memstream.designs.state import LogState, records_of
from memstream.designs.tiers import Tier, assemble, fill_tiers
from memstream.models import Embedder, Stage, make_embedder
from memstream.stream import normalise_owner, top_k


class VectorDesign(ChangeableLog, MemoryDesign[LogState]):
    """The records most similar to the query, best first to the budget, shown in time order: RAG over the history."""

    name = "vector"
    State = LogState

    @classmethod
    def made(cls, config: DesignConfig, embedder: Embedder | None = None) -> VectorDesign:
        return cls(config, embedder=embedder)

    def __init__(self, config: DesignConfig | None = None, *, embedder: Embedder | None = None) -> None:
        super().__init__(config)
        self.embedder = embedder or make_embedder()
        self.log = RecordLog()
        self.indexes: dict[str, RecordIndex] = {}

    def _index(self, owner: str) -> RecordIndex:
        return self.indexes.setdefault(normalise_owner(owner), RecordIndex(self.embedder))

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        records = self.log.append(owner, entries)
        self._index(owner).add(records)
        return [r.id for r in records]
        yield

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        index = self._index(owner)
        if not len(index):
            return Context([], budget_tokens)
        relevance = index.relevance(query).astype(np.float64)
        lines = self.log.lines_of(owner)
        ranked = (lines[i] for i in top_k(relevance, len(lines)))
        fits = fill_tiers([Tier("retrieved", lambda room, _: fit_best(ranked, room))], budget_tokens)
        return assemble(fits, ("retrieved",), budget_tokens, in_time={"retrieved"})

    def ranked(self, owner: str, query: str, limit: int) -> list[tuple[int, float]]:
        """The ``limit`` records most relevant to ``query``, best first: each record's id and its relevance
        (the cosine similarity the context ranks by)."""
        index = self._index(owner)
        if not len(index):
            return []
        relevance = index.relevance(query).astype(np.float64)
        records = self.log.records(owner)
        return [(records[i].id, float(relevance[i])) for i in top_k(relevance, min(limit, len(records)))[:limit]]

    def load_owner(self, owner: str, rows: OwnerRows) -> None:
        super().load_owner(owner, rows)
        self._index(owner).add(list(rows.records))

    def drop_owner(self, owner: str) -> None:
        super().drop_owner(owner)
        self.indexes.pop(owner, None)

    def change_record(self, owner: str, record_id: int, text: str | None) -> None:
        """The record changed in the log and in the owner's index (only its vectors made again)."""
        at = self.log.change(owner, record_id, text)
        records = self.log.records(owner)
        self._index(owner).change(at, records[at] if text is not None else None)
        if not records:
            self.indexes.pop(normalise_owner(owner), None)

    def get_state(self) -> LogState:
        return LogState(next_id=self.log.next_id, owners=self.log.saved())

    def set_state(self, state: LogState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
        self.indexes = {}
        for owner, records in self.log.by_owner.items():
            self._index(owner).add(records)
