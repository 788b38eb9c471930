"""The town's memory on any design: what an agent recalls comes from its design's context, not the stream.

The town's stages (planning, reactions, dialogue, plan revision, reflection, spatial memory, perception)
read and write memory through the surface of a :class:`~memstream.stream.MemoryStream`: they write with
``write`` and recall with ``retrieve`` / ``retrieve_many`` (a query, ``k`` memories) and ``recent`` (the
newest ``n``). That is the town's one memory interface (:data:`RECALLS` and :data:`WRITES` name it). With
``--design stream`` (the default) it is the stream itself: today's run, byte for byte.

With any other design a :class:`DesignMemory` holds it: a stream file that is the run's *record* of what each
agent took in (ids, kinds, importance, plans' metadata, the reflection trigger's counts: what measures, replay
and provenance read), and the design, which is the agent's *recall*. Every memory written is also an entry
written through the design's write path (``remember_stage``; queued per owner and written when that owner next
recalls, and for every agent together at the end of each step: batched across agents, and at the same points
whether or not the run stops and resumes there). Every recall asks the design for
a context on the query under a token budget (``k`` × :data:`TOKENS_PER_RECALL`, each purpose's ``k`` its own
named constant: ``YESTERDAY_K``, ``COMMITMENTS_K``, ``REVISE_K``, ``EVIDENCE_K``, ``TURN_K``, ...), and the
context's rendered text is read back line by line: a line that is a memory the agent wrote (its text under
its stamp) is that memory; any other line (a summary, a profile field, a fact, a core block) is a memory of
its own, its text the line, cited to the newest record the line's block comes from. So the prompts and the
offline stand-in read what the design gives, as text, and nothing here knows which design it is.

A design's own upkeep (``consolidate_stage``: a summary folded in, sleep-time work, a profile compacted, facts
consolidated) runs for each agent at its bedtime (:func:`bedtime_in`), its model calls counted with the run's.
The town's reflection still runs on every design (it is a module of the town, ``--ablate reflection`` its
switch), its insights written into the design like any memory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memstream.designs import Entry
from memstream.models import ChatModel, Embedder
from memstream.stream import THOUGHT, Memory, MemoryStream, NewMemory, Recall, Weights
from memstream.timeutil import minute_of_day

if TYPE_CHECKING:
    from memstream.designs import BoundDesign, Context

#: The stream methods through which the town recalls and writes (what a :class:`DesignMemory` answers).
RECALLS: Final = ("retrieve", "retrieve_many", "recent")
WRITES: Final = ("write",)
#: The design that is the town's own stream (``--design stream``, the default: no design store at all).
STREAM_DESIGN: Final = "stream"
#: Tokens of context a design is given per memory a stage asks for (its budget is ``k`` times this): about a
#: sentence-long observation with its stamp. A run's ``recall_tokens`` setting replaces it.
TOKENS_PER_RECALL: Final = 40
#: The query of a ``recent`` recall (reflection's focal points, the day's news): what a design is asked.
RECENT_QUERY: Final = "What has {owner} seen, done and heard most recently?"
#: A context's stamp heading (``memstream.designs.entries.stamp_of``), as read back.
_STAMP = re.compile(r"\[(\d{2} \w+ \d{4} \d{2}:\d{2})\]")
_HEADING = re.compile(r"## .*")
_ENTRY_ID = "m{id}"  # an entry's id: the memory it was written as (a retried write is stored once)


class DesignMemory(MemoryStream):
    """A run's stream file as its record, and ``design`` as every agent's recall (see the module's doc)."""

    def __init__(self, path: str | Path, embedder: Embedder, *, weights: Weights, design: BoundDesign,
                 recall_tokens: int = TOKENS_PER_RECALL, closing: ExitStack | None = None,
                 readonly: bool = False) -> None:
        super().__init__(path, embedder, weights=weights, create=not readonly, readonly=readonly)
        self.design, self.recall_tokens = design, recall_tokens
        self._closing = closing or ExitStack()
        self._queued: dict[str, list[Entry]] = {}
        self._ledger_ids: dict[str, dict[int, int]] = {}   # owner -> design record id -> memory id
        self._by_first_line: dict[str, dict[str, list[Memory]]] = {}
        self._indexed: dict[str, int] = {}      # owner -> its memories in the index
        self._indexed_id: dict[str, int] = {}   # owner -> its newest memory there
        self._readonly = readonly
        self._blind: dict[str, tuple[tuple[datetime, int], list[Recall], int]] = {}  # owner -> its last context
        self.contexts = 0          # contexts asked for
        self.context_tokens = 0    # tokens they held
        self.consolidations = 0    # the design's upkeep run for an agent (at its bedtime)
        self.consolidated = 0      # records or summaries that upkeep wrote

    @classmethod
    def open(cls, path: str | Path, embedder: Embedder, *, weights: Weights, design: str, store: Path,
             settings: Mapping[str, Any], chat: ChatModel | None, recall_tokens: int = TOKENS_PER_RECALL,
             ) -> DesignMemory:
        """The stream at ``path`` as the record, ``design`` bound to the design store at ``store`` as the recall
        (both closed by :meth:`close`)."""
        from memstream.designs import open_design

        closing = ExitStack()
        try:
            bound = closing.enter_context(open_design(design, store=store, embedder=embedder, chat=chat,
                                                      **dict(settings)))
            return cls(path, embedder, weights=weights, design=bound, recall_tokens=recall_tokens, closing=closing)
        except BaseException:
            closing.close()
            raise

    @classmethod
    def read_only(cls, path: str | Path, embedder: Embedder, *, design: str, store: Path,
                  recall_tokens: int = TOKENS_PER_RECALL) -> DesignMemory:
        """The record at ``path`` and the design store at ``store`` (the run's, or a checkpoint's copy), opened to
        ask what the agents recall and nothing more: no file is written (a measure, an interview, the view)."""
        from memstream.designs import open_design

        closing = ExitStack()
        try:
            bound = closing.enter_context(open_design(design, store=store, embedder=embedder, read_only=True))
            return cls(path, embedder, weights=Weights(), design=bound, recall_tokens=recall_tokens,
                       closing=closing, readonly=True)
        except BaseException:
            closing.close()
            raise

    # -- writes ---------------------------------------------------------------------------------

    def write(self, item: NewMemory) -> int:
        memory_id = super().write(item)
        self._queued.setdefault(item.owner, []).append(entry_of(memory_id, item.text, item.created_at, item.kind))
        return memory_id

    def commit_design(self, owner: str | None = None) -> None:
        """Write what is queued for ``owner`` (for every owner if None) through the design's write path."""
        owners = [owner] if owner is not None else list(self._queued)
        for o in owners:
            entries = self._queued.pop(o, None)
            if entries:
                self.design.write(o, entries)

    def settle_design(self) -> None:
        """What is queued written, and the design store left as a process resuming from a copy of it goes on
        (:meth:`~memstream.designs.store.BoundDesign.settle`): before a checkpoint copies it."""
        self.commit_design()
        self.design.settle()

    def consolidate_design(self, owner: str, now: datetime) -> int:
        """The design's own upkeep for ``owner`` (a summary, sleep-time work, compaction): records it wrote."""
        self.commit_design(owner)
        wrote = self.design.consolidate(owner, now)
        self.consolidations += 1
        self.consolidated += wrote
        return wrote

    def close(self) -> None:
        try:
            self.commit_design()
        finally:
            try:
                super().close()
            finally:
                self._closing.close()

    # -- recalls --------------------------------------------------------------------------------

    def retrieve_many(self, requests: Sequence[tuple[str, str]], *, now: datetime, k: int = 10,
                      weights: Weights | None = None, touch: bool = True) -> list[list[Recall]]:
        """Each ``(owner, query)`` as the design's context under ``k`` memories' budget, read back as memories
        (``weights`` and ``touch`` are the stream's; a design ranks and keeps its own way)."""
        return [self._recall(owner, query, now, k) for owner, query in requests]

    def recent(self, owner: str, n: int) -> list[Memory]:
        """What the design shows of ``owner``'s latest, under ``n`` memories' budget, oldest first."""
        if n <= 0 or not self.has(owner):
            return []
        now = self.latest_time(owner)
        found = [r.memory for r in self._recall(owner, RECENT_QUERY.format(owner=owner), now, n)]
        return sorted(found, key=lambda m: (m.created_at, m.id))

    def _recall(self, owner: str, query: str, now: datetime, k: int) -> list[Recall]:
        if k <= 0 or not self.has(owner):
            return []
        self.commit_design(owner)
        budget = max(1, k * self.recall_tokens)
        # Read-only (a measure's, an interview's memory: a store that does not change) on a design whose context
        # does not depend on the query, an owner's context at (now, budget) is assembled once and given again
        # for every other query (the network measure asks n(n-1) of them an hour): the same recalls as asking.
        reuse = self._readonly and not self.design.design.reads_query
        held = self._blind.get(owner) if reuse else None
        if held is not None and held[0] == (now, budget):
            recalls, tokens = held[1], held[2]
        else:
            context = self.design.context(owner, query, now, budget)
            recalls = [_as_recall(m, rank) for rank, m in enumerate(self._read_back(owner, context, now))]
            tokens = context.tokens
            if reuse:
                self._blind[owner] = ((now, budget), recalls, tokens)
        self.contexts += 1
        self.context_tokens += tokens
        return list(recalls)

    def _read_back(self, owner: str, context: Context, now: datetime) -> list[Memory]:
        """The context's lines as memories: the agent's own where a line is one, a derived one where not."""
        index = self._lines_index(owner)
        found: dict[int | str, Memory] = {}
        for block in context.blocks:
            lines, stamp, i = block.text.split("\n"), "", 0
            source = self._newest_source(owner, block.ids)
            while i < len(lines):
                line = lines[i]
                if _STAMP.fullmatch(line):
                    stamp, i = line, i + 1
                    continue
                mine = _matching(index.get(line, ()), lines, i, stamp, now)
                if mine is not None:
                    found.setdefault(mine.id, mine)
                    i += mine.text.count("\n") + 1
                    continue
                if line.strip() and not _HEADING.fullmatch(line) and source:
                    at = _stamp_time(stamp, now)
                    found.setdefault(f"{block.tier}:{line}", Memory(
                        id=source, owner=owner, kind=THOUGHT, text=line, created_at=at, last_accessed_at=at,
                        importance=1, cites=()))
                i += 1
        return list(found.values())

    def _lines_index(self, owner: str) -> dict[str, list[Memory]]:
        """``owner``'s memories by their first line (oldest first), brought up to date."""
        index = self._by_first_line.setdefault(owner, {})
        indexed = self._indexed.get(owner, 0)  # how many of the owner's memories are in the index
        if self.last_id(owner) > self._indexed_id.get(owner, 0):
            self.flush()  # what waits in the buffer, written (its ids are the stream's from here)
        new = self.count(owner) - indexed
        if new > 0:
            for m in MemoryStream.recent(self, owner, new):  # the stream's newest, not the design's recall
                index.setdefault(m.text.split("\n", 1)[0], []).append(m)
            self._indexed[owner] = indexed + new
            self._indexed_id[owner] = self.last_id(owner)
        return index

    def _newest_source(self, owner: str, record_ids: tuple[int, ...]) -> int:
        """The newest of the agent's memories a block derives from (its design record ids mapped back);
        the agent's newest memory if the block names none (a design's own notes)."""
        known = self._ledger_ids.setdefault(owner, {})
        if any(r not in known for r in record_ids):
            for record, key in self.design.held.entry_keys(owner).items():
                if key.startswith("id:m") and key[4:].isdigit():
                    known[record] = int(key[4:])
        mapped = [known[r] for r in record_ids if r in known]
        return max(mapped) if mapped else self.last_id(owner)


def bedtime_in(sleep: str, now: datetime, step_s: float) -> bool:
    """Whether the bedtime ``sleep`` ("HH:MM") falls in the step that ended at ``now``: a design's natural point
    for its own upkeep (a summary folded, sleep-time work, a profile compacted), as reflection is the stream's."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return any(now - timedelta(seconds=step_s) < at <= now
               for at in (day + timedelta(minutes=minute_of_day(sleep)) + timedelta(days=d) for d in (-1, 0)))


def entry_of(memory_id: int, text: str, at: datetime, kind: str) -> Entry:
    """The entry a design is given for the town's memory ``memory_id``: its text and time, its kind as the source,
    its id as the entry's (written again, it is stored once)."""
    return Entry(text=text, at=at, source=kind, kind="observation", id=_ENTRY_ID.format(id=memory_id))


def seed_design(stream: Path, through_id: int, design: str, store: Path, settings: Mapping[str, Any],
                chat: ChatModel | None, embedder: Embedder | None) -> int:
    """A new design store at ``store`` given every agent's memories in the stream file ``stream`` up to
    ``through_id``, each agent's in one write, in the order they were written (a fork into another design: the
    same morning, another memory). How many entries were written."""
    from memstream.designs import open_design

    written = 0
    ledger = MemoryStream(stream, create=False, readonly=True)
    try:
        with open_design(design, store=store, embedder=embedder, chat=chat, **dict(settings)) as bound:
            for owner in ledger.owners():
                entries = [entry_of(m.id, m.text, m.created_at, m.kind) for m in ledger.memories(owner)
                           if m.id <= through_id]
                if entries:
                    bound.write(owner, entries)
                    written += len(entries)
    finally:
        ledger.close()
    return written


def _matching(candidates: Sequence[Memory], lines: list[str], at: int, stamp: str, now: datetime) -> Memory | None:
    """The newest of ``candidates`` (written by ``now``) whose whole text is ``lines`` from ``at``, one written
    at ``stamp`` first."""
    fitting = [m for m in candidates if m.created_at <= now
               and lines[at:at + m.text.count("\n") + 1] == m.text.split("\n")]
    stamped = [m for m in fitting if stamp and f"[{m.created_at:%d %B %Y %H:%M}]" == stamp]
    best = stamped or fitting
    return best[-1] if best else None


def _stamp_time(stamp: str, now: datetime) -> datetime:
    found = _STAMP.fullmatch(stamp)
    if not found:
        return now
    return datetime.strptime(found.group(1), "%d %B %Y %H:%M").replace(tzinfo=now.tzinfo)


def _as_recall(memory: Memory, rank: int) -> Recall:
    """A memory as the town's stages take a recall: in the design's order, with no stream scores."""
    return Recall(memory, rank, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, Weights())
