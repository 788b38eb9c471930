"""``recent``: the floor. An agent that recalls only its last few records, whatever it is asked.

Every other design is measured against this one in the town (``memstream run --design recent``): what it
shows is what an agent does with almost no memory (the paper's "no observation" ablation keeps nothing at all;
this keeps the moment just past, as working memory would). A measure on which a design does no better than the
floor does not depend on memory. Records are kept as rows like ``full``'s (so a store can be forked into another
design), but a context holds only the newest ``records`` of them, oldest first, within the budget.
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


class RecentConfig(DesignConfig):
    """The floor's one setting: how many of the newest records a context holds."""

    records: int = Field(default=5, gt=0, description="the newest records a context holds (all it recalls)")


class RecentDesign(ChangeableLog, MemoryDesign[LogState]):
    """The floor: a memory that holds only the newest few records, whatever is asked (what any design must beat)."""

    name = "recent"
    Config = RecentConfig
    State = LogState
    config: RecentConfig
    in_all: ClassVar[bool] = False
    reads_query: ClassVar[bool] = False  # the same context for every query

    def __init__(self, config: RecentConfig | None = None) -> None:
        super().__init__(config)
        self.log = RecordLog()

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        return [r.id for r in self.log.append(owner, entries)]
        yield

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        last = self.log.lines_of(owner)[-self.config.records:]
        fits = fill_tiers([Tier("window", lambda room, _: fit_newest(last, room))], budget_tokens)
        return assemble(fits, ("window",), budget_tokens)

    def get_state(self) -> LogState:
        return LogState(next_id=self.log.next_id, owners=self.log.saved())

    def set_state(self, state: LogState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
