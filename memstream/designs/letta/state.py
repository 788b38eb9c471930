"""The ``letta`` design's state file, typed: the blocks (shared by the owners they are attached to) and, per
owner, its records (turns and archival passages), the blocks attached to it and its agent's state."""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from memstream.designs.entries import Record
from memstream.designs.letta.blocks import DEFAULT_LIMIT, MemoryBlock
from memstream.designs.letta.memory import OwnerState
from memstream.designs.letta.queue import Queue, QueueMessage, Role
from memstream.designs.state import DesignState, OwnerRecords, Saved, SavedSummary


class SavedBlock(Saved):
    """One core memory block (``cites``: the turns whose steps edited it)."""

    id: int = Field(ge=1)
    label: str
    value: str = ""
    description: str = ""
    limit: int = Field(default=DEFAULT_LIMIT, gt=0)
    read_only: bool = False
    cites: list[int] = Field(default_factory=list)

    @classmethod
    def of(cls, b: MemoryBlock) -> SavedBlock:
        return cls(id=b.id, label=b.label, value=b.value, description=b.description, limit=b.limit,
                   read_only=b.read_only, cites=list(b.cites))

    def block(self) -> MemoryBlock:
        return MemoryBlock(self.id, self.label, self.value, self.description, self.limit, self.read_only,
                           list(self.cites))


class SavedMessage(Saved):
    """One message in the agent's FIFO queue: who it is from, its text, the records it carries, its tokens."""

    role: Role
    text: str
    ids: list[int] = Field(default_factory=list)
    tokens: int = Field(default=0, ge=0)


class SavedQueue(Saved):
    messages: list[SavedMessage] = Field(default_factory=list)
    warned: bool = False


class SavedAgent(Saved):
    """What the agent keeps of an owner besides blocks and records: its queue, summary and counts."""

    queue: SavedQueue = Field(default_factory=SavedQueue)
    summary: SavedSummary = Field(default_factory=SavedSummary)
    counts: dict[str, int] = Field(default_factory=dict)
    evicted: int = Field(default=0, ge=0)
    slept_through: int = Field(default=0, ge=0)

    @classmethod
    def of(cls, s: OwnerState) -> SavedAgent:
        queue = SavedQueue(messages=[SavedMessage(role=m.role, text=m.text, ids=list(m.ids), tokens=m.tokens)
                                     for m in s.queue.messages], warned=s.queue.warned)
        return cls(queue=queue, summary=SavedSummary.of(s.summary), counts=dict(s.counts), evicted=s.evicted,
                   slept_through=s.slept_through)

    def owner_state(self, records: dict[int, Record]) -> OwnerState:
        queue = Queue([QueueMessage(m.role, m.text, tuple(m.ids), m.tokens) for m in self.queue.messages],
                      self.queue.warned)
        return OwnerState(queue, self.summary.summary(records), Counter(self.counts), self.evicted,
                          self.slept_through)


class LettaOwner(OwnerRecords):
    """An owner's records, which of them are archival passages (id -> the turns each was written from), the
    ids of the blocks attached to it (in order) and its agent's state (None until the agent first saw it)."""

    passages: dict[int, list[int]] = Field(default_factory=dict)
    blocks: list[int] = Field(default_factory=list)
    agent: SavedAgent | None = None


class LettaState(DesignState):
    """The state of ``letta``: the next record and block ids, every block, and each owner's memory."""

    next_id: int = Field(default=1, ge=1)
    next_block: int = Field(default=1, ge=1)
    blocks: list[SavedBlock] = Field(default_factory=list)
    owners: dict[str, LettaOwner] = Field(default_factory=dict)
