"""The memory-design interface: what every design does for each owner it remembers for.

- :meth:`MemoryDesign.write_stage` takes entries (turns, observations, tool results) in the
  order they happened and returns their record ids; a design that needs the model to write
  (the stream rates importance) asks through requests.
- :meth:`MemoryDesign.context` assembles what the model will see for a query at a time under a
  token budget: labelled blocks with their provenance (:class:`~memstream.designs.context.Context`).
  It never asks the model: assembly is on the answer's path.
- :meth:`MemoryDesign.consolidate_stage` is the background work (summaries, reflection), called
  where the design's user chooses (a session boundary is the natural point).
- :meth:`get_state` / :meth:`set_state` hold everything the design knows as a typed record, per
  owner (the design's ``State``, a :class:`~memstream.designs.state.DesignState`);
  :mod:`memstream.designs.persist` keeps it in a file that names the design that wrote it.
- :meth:`counters` (optional) is what the design counts of its own upkeep, for reports: a design
  that compacts its memory or may drop an edit says how often (``COMPACTIONS``, ``DROPPED_EDITS``);
  one that does neither returns nothing, and a report shows "-" rather than a zero it never counted.

Every model call is a request stage (``memstream.models.Request``), so a batched runner can
answer many owners' questions at once, through the call cache, with retries counted by purpose.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue

from memstream.designs.context import Context
from memstream.designs.entries import Entry, Record
from memstream.designs.ids import IdSource
from memstream.designs.state import DesignState
from memstream.errors import MemstreamError
from memstream.models import ChatModel, Embedder, Stage, run_direct
from memstream.trust import Checker

#: The counter names reports read from :meth:`MemoryDesign.counters` (a design may count more).
#: Compactions: times the design rewrote its memory smaller (a recursive summary absorbing evicted
#: turns, a profile file compacted). Dropped edits: changes to memory refused or lost (a compaction
#: short of its target, an edit whose anchor did not match, a write over a limit).
COMPACTIONS = "compactions"
DROPPED_EDITS = "dropped_edits"


@dataclass
class OwnerRows:
    """One owner's memory as a design store keeps it.

    ``records``: the owner's records in the order written (a store appends those it does not hold yet; a
    record changes only through :meth:`MemoryDesign.change_record`, in a design that
    :attr:`~MemoryDesign.changes_records`). ``extras``: what the design keeps beside a record (a rating, the
    turns an archival passage came from), by record id, written with the record. ``docs``: small documents by
    name (a summary, an agent's queue), rewritten when they change, so each must stay small as memory grows.
    ``logs``: append-only lists by name (profile versions), of which a store appends what is new."""

    records: Sequence[Record] = ()
    extras: Mapping[int, JsonValue] = field(default_factory=dict)
    docs: dict[str, JsonValue] = field(default_factory=dict)
    logs: Mapping[str, Sequence[JsonValue]] = field(default_factory=dict)


class OwnFile(Protocol):
    """A design's memory in a file of its own kind, kept beside a design store (what
    :meth:`MemoryDesign.attach_file` gives): what the store needs to write, list, export and forget an owner.

    ``key`` is the owner as the file names it (:meth:`owner_key`: the scope may be part of it); the design's
    own calls (write, context) take that key as their owner. A write runs the design's stage, which may hold
    what it wrote in memory (a write buffer); :meth:`commit` writes it, or returns False, writing nothing, if
    another process wrote under it or already stored one of the entries (then :meth:`discard` it and retry).
    A file that commits each entry as the stage writes it (``commits_as_written``) keeps the entries before a
    failure, each whole: a write refused midway says so, and written again stores the rest once."""

    path: str
    commits_as_written: bool

    @property
    def db(self) -> sqlite3.Connection:
        """The file's connection (what a write goes through: a full disk is this file's)."""
        ...

    def owner_key(self, owner: str) -> str: ...

    def damage(self, key: str) -> list[str]:
        """Why the owner's rows cannot be read as written (a line each; none if they are sound)."""
        ...

    def owners(self) -> list[str]: ...

    def records(self, key: str, owner: str) -> list[Record]: ...

    def entry_keys(self, key: str) -> dict[int, str]: ...

    def known(self, key: str, keys: Sequence[str]) -> dict[str, int]: ...

    def commit(self, key: str, keys: Sequence[str]) -> bool: ...

    def discard(self) -> None: ...

    def texts(self, key: str) -> list[str]: ...

    def forget(self, key: str) -> int: ...

    def close(self) -> None: ...


class DesignConfig(BaseModel):
    """A design's settings (each design extends this); kept in its state file."""

    model_config = ConfigDict(extra="forbid", frozen=True)


#: A design's state type (its ``State``).
S = TypeVar("S", bound=DesignState)


class MemoryDesign(ABC, Generic[S]):
    """One way of remembering for an LLM agent, behind the interface every design shares."""

    name: ClassVar[str]
    Config: ClassVar[type[DesignConfig]] = DesignConfig
    #: The type of what :meth:`get_state` returns (what its state file holds, validated on load).
    State: ClassVar[type[DesignState]]
    #: Whether ``all`` names it (``eval --design all``): every design but a floor (``recent``), a lower bound
    #: to measure others against rather than a way of remembering, measured when named.
    in_all: ClassVar[bool] = True
    #: Whether :meth:`context` depends on its query. False: a design that gives an owner the same context for
    #: every query (its newest records, a summary, a profile file), so a reader asking many queries of a store
    #: that does not change may assemble it once per (owner, time, budget) (the town's measures do:
    #: :class:`memstream.sim.memory.DesignMemory`); ``tests/designs/test_reads_query.py`` holds each to it.
    reads_query: ClassVar[bool] = True

    @classmethod
    def made(cls, config: DesignConfig, embedder: Embedder | None = None) -> MemoryDesign[Any]:
        """The design with ``config`` (its ``Config``) and, for a design that ranks by relevance,
        ``embedder`` (such a design takes it by overriding this; the others ignore it)."""
        return cls(config)

    def __init__(self, config: DesignConfig | None = None) -> None:
        self.config = config or self.Config()
        #: The write gate and critic in front of this design (off unless its user sets one).
        self.checker: Checker = Checker.off()

    def remember_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int | None]]:
        """The one way entries come in: each passes the write gate (:attr:`checker`) first; the
        allowed ones are written by :meth:`write_stage`. A record id per entry, None for one kept out
        (blocked, or unchecked because the gate could not run: both in the checker's audit)."""
        verdicts = yield from self.checker.gate_stage(
            owner, [e.text for e in entries], what=f"{self.name} entry",
            sources=[f"{e.kind} from {e.source}" for e in entries], at=[e.at.isoformat() for e in entries])
        allowed = [e for e, v in zip(entries, verdicts, strict=True) if v.allowed]
        written = iter((yield from self.write_stage(owner, allowed)) if allowed else [])
        return [next(written) if v.allowed else None for v in verdicts]

    @abstractmethod
    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        """Remember ``entries`` (in the order they happened); their record ids."""

    @abstractmethod
    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        """What the model sees for ``query`` at ``now``, in at most ``budget_tokens`` tokens."""

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        """Background work for ``owner`` at ``now``; the number of records or summaries it wrote."""
        return 0
        yield  # a generator, even for a design with nothing to consolidate

    def counters(self) -> dict[str, int]:
        """What the design has counted of its own upkeep since it was made (or its state was set), by
        name (``COMPACTIONS``, ``DROPPED_EDITS``, or the design's own); empty for one that counts nothing."""
        return {}

    # -- kept in a store, owner by owner (memstream.designs.store) --------------------------------

    def owner_rows(self, owner: str) -> OwnerRows:
        """What this design keeps of ``owner``, as a store's rows (:class:`OwnerRows`); the store writes
        only what is new or changed since it last wrote. An owner the design holds nothing of: empty rows."""
        raise MemstreamError(f"the {self.name} design cannot be kept in a design store")

    def load_owner(self, owner: str, rows: OwnerRows) -> None:
        """Hold ``owner``'s memory as ``rows`` say (what :meth:`owner_rows` gave, read back); the design holds
        nothing of ``owner`` before (:meth:`drop_owner`)."""
        raise MemstreamError(f"the {self.name} design cannot be kept in a design store")

    def drop_owner(self, owner: str) -> None:
        """Forget ``owner`` in memory: every record, summary, block, index entry and cached line of it."""
        raise MemstreamError(f"the {self.name} design cannot be kept in a design store")

    def shared_rows(self) -> dict[str, JsonValue]:
        """What the design keeps across owners (blocks attached to several owners), each small document by
        name; the store writes a document when it changes."""
        return {}

    def load_shared(self, rows: Mapping[str, JsonValue]) -> None:
        """Hold the documents :meth:`shared_rows` gave, read back."""

    def use_ids(self, ids: IdSource) -> None:
        """Take record ids from ``ids`` (a store hands out ids no other process takes) from now on."""

    # -- kept in a file of its own kind, beside a store -------------------------------------------

    #: Whether the design keeps its memory in a file of its own kind (its own tables, marked in its own
    #: ``meta``), beside the design store, rather than as the store's rows: :meth:`attach_file` opens it.
    keeps_own_file: ClassVar[bool] = False
    #: Settings a design store sets for such a design (its file, its tenant): a user's are refused there.
    store_settings: ClassVar[frozenset[str]] = frozenset()

    # -- one record changed alone (update, delete) -------------------------------------------------

    #: Whether one record of an owner may be updated or deleted alone: True for a design whose memory *is* its
    #: records (``full``, ``vector``, ``recent``), so changing a record changes all the memory holds of it. A
    #: design whose memory is built from its records (a summary, reflections, blocks, a profile) keeps them as
    #: they are: what it built from a record would still hold the record's text. :attr:`records_stay` says why.
    changes_records: ClassVar[bool] = False
    #: Why one record cannot be changed alone (ends the one-line refusal; the fix, forgetting the owner, follows).
    records_stay: ClassVar[str] = "its memory is built from the records, and what it built would still hold the text"

    def change_record(self, owner: str, record_id: int, text: str | None) -> None:
        """Hold ``owner``'s record ``record_id`` with ``text`` from now on (None: hold it no more), in memory
        and in every index built over it, the record keeping its id and time: what a store calls once the
        change is committed (:meth:`~memstream.designs.store.BoundDesign.update`). Only a design that
        :attr:`changes_records` implements it; the store never calls it on another."""
        raise MemstreamError(refused_change(self, "update" if text is not None else "delete"))

    def attach_file(self, path: str, scope: str, *, read_only: bool = False) -> OwnFile:
        """Keep this design's memory in the file at ``path`` (made if missing, unless ``read_only``: then a
        missing file is an empty memory) for owners in ``scope`` from now on; what a store uses to write, list
        and forget owners there."""
        raise MemstreamError(f"the {self.name} design keeps no file of its own")

    @classmethod
    def check_own_file(cls, path: str) -> list[str]:
        """Every problem of this design's own file at ``path``, reading only (none for a design without one)."""
        return []

    @abstractmethod
    def get_state(self) -> S:
        """Everything the design knows, per owner."""

    @abstractmethod
    def set_state(self, state: S) -> None:
        """Load :meth:`get_state` output into this (fresh) design."""

    # -- answered at once, for library calls and notebooks -----------------------------------

    def write(self, owner: str, entries: Sequence[Entry], *, chat: ChatModel | None = None) -> list[int | None]:
        return _drive(self.remember_stage(owner, entries), chat, self.name, "write")

    def consolidate(self, owner: str, now: datetime, *, chat: ChatModel | None = None) -> int:
        return _drive(self.consolidate_stage(owner, now), chat, self.name, "consolidate")


def _drive(stage: Stage[Any], chat: ChatModel | None, design: str, what: str) -> Any:
    """``stage`` answered by ``chat``; with no chat model, a stage that asks one fails with one line."""
    if chat is not None:
        return run_direct(stage, chat)
    try:
        asked = next(stage)
    except StopIteration as done:
        return done.value
    purpose = (asked[0] if isinstance(asked, list) else asked).purpose
    stage.close()
    raise MemstreamError(f"the {design} design asks a chat model to {what} ({purpose}); pass chat=...")


def refused_change(design: MemoryDesign | type[MemoryDesign], what: str) -> str:
    """The one line refusing to ``what`` (update, delete) one record of a design that keeps its records."""
    return (f"the {design.name} design cannot {what} one record alone: {design.records_stay}; forget the owner "
            "to erase every trace of it, then add again what should stay")


C = TypeVar("C", bound=DesignConfig)


def own_config(config: DesignConfig, kind: type[C]) -> C:
    """``config`` as the settings of the design that takes ``kind`` (one line if they are another's)."""
    if not isinstance(config, kind):
        raise MemstreamError(f"{type(config).__name__} are not the settings this design takes ({kind.__name__})")
    return config


def check_budget(budget_tokens: int) -> int:
    if not isinstance(budget_tokens, int) or budget_tokens <= 0:
        raise MemstreamError(f"a context budget must be a positive number of tokens, got {budget_tokens!r}")
    return budget_tokens
