"""Core memory blocks: labelled, size-limited texts always in the agent's context, edited by its tools.

A block has a label (``human``, ``persona``, ...), a description that tells the model what the
block is for, a value, a character limit and a read-only flag (Letta's ``Block``). Blocks live in
one :class:`BlockStore` per design and are *attached* to owners by id, so one block can be attached
to two owners: an edit by one is seen by the other at once, as Letta's shared blocks are (a team's
shared knowledge, a sleep-time agent editing its primary agent's memory).

Blocks are compiled into the context in Letta's documented XML-like form, with each block's
current size and limit in its metadata, so the model sees how much room it has left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memstream.designs.ids import Counter, IdSource
from memstream.errors import MemstreamError

#: Letta's default character limit of a core memory block.
DEFAULT_LIMIT = 5000
#: A label is the block's tag in the compiled context, so it is a plain name.
LABEL = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


@dataclass
class MemoryBlock:
    """One core memory block; ``cites`` are the record ids of the turns whose steps edited it."""

    id: int
    label: str
    value: str = ""
    description: str = ""
    limit: int = DEFAULT_LIMIT
    read_only: bool = False
    cites: list[int] = field(default_factory=list)


class BlockStore:
    """Every block the design holds, and which owners each is attached to (by id: shared, not copied)."""

    def __init__(self) -> None:
        self.blocks: dict[int, MemoryBlock] = {}
        self.attached: dict[str, list[int]] = {}
        self.ids: IdSource = Counter()

    @property
    def next_id(self) -> int:
        return self.ids.next_id

    def create(self, label: str, value: str = "", *, description: str = "", limit: int = DEFAULT_LIMIT,
               read_only: bool = False) -> MemoryBlock:
        if not isinstance(label, str) or not LABEL.fullmatch(label):
            raise MemstreamError(f"bad block label {label!r}; use a name of letters, digits, _ and -, e.g. team_notes")
        if limit <= 0:
            raise MemstreamError(f"block {label!r}: its character limit must be positive, got {limit}")
        if len(value) > limit:
            raise MemstreamError(f"block {label!r}: its value ({len(value)} characters) is over its limit of {limit}")
        made = MemoryBlock(self.ids.take(), label, value, description, limit, read_only)
        self.blocks[made.id] = made
        return made

    def attach(self, owner: str, block: MemoryBlock) -> None:
        """Attach ``block`` to ``owner``; an owner holds at most one block per label."""
        mine = self.attached.setdefault(owner, [])
        if block.id in mine:
            return
        if any(self.blocks[i].label == block.label for i in mine):
            raise MemstreamError(f"{owner!r} already has a block labelled {block.label!r}; choose another label")
        mine.append(block.id)

    def of(self, owner: str) -> list[MemoryBlock]:
        return [self.blocks[i] for i in self.attached.get(owner, [])]

    def get(self, owner: str, label: str) -> MemoryBlock | None:
        return next((b for b in self.of(owner) if b.label == label), None)

    def owners_of(self, block: MemoryBlock) -> list[str]:
        return [o for o, ids in self.attached.items() if block.id in ids]


def compile_block(block: MemoryBlock, shown: str | None = None) -> str:
    """One block as Letta compiles it into the context: label tags around description, metadata, value
    (``shown`` in place of the value where only part of it fits a context; the sizes stay the block's)."""
    metadata = [f"- chars_current={len(block.value)}", f"- chars_limit={block.limit}"]
    if block.read_only:
        metadata.append("- read_only=true")
    return (f"<{block.label}>\n<description>\n{block.description}\n</description>\n"
            f"<metadata>\n" + "\n".join(metadata) + "\n</metadata>\n"
            f"<value>\n{block.value if shown is None else shown}\n</value>\n</{block.label}>")


MEMORY_OPEN = "<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:\n"
MEMORY_CLOSE = "</memory_blocks>"


def compile_blocks(blocks: list[MemoryBlock]) -> str:
    """All of an owner's blocks, in Letta's ``<memory_blocks>`` form."""
    return MEMORY_OPEN + "\n" + "\n\n".join(compile_block(b) for b in blocks) + "\n" + MEMORY_CLOSE
