"""One owner's memory as the tools and the agent loop see it, at one moment (a view on the design).

Recall storage is every turn the owner was given; archival storage is the passages the agent
inserted. Both are kept in the design's record log (one id space, so provenance never confuses
them) and each has its own index, searched with BM25 over each record and its neighbours
(:class:`~memstream.designs.index.RecordIndex`), a lexical stand-in for Letta's embedding search.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from memstream.designs.entries import Entry, Record, entry
from memstream.designs.index import RecordIndex
from memstream.designs.letta import prompts
from memstream.designs.letta.blocks import BlockStore, MemoryBlock, compile_blocks
from memstream.designs.letta.queue import Queue, QueueMessage, Role, pressure
from memstream.designs.letta.tools import AGENT_TOOLS, SLEEPTIME_TOOLS, Failed
from memstream.designs.retrievers import RETRIEVAL_WEIGHTS, score
from memstream.designs.summary import Summary, absorb_stage
from memstream.errors import MemstreamError
from memstream.models import Message, Stage, count_tokens
from memstream.stream import top_k

#: Where archival passages say they came from.
ARCHIVAL = "archival"
#: The retriever of the searches (BM25 over text and neighbours).
SEARCH = "bm25+keys"


@dataclass
class OwnerState:
    """What the design keeps per owner besides blocks and records."""

    queue: Queue = field(default_factory=Queue)
    summary: Summary = field(default_factory=Summary)
    counts: Counter[str] = field(default_factory=Counter)
    evicted: int = 0          # messages evicted from the queue so far
    slept_through: int = 0    # the last record id the sleep-time agent has read


class Holder(Protocol):
    """What a view needs of the design that holds the memory (:class:`~.design.LettaDesign`)."""

    config: Any
    store: BlockStore
    archival: dict[int, list[int]]

    def owner_state(self, owner: str) -> OwnerState: ...
    def add_records(self, owner: str, entries: list[Entry], *, archival: bool = False) -> list[Record]: ...
    def turns_in(self, messages: list[QueueMessage]) -> list[Record]: ...
    def counts_stored(self, owner: str) -> tuple[int, int]: ...
    def search(self, owner: str, query: str, *, archival: bool) -> list[Record]: ...


class View:
    """The owner's memory for the tools (:class:`~.tools.OwnerMemory`); ``cites`` are the turns an edit
    comes from (its provenance)."""

    def __init__(self, design: Holder, owner: str, now: datetime, cites: tuple[int, ...]) -> None:
        self.design, self.owner, self.now, self.cites = design, owner, now, cites
        self.state = design.owner_state(owner)

    # -- OwnerMemory ---------------------------------------------------------------------------
    def block(self, label: str) -> MemoryBlock | None:
        return self.design.store.get(self.owner, label)

    def labels(self) -> list[str]:
        return [b.label for b in self.design.store.of(self.owner)]

    def edited(self, block: MemoryBlock) -> None:
        block.cites.extend(i for i in self.cites if i not in block.cites)
        self.state.counts["block_edits"] += 1

    def archival_insert(self, content: str) -> int:
        try:
            made = entry(text=content, at=self.now, source=ARCHIVAL, kind="observation")
        except MemstreamError as e:
            raise Failed("bad_argument", f"content cannot be stored: {e}") from None
        record = self.design.add_records(self.owner, [made], archival=True)[0]
        self.design.archival[record.id] = list(self.cites)
        self.state.counts["archival_inserts"] += 1
        return record.id

    def search(self, query: str, archival: bool, page: int) -> str:
        found = self.design.search(self.owner, query, archival=archival)
        size = self.design.config.page_size
        pages = max(1, -(-len(found) // size))
        if not found:
            return "No results found."
        if page >= pages:
            raise Failed("bad_argument", f"page {page} is past the last page ({pages - 1})")
        shown = found[page * size:(page + 1) * size]
        first = page * size + 1
        head = f"Showing {first}-{first + len(shown) - 1} of {len(found)} results (page {page} of {pages - 1}):"
        return "\n".join([head, *(f"- {r.line}" for r in shown)])

    def reply(self, message: str) -> None:
        if self.design.config.listen:
            self.state.counts["replies_dropped"] += 1  # no one to send it to: counted, not kept
            return
        self.state.counts["replies"] += 1
        if message.strip():
            self.design.add_records(self.owner, [entry(text=message, at=self.now, source="assistant")])


class AgentTranscript:
    """The agent's own view: the system message, core memory and summary, then the FIFO queue; before each
    step, the queue's pressure is checked (a warning at ``warn_at``, eviction into the summary at the window)."""

    def __init__(self, view: View) -> None:
        self.view = view
        self.design = view.design
        self.state = view.state

    def system(self) -> Message:
        c, d = self.design.config, self.design
        blocks = compile_blocks(d.store.of(self.view.owner))
        recall, archival = d.counts_stored(self.view.owner)
        return prompts.system_message(prompts.agent_role(c.listen), AGENT_TOOLS, blocks,
                                      prompts.metadata(self.view.now, recall, archival),
                                      self.state.summary.text, self.state.evicted)

    def messages(self) -> list[Message]:
        return [self.system(), *(chat_message(m) for m in self.state.queue.messages)]

    def add(self, role: Role, text: str) -> None:
        self.state.queue.add(role, text)

    def tokens(self) -> int:
        return count_tokens(self.system()["content"]) + self.state.queue.tokens

    def prepare(self) -> Stage[bool]:
        c, queue, counts = self.design.config, self.state.queue, self.state.counts
        while (need := pressure(self.tokens(), c.window_tokens, c.warn_at, queue.warned)) is not None:
            if need == "warn":
                queue.add("system", prompts.WARNING)
                queue.warned = True
                counts["warnings"] += 1
                continue
            gone = queue.evict(c.evict_share)
            if not gone:
                return False
            counts["evictions"] += 1
            counts["evicted_messages"] += len(gone)
            self.state.evicted += len(gone)
            self.state.summary.pending.extend(self.design.turns_in(gone))
            counts["summaries"] += yield from absorb_stage(self.state.summary, c.summary_batch, c.summary_words,
                                                           everything=True)
        return True


class SleeptimeTranscript:
    """The sleep-time agent's view: its instructions, the blocks, the recent turns, then its own chain."""

    def __init__(self, view: View, turns: list[str]) -> None:
        self.view, self.turns = view, turns
        self.chain: list[QueueMessage] = []

    def messages(self) -> list[Message]:
        d = self.view.design
        recall, archival = d.counts_stored(self.view.owner)
        system = prompts.system_message(prompts.SLEEPTIME, SLEEPTIME_TOOLS, compile_blocks(d.store.of(self.view.owner)),
                                        prompts.metadata(self.view.now, recall, archival), "", 0)
        return [system, {"role": "user", "content": prompts.sleeptime_request(self.turns)},
                *(chat_message(m) for m in self.chain)]

    def add(self, role: Role, text: str) -> None:
        self.chain.append(QueueMessage.of(role, text))

    def prepare(self) -> Stage[bool]:
        """Room for a step: the oldest turns are left out until the request fits the window (False if
        even one turn does not)."""
        window = self.view.design.config.window_tokens
        while (used := sum(count_tokens(m["content"]) for m in self.messages())) >= window and len(self.turns) > 1:
            self.turns = self.turns[1:]
        return used < window
        yield


def chat_message(m: QueueMessage) -> Message:
    """A queue message as the chat endpoint takes it (tool results and alerts as prefixed user messages)."""
    return {"role": "assistant" if m.role == "assistant" else "user", "content": m.text}


def ranked(scores: np.ndarray, keep: np.ndarray | list[bool]) -> list[int]:
    """Positions of the kept records, best score first."""
    return [int(i) for i in top_k(scores, len(scores)) if keep[i]]


def search_scores(index: RecordIndex, query: str, now: datetime) -> np.ndarray:
    signals = index.signals(query, now, dense=False, lexical=True)
    return score(SEARCH, signals, RETRIEVAL_WEIGHTS)


def transcript_lines(records: list[Record]) -> list[str]:
    return [r.line for r in records]
