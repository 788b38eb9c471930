"""``buffer-summary``: the last N turns verbatim, and a recursive summary of the turns evicted before them.

LangChain's ConversationSummaryBufferMemory (a buffer of recent messages, older ones folded into a
running summary when the buffer overflows) and MemGPT's recursive summary (Packer et al. 2023:
evicted messages summarised with the previous summary). Evicted turns are summarised in batches
of ``batch`` (one request each) as they are written; :meth:`consolidate_stage` folds in what is
left (a session's end). Until then they stay in the window, so nothing is ever out of both.
The summary takes up to ``summary_share`` of the budget, the window the rest, newest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import ClassVar

from pydantic import Field

from memstream.designs.base import COMPACTIONS, DesignConfig, MemoryDesign, OwnerRows, check_budget
from memstream.designs.context import Context, fit_newest
from memstream.designs.entries import Entry
from memstream.designs.log import LogRows, RecordLog
from memstream.designs.state import SavedSummary, SummarisedOwner, SummarisedState, records_of
from memstream.designs.summary import Summary, absorb_stage, summary_doc, summary_of
from memstream.designs.tiers import Tier, assemble, fill_tiers
from memstream.models import Stage
from memstream.stream import normalise_owner


class BufferConfig(DesignConfig):
    """The ``buffer-summary`` design's settings: the verbatim window, the summary's batches and its share of the
    budget.
    """

    turns: int = Field(default=20, gt=0, description="turns kept verbatim")
    batch: int = Field(default=10, gt=0, description="evicted turns summarised per request")
    summary_words: int = Field(default=300, gt=0, description="the summary's length limit, asked of the model")
    summary_share: float = Field(default=0.3, ge=0, le=1, description="of the budget, at most, for the summary")


class BufferSummary(LogRows, MemoryDesign[SummarisedState]):
    """The last turns verbatim plus a recursive summary of the evicted ones (LangChain's
    ConversationSummaryBufferMemory).
    """

    name = "buffer-summary"
    records_stay = "its running summary is written from the records and would still hold the text"
    Config = BufferConfig
    State = SummarisedState
    reads_query: ClassVar[bool] = False  # the same context for every query
    config: BufferConfig

    def __init__(self, config: BufferConfig | None = None) -> None:
        super().__init__(config)
        self.log = RecordLog()
        self.summaries: dict[str, Summary] = {}

    def _summary(self, owner: str) -> Summary:
        return self.summaries.setdefault(normalise_owner(owner), Summary())

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        records = self.log.append(owner, entries)
        summary = self._summary(owner)
        mine = self.log.records(owner)
        evicted_through = len(mine) - self.config.turns
        seen = summary.done + len(summary.pending)
        summary.pending.extend(mine[seen:max(seen, evicted_through)])
        yield from absorb_stage(summary, self.config.batch, self.config.summary_words, checker=self.checker,
                                owner=owner)
        return [r.id for r in records]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        return (yield from absorb_stage(self._summary(owner), self.config.batch, self.config.summary_words,
                                        everything=True, checker=self.checker, owner=owner))

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        summary = self._summary(owner)
        window = self.log.lines_of(owner)[summary.done:]  # the last N, and any not yet summarised
        fits = fill_tiers([
            Tier("summary", lambda room, _: fit_newest(summary.lines(), room), self.config.summary_share),
            Tier("window", lambda room, _: fit_newest(window, room))], budget_tokens)
        return assemble(fits, ("summary", "window"), budget_tokens)

    def counters(self) -> dict[str, int]:
        """Compactions: summary requests, each folding a batch of evicted turns into the summary."""
        return {COMPACTIONS: sum(s.calls for s in self.summaries.values())}

    def owner_rows(self, owner: str) -> OwnerRows:
        mine = self.log.records(owner)
        return OwnerRows(mine, docs={"summary": summary_doc(self._summary(owner), mine)})

    def load_owner(self, owner: str, rows: OwnerRows) -> None:
        super().load_owner(owner, rows)
        if "summary" in rows.docs:
            self.summaries[owner] = summary_of(rows.docs["summary"], rows.records)  # type: ignore[arg-type]

    def drop_owner(self, owner: str) -> None:
        super().drop_owner(owner)
        self.summaries.pop(owner, None)

    def get_state(self) -> SummarisedState:
        records = self.log.saved()
        return SummarisedState(next_id=self.log.next_id, owners={
            o: SummarisedOwner(records=records[o].records if o in records else [],
                               summary=SavedSummary.of(self._summary(o)))
            for o in dict.fromkeys([*records, *self.summaries])})

    def set_state(self, state: SummarisedState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
        by_id = self.log.by_id()
        self.summaries = {o: saved.summary.summary(by_id) for o, saved in state.owners.items()}
