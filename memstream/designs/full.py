"""``full``: the whole history in the context, cut from the oldest only when it does not fit.

The baseline every memory system is measured against (Mem0's paper, Chhikara et al. 2025: a
full-context baseline beat every memory system on accuracy and lost on tokens and latency).
Nothing is summarised or retrieved; the limit is the budget or the model's window, whichever is
smaller, and every record cut is counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import ClassVar

from pydantic import Field

from memstream.designs.base import DesignConfig, MemoryDesign, check_budget
from memstream.designs.context import Context, fit_newest
from memstream.designs.entries import Entry
from memstream.designs.log import ChangeableLog, RecordLog
from memstream.designs.state import LogState, records_of
from memstream.designs.tiers import Tier, assemble, fill_tiers
from memstream.models import Stage


class FullConfig(DesignConfig):
    """The ``full`` design's settings: the answer model's context window."""

    #: The answer model's context window in tokens (a context is never larger).
    window_tokens: int = Field(default=128_000, gt=0)


class FullContext(ChangeableLog, MemoryDesign[LogState]):
    """Every record, oldest first, cut from the oldest to the budget: Mem0's full-context baseline."""

    name = "full"
    Config = FullConfig
    State = LogState
    config: FullConfig
    reads_query: ClassVar[bool] = False  # the same context for every query

    def __init__(self, config: FullConfig | None = None) -> None:
        super().__init__(config)
        self.log = RecordLog()

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        return [r.id for r in self.log.append(owner, entries)]
        yield

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        limit = min(check_budget(budget_tokens), self.config.window_tokens)
        fits = fill_tiers([Tier("history", lambda room, _: fit_newest(self.log.lines_of(owner), room))], limit)
        return assemble(fits, ("history",), budget_tokens)

    def get_state(self) -> LogState:
        return LogState(next_id=self.log.next_id, owners=self.log.saved())

    def set_state(self, state: LogState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
