"""``letta``: core memory blocks the agent edits with tools, a FIFO queue with a recursive summary, and
recall and archival storage it searches (MemGPT, Packer et al. 2023; Letta's documented behaviour).

Writing is the agent's work: each entry joins the FIFO queue and the agent takes a chain of steps
(:mod:`.agent`), each one tool call (:mod:`.tools`) whose result it reads next; it keeps what matters in
its core memory blocks (:mod:`.blocks`) or archival storage. The queue's pressure is watched before
every step (:mod:`.queue`): a warning at 70% of the agent model's window, eviction of about half of it
into the recursive summary at 100%; evicted turns stay in recall storage. ``consolidate_stage`` is
Letta's sleep-time agent: between sessions, off the answer path, it reorganises the blocks from the
recent turns.

``context`` never asks a model: it compiles what the agent's main context holds (core blocks, the
summary, the queue's turns) and adds a search of archival and recall storage by the query, which
stands in for the search tool call the agent itself would make at answer time (one more model call
the answer-level eval does not make). Its tiers: core (up to ``core_share`` of the budget), summary,
window (the queue's turns, newest first) and retrieved (the rest).

:meth:`LettaDesign.counters` says what the agent did, per owner or in total: steps, tool calls, tool
errors by kind (``error:KIND``), heartbeats, chain limits reached, warnings, evictions, evicted
messages, summaries, block edits, archival inserts, and the sleep-time agent's own (``sleeptime_*``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, cast

from pydantic import Field, JsonValue

from memstream.designs.base import COMPACTIONS, DROPPED_EDITS, DesignConfig, MemoryDesign, OwnerRows, check_budget
from memstream.designs.context import Context, Fit, Line, fit_best, fit_newest
from memstream.designs.entries import Entry, Record
from memstream.designs.ids import Counter as IdCounter
from memstream.designs.ids import IdSource
from memstream.designs.index import RecordIndex
from memstream.designs.letta import prompts
from memstream.designs.letta.agent import chain_stage
from memstream.designs.letta.blocks import DEFAULT_LIMIT, BlockStore, MemoryBlock, compile_block
from memstream.designs.letta.memory import (
    AgentTranscript,
    OwnerState,
    SleeptimeTranscript,
    View,
    ranked,
    search_scores,
    transcript_lines,
)
from memstream.designs.letta.queue import Queue, QueueMessage
from memstream.designs.letta.state import LettaOwner, LettaState, SavedAgent, SavedBlock
from memstream.designs.letta.tools import AGENT_TOOLS, EDIT_ERRORS, SLEEPTIME_TOOLS
from memstream.designs.log import RecordLog
from memstream.designs.state import records_of
from memstream.designs.summary import runs, summary_doc, summary_of, unruns
from memstream.designs.tiers import Tier, assemble, fill_tiers, shown_ids
from memstream.errors import MemstreamError
from memstream.models import Stage, count_tokens
from memstream.stream import normalise_owner

#: Letta's default blocks (their descriptions are Letta's, the human's widened to people overheard).
PERSONA = ("The persona block: stores details about your current persona, guiding how you behave and respond.",
           "I am a helpful assistant with a long memory. I keep what people tell me about themselves.")
HUMAN = ("The human block: stores key details about the people you are conversing with or listening to, "
         "allowing for more personalized conversation.", "")


class LettaConfig(DesignConfig):
    """The ``letta`` design's settings: the agent's context window, the queue's warning and eviction, its tiers'
    shares.
    """

    window_tokens: int = Field(default=8192, gt=0, description="the agent model's context window")
    warn_at: float = Field(default=0.7, gt=0, lt=1, description="share of the window that brings the warning")
    evict_share: float = Field(default=0.5, gt=0, lt=1, description="share of the queue evicted at the window")
    heartbeat_limit: int = Field(default=5, gt=0, description="steps chained for one message, at most")
    block_limit: int = Field(default=DEFAULT_LIMIT, ge=len(PERSONA[1]), description="characters of each default block")
    page_size: int = Field(default=5, gt=0, description="search results per page")
    summary_batch: int = Field(default=20, gt=0, description="evicted turns summarised per request")
    summary_words: int = Field(default=150, gt=0)
    listen: bool = Field(default=True, description="the agent overhears others (replies are counted, not kept)")
    sleeptime: bool = Field(default=True, description="consolidate with the sleep-time agent")
    sleeptime_turns: int = Field(default=40, gt=0, description="recent turns the sleep-time agent reads")
    core_share: float = Field(default=0.35, ge=0, le=1)
    summary_share: float = Field(default=0.1, ge=0, le=1)
    window_share: float = Field(default=0.2, ge=0, le=1)


class LettaDesign(MemoryDesign[LettaState]):
    """MemGPT/Letta memory: core blocks the agent edits with tools, a message queue, recall and archival search."""

    name = "letta"
    records_stay = ("the agent's memory blocks and archival passages are written from the records "
                    "and would still hold the text")
    Config = LettaConfig
    State = LettaState
    config: LettaConfig

    def __init__(self, config: LettaConfig | None = None) -> None:
        super().__init__(config)
        self.store = BlockStore()
        self.log = RecordLog()
        self.owners: dict[str, OwnerState] = {}
        self.indexes: dict[str, RecordIndex] = {}   # recall storage: the turns
        self.archives: dict[str, RecordIndex] = {}  # archival storage: the agent's passages
        self.archival: dict[int, list[int]] = {}  # passage id -> the turns it was written from
        self.by_id: dict[int, Record] = {}
        self.turns: dict[str, list[Record]] = {}  # each owner's records but its archival passages, in order
        #: The blocks attached to several owners (a store keeps them apart from any one owner's memory).
        self.shared: set[int] = set()

    # -- owners, blocks, records ---------------------------------------------------------------

    def owner_state(self, owner: str) -> OwnerState:
        """The owner's state, with Letta's default blocks attached the first time the owner is seen."""
        owner = normalise_owner(owner)
        if owner not in self.owners:
            self.owners[owner] = OwnerState()
            for label, (description, value) in (("persona", PERSONA), ("human", HUMAN)):
                if self.store.get(owner, label) is None:
                    self.store.attach(owner, self.store.create(label, value, description=description,
                                                               limit=self.config.block_limit))
        return self.owners[owner]

    def share_block(self, label: str, owners: Sequence[str], value: str = "", *, description: str = "",
                    limit: int = DEFAULT_LIMIT, read_only: bool = False) -> MemoryBlock:
        """One block attached to every owner in ``owners``: an edit by one is seen by all at once."""
        names = [normalise_owner(o) for o in owners]
        for owner in names:
            self.owner_state(owner)  # its default blocks first
            if self.store.get(owner, label) is not None:
                raise MemstreamError(f"{owner!r} already has a block labelled {label!r}; choose another label")
        made = self.store.create(label, value, description=description, limit=limit, read_only=read_only)
        if len(set(names)) > 1:
            self.shared.add(made.id)
        for owner in names:
            self.store.attach(owner, made)
        return made

    def blocks_of(self, owner: str) -> list[MemoryBlock]:
        self.owner_state(owner)
        return self.store.of(normalise_owner(owner))

    def add_records(self, owner: str, entries: Sequence[Entry], *, archival: bool = False) -> list[Record]:
        """Entries kept in the log (one id space) and indexed in recall storage, or in archival storage."""
        records = self.log.append(owner, entries)
        self.by_id.update((r.id, r) for r in records)
        self._index(owner, archival).add(records)
        if not archival:
            self.turns.setdefault(normalise_owner(owner), []).extend(records)
        return records

    def _index(self, owner: str, archival: bool) -> RecordIndex:
        return (self.archives if archival else self.indexes).setdefault(normalise_owner(owner), RecordIndex(None))

    def turns_in(self, messages: Sequence[QueueMessage]) -> list[Record]:
        """The conversation turns (not archival passages) the messages carry."""
        return [self.by_id[i] for m in messages for i in m.ids if i in self.by_id and i not in self.archival]

    def counts_stored(self, owner: str) -> tuple[int, int]:
        """The owner's conversation turns and archival passages, counted (at every step: without a scan)."""
        archive = self.archives.get(normalise_owner(owner))
        archival = len(archive) if archive is not None else 0
        return len(self.log.records(owner)) - archival, archival

    def search(self, owner: str, query: str, *, archival: bool, now: datetime | None = None) -> list[Record]:
        """The owner's archival passages (or conversation turns) that share a word with ``query``, best first."""
        index = (self.archives if archival else self.indexes).get(normalise_owner(owner))
        if index is None or not len(index) or not query.strip():
            return []
        scores = search_scores(index, query, now or index.records[-1].at)
        return [index.records[i] for i in ranked(scores, scores > 0)]

    def counters(self, owner: str | None = None) -> dict[str, int]:
        """What the agent did (one owner's, or all owners' summed): see the module's docstring for the keys."""
        total: Counter[str] = Counter()
        for name, state in self.owners.items():
            if owner is None or name == normalise_owner(owner):
                total.update(state.counts)
        if not total:
            return {}
        # the names every design reports by (designs.base): an eviction compacts the queue into the
        # recursive summary; an edit the model tried that failed (its string absent, a block's limit, a
        # read-only or missing block) is an edit dropped
        total[COMPACTIONS] = total["evictions"]
        total[DROPPED_EDITS] = sum(total[f"{p}error:{kind}"] for p in ("", "sleeptime_") for kind in EDIT_ERRORS)
        return dict(total)

    # -- the interface -------------------------------------------------------------------------

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        owner = normalise_owner(owner)
        state = self.owner_state(owner)
        records = []
        for one in entries:  # one at a time: the agent's recall storage holds only what it has been given
            record = self.add_records(owner, [one])[0]
            records.append(record)
            state.queue.add("user", record.line, (record.id,))
            view = View(self, owner, record.at, (record.id,))
            yield from chain_stage(prompts.STEP_PURPOSE, AgentTranscript(view), view, AGENT_TOOLS,
                                   self.config.heartbeat_limit, state.counts)
        return [r.id for r in records]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        """The sleep-time agent's pass over the turns since its last one; the block edits and archival
        inserts it made."""
        owner = normalise_owner(owner)
        state = self.owner_state(owner)
        for index in (self.indexes.get(owner), self.archives.get(owner)):
            if index is not None:
                index.prepare()
        recent = [r for r in self.log.records(owner) if r.id > state.slept_through and r.id not in self.archival]
        if not self.config.sleeptime or not recent:
            return 0
        recent = recent[-self.config.sleeptime_turns:]
        before = state.counts["block_edits"] + state.counts["archival_inserts"]
        view = View(self, owner, now, tuple(r.id for r in recent))
        state.counts["sleeptime_runs"] += 1
        yield from chain_stage(prompts.SLEEPTIME_PURPOSE, SleeptimeTranscript(view, transcript_lines(recent)), view,
                               SLEEPTIME_TOOLS, self.config.heartbeat_limit, state.counts, "sleeptime_")
        state.slept_through = recent[-1].id
        for index in (self.indexes.get(owner), self.archives.get(owner)):
            if index is not None:
                index.prepare()
        return state.counts["block_edits"] + state.counts["archival_inserts"] - before

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        owner = normalise_owner(owner)
        state = self.owners.get(owner)
        if state is None:  # nothing written for this owner: nothing to show (and nothing made by a read)
            return Context([], budget_tokens)
        c = self.config
        window = self._window(owner, state)
        fits = fill_tiers([
            Tier("core", lambda room, _: fit_core(self.store.of(owner), room), c.core_share),
            Tier("summary", lambda room, _: fit_newest(state.summary.lines(), room), c.summary_share),
            Tier("window", lambda room, _: fit_newest(window, room), c.window_share),
            Tier("retrieved", lambda room, fits: self._retrieve(owner, query, now, room, shown_ids(fits, "window")))],
            budget_tokens)
        return assemble(fits, ("core", "summary", "retrieved", "window"), budget_tokens, in_time={"retrieved"})

    def _window(self, owner: str, state: OwnerState) -> list[Line]:
        """The queue's conversation turns as context lines, in order."""
        lines = {x.ids[0]: x for x in self.log.lines_of(owner)}
        return [lines[i] for m in state.queue.messages for i in m.ids if i in lines and i not in self.archival]

    def _retrieve(self, owner: str, query: str, now: datetime, room: int, shown: set[int]) -> Fit:
        """Archival passages and recall turns by the query (a stand-in for the agent's own search at answer time)."""
        if room <= 0:
            return Fit([])
        lines = {x.ids[0]: x for x in self.log.lines_of(owner)}
        scored: list[tuple[float, int]] = []  # both stores' BM25 scores, merged (a stand-in's ranking)
        for index in (self.indexes.get(owner), self.archives.get(owner)):
            if index is not None and len(index):
                scores = search_scores(index, query, now)
                scored.extend((float(x), r.id) for x, r in zip(scores, index.records, strict=True) if r.id not in shown)
        scored.sort(key=lambda pair: (-pair[0], -pair[1]))  # best first; ties to the newer
        return fit_best((self._line(lines[i]) for _, i in scored), room)

    def _line(self, line: Line) -> Line:
        """An archival passage's line cites the turns it was written from (its provenance)."""
        cites = self.archival.get(line.ids[0])
        return line if cites is None else replace(line, ids=(line.ids[0], *cites))

    # -- state ---------------------------------------------------------------------------------

    def get_state(self) -> LettaState:
        records = self.log.saved()
        owners = {}
        for o in dict.fromkeys([*self.owners, *records, *self.store.attached]):
            mine = records[o].records if o in records else []
            agent = self.owners.get(o)
            owners[o] = LettaOwner(records=mine, passages={r.id: self.archival[r.id] for r in mine
                                                           if r.id in self.archival},
                                   blocks=list(self.store.attached.get(o, [])),
                                   agent=SavedAgent.of(agent) if agent is not None else None)
        return LettaState(next_id=self.log.next_id, next_block=self.store.next_id,
                          blocks=[SavedBlock.of(self.store.blocks[i]) for i in sorted(self.store.blocks)],
                          owners=owners)

    def set_state(self, state: LettaState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
        self.store = BlockStore()
        self.store.blocks = {b.id: b.block() for b in state.blocks}
        self.store.attached = {o: list(saved.blocks) for o, saved in state.owners.items() if saved.blocks}
        self.store.ids = IdCounter(state.next_block)
        self.shared = {i for i, n in Counter(i for ids in self.store.attached.values() for i in set(ids)).items()
                       if n > 1}
        self.by_id = self.log.by_id()
        self.owners = {o: saved.agent.owner_state(self.by_id) for o, saved in state.owners.items()
                       if saved.agent is not None}
        self.archival = {i: list(cites) for saved in state.owners.values() for i, cites in saved.passages.items()}
        self.indexes, self.archives, self.turns = {}, {}, {}
        for owner, records in self.log.by_owner.items():
            self._hold_records(owner, records)

    def _hold_records(self, owner: str, records: Sequence[Record]) -> None:
        """The owner's recall and archival indexes and turns made from ``records`` (its log)."""
        turns = [r for r in records if r.id not in self.archival]
        self.turns[owner] = turns
        self.by_id.update((r.id, r) for r in records)
        self._index(owner, False).add(turns)
        passages = [r for r in records if r.id in self.archival]
        if passages:
            self._index(owner, True).add(passages)

    # -- kept in a store (the rows of each owner; the blocks attached to several owners shared) -----

    def owner_rows(self, owner: str) -> OwnerRows:
        """Records; beside each archival passage, the turns it was written from; documents: the agent's state
        (its queue, bounded by the window; its summary, over the turns; its counts), the ids of the blocks
        attached, and each block attached to this owner alone (``block:ID``)."""
        docs: dict[str, JsonValue] = {}
        state = self.owners.get(owner)
        if state is not None:
            docs[AGENT] = agent_doc(state, self.turns.get(owner, []))
        attached = self.store.attached.get(owner, [])
        if attached:
            docs[BLOCKS] = list[JsonValue](attached)
            docs.update((f"{BLOCK}{i}", block_doc(self.store.blocks[i])) for i in attached if i not in self.shared)
        return OwnerRows(self.log.records(owner), cast(Mapping[int, JsonValue], self.archival), docs)

    def load_owner(self, owner: str, rows: OwnerRows) -> None:
        self.log.hold(owner, rows.records)
        self.archival.update((i, [int(x) for x in cast(list[int], cites)]) for i, cites in rows.extras.items())
        records = self.log.records(owner)
        self._hold_records(owner, records)
        attached = [int(i) for i in cast(list[int], rows.docs.get(BLOCKS, []))]
        if attached:
            self.store.attached[owner] = attached
        for name, doc in rows.docs.items():
            if name.startswith(BLOCK):
                made = block_of(int(name[len(BLOCK):]), cast(dict[str, Any], doc))
                self.store.blocks[made.id] = made
        if AGENT in rows.docs:
            self.owners[owner] = agent_of(cast(dict[str, Any], rows.docs[AGENT]), self.turns[owner])

    def drop_owner(self, owner: str) -> None:
        for r in self.log.records(owner):
            self.archival.pop(r.id, None)
            self.by_id.pop(r.id, None)
        self.log.drop(owner)
        for held in (self.owners, self.indexes, self.archives, self.turns):
            held.pop(owner, None)
        for i in self.store.attached.pop(owner, []):
            if i not in self.shared:
                self.store.blocks.pop(i, None)

    def shared_rows(self) -> dict[str, JsonValue]:
        return {f"{BLOCK}{i}": block_doc(self.store.blocks[i]) for i in sorted(self.shared) if i in self.store.blocks}

    def load_shared(self, rows: Mapping[str, JsonValue]) -> None:
        for i in self.shared:
            self.store.blocks.pop(i, None)
        self.shared = set()
        for name, doc in rows.items():
            if name.startswith(BLOCK):
                made = block_of(int(name[len(BLOCK):]), cast(dict[str, Any], doc))
                self.store.blocks[made.id] = made
                self.shared.add(made.id)

    def use_ids(self, ids: IdSource) -> None:
        self.log.ids = ids
        self.store.ids = ids.sequence(BLOCK_IDS)


#: The names of an owner's documents: the agent's state, the blocks attached, each block of its own (by id).
AGENT, BLOCKS, BLOCK = "agent", "blocks", "block:"
#: The sequence block ids come from (beside the record ids).
BLOCK_IDS = "blocks"


def agent_doc(state: OwnerState, turns: Sequence[Record]) -> dict[str, JsonValue]:
    """What the agent keeps of an owner, as a small document: the queue (bounded by the agent's window), the
    summary over ``turns`` (as runs of positions), the counts (one per kind), and two marks."""
    return {"queue": [[m.role, m.text, list(m.ids), m.tokens] for m in state.queue.messages],
            "warned": state.queue.warned, "summary": summary_doc(state.summary, turns),
            "counts": dict(sorted(state.counts.items())), "evicted": state.evicted,
            "slept_through": state.slept_through}


def agent_of(doc: Mapping[str, Any], turns: Sequence[Record]) -> OwnerState:
    queue = Queue([QueueMessage(role, text, tuple(ids), tokens) for role, text, ids, tokens in doc["queue"]],
                  bool(doc["warned"]))
    return OwnerState(queue, summary_of(doc["summary"], turns), Counter(doc["counts"]), int(doc["evicted"]),
                      int(doc["slept_through"]))


def block_doc(block: MemoryBlock) -> dict[str, JsonValue]:
    """A block as a document (its cites as runs: the turns that edited it are mostly consecutive)."""
    return {"label": block.label, "value": block.value, "description": block.description, "limit": block.limit,
            "read_only": block.read_only, "cites": runs(block.cites)}


def block_of(i: int, doc: Mapping[str, Any]) -> MemoryBlock:
    return MemoryBlock(i, str(doc["label"]), str(doc["value"]), str(doc["description"]), int(doc["limit"]),
                       bool(doc["read_only"]), unruns(doc["cites"]))


def fit_core(blocks: Sequence[MemoryBlock], room: int) -> Fit:
    """The blocks, in order, each whole if it fits in what is left of ``room``, else with only the newest
    lines of its value that fit (the older ones counted as cut): a small budget shows every block's latest.
    (A token never spans a newline, so a block's tokens are its tags' plus its lines'.)"""
    fit = Fit([])
    left = room
    for position, b in enumerate(blocks):
        lines = b.value.split("\n") if b.value else []
        sizes = [count_tokens(x) for x in lines]
        tags = count_tokens(compile_block(b, ""))
        start, total = len(lines), tags
        while start > 0 and total + sizes[start - 1] <= left:
            start -= 1
            total += sizes[start]
        if total > left:
            start = len(lines)  # not even its tags fit: the whole block is cut
        else:
            text = compile_block(b, "\n".join(lines[start:]))
            fit.kept.append(Line(text, total, tuple(b.cites), float(position)))
            left -= total
        fit.cut += start
        fit.cut_tokens += sum(sizes[:start])
    return fit
