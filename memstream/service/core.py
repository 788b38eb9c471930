"""The memory service: every operation the HTTP API and the MCP tools offer, in one place, checked the same way.

:class:`MemoryService` opens a store (an SQLite file's path or a ``postgresql://`` URL) with one
:class:`~memstream.designs.BoundDesign` per served design and scope, and answers each call for a
:class:`~.tokens.Principal`: every call names its owner, and a principal that may not use the owner is told
exactly what it would be told of an owner with no memory (:class:`~.errors.NotFound`), so it learns nothing
of owners it may not use; a write for such an owner is :class:`~.errors.Forbidden`. Limits are those of
:mod:`.limits`. A write returns its ids only once committed (the bound design commits before it returns).

Concurrency: a bound design holds one connection and the memory it has read, and is used by one thread at a
time, so each (design, scope) has a lock its calls take (the HTTP layer answers from a thread pool). Calls
for different designs or scopes run side by side; on one design they take turns. A second server process
(or a second machine on PostgreSQL) is another writer the store itself keeps whole (:mod:`memstream.designs.store`).
Why not one bound design per thread: each would hold its own copy of every owner it has read (the records and
their embeddings) and read an owner again after another thread wrote it; measured in ``docs/service.md``.
"""

from __future__ import annotations

import builtins
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from memstream.designs import (
    DESIGNS,
    BoundDesign,
    Context,
    Entry,
    MemoryDesign,
    NoSuchRecord,
    Record,
    open_design,
    plain_scope,
    record_text,
    refused_change,
)
from memstream.errors import MemstreamError
from memstream.models import ChatModel, Embedder
from memstream.service.errors import BadRequest, Forbidden, NotAllowed, NotFound, ServiceError, TooLarge, Unavailable
from memstream.service.limits import (
    MAX_BUDGET,
    MAX_ENTRIES,
    MAX_PAGE_SIZE,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    MAX_SCOPES,
)
from memstream.service.tokens import LOCAL, Principal
from memstream.stream import normalise_owner

#: The design served when neither ``designs`` nor the store names one: it ranks records by relevance (so
#: ``search`` has scores), needs no chat model to write, and is kept in either back-end.
DEFAULT_DESIGN = "vector"


@runtime_checkable
class Ranks(Protocol):
    """A design that ranks an owner's records for a query, with a score per record."""

    def ranked(self, owner: str, query: str, limit: int) -> list[tuple[int, float]]: ...


@runtime_checkable
class KeepsVersions(Protocol):
    """A design that keeps every version of what it holds of an owner."""

    def versions(self, owner: str) -> list[Any]: ...


@dataclass(frozen=True)
class Hit:
    """A record ``search`` found, with its score (None where the design ranks without one)."""

    record: Record
    score: float | None


@dataclass(frozen=True)
class Page:
    """One page of an owner's records, oldest first: ``page`` counts from 1; ``total`` records in all."""

    records: list[Record]
    page: int
    size: int
    total: int


@dataclass(frozen=True)
class Health:
    ok: bool
    store: str
    designs: list[str]
    read_only: bool
    problem: str = ""


def storable(name: str) -> bool:
    """Whether the design ``name`` can be kept in a design store (it says how its memory is rows)."""
    return DESIGNS[name].owner_rows is not MemoryDesign.owner_rows


class _Served:
    """One design in one scope, bound to the store, and the lock its calls take."""

    def __init__(self, bound: BoundDesign) -> None:
        self.bound = bound
        self.lock = threading.Lock()


class MemoryService:
    """The designs ``designs`` (default: those the store holds, else :data:`DEFAULT_DESIGN`) on ``store``."""

    def __init__(self, store: str | Path, designs: Sequence[str] | None = None, *, chat: ChatModel | None = None,
                 embedder: Embedder | None = None, read_only: bool = False) -> None:
        self.store, self.chat, self.read_only = str(store), chat, read_only
        self._embedder = embedder
        self._stack = ExitStack()
        self._open: dict[tuple[str, str], _Served] = {}
        self._opening = threading.Lock()
        try:
            first = self._bind(designs[0] if designs else DEFAULT_DESIGN, "")
            held = list(first.bound.held.store.designs()) if not designs else []
            self.designs = list(dict.fromkeys(designs or [d for d in held if d in DESIGNS] or [DEFAULT_DESIGN]))
            for name in self.designs:
                self._bind(name, "")
        except BaseException:
            self._stack.close()
            raise
        self.default = self.designs[0]

    def _bind(self, design: str, scope: str) -> _Served:
        key = (design, scope)
        with self._opening:
            if key not in self._open:
                if design not in DESIGNS:
                    raise BadRequest(f"unknown design {design!r}; use one of {', '.join(DESIGNS)}")
                if not storable(design):
                    can = ", ".join(d for d in DESIGNS if storable(d))
                    raise BadRequest(f"the {design} design cannot be kept in a design store yet; serve one of {can}")
                if sum(d == design for d, _ in self._open) >= MAX_SCOPES:
                    raise TooLarge(f"this server holds at most {MAX_SCOPES} scopes of a design open")
                if self._embedder is None:
                    from memstream.models import make_embedder

                    self._embedder = make_embedder()
                with _store_errors():
                    bound = self._stack.enter_context(open_design(
                        design, store=self.store, scope=scope, embedder=self._embedder, chat=self.chat,
                        read_only=self.read_only))
                self._open[key] = _Served(bound)
            return self._open[key]

    def close(self) -> None:
        self._stack.close()
        self._open.clear()

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- resolving a call -------------------------------------------------------------------------

    def _served(self, design: str | None, scope: str) -> _Served:
        name = design or self.default
        if name not in self.designs:
            raise BadRequest(f"this server does not serve the {name!r} design; it serves {', '.join(self.designs)}")
        try:
            plain = plain_scope(scope)
        except MemstreamError as e:
            raise BadRequest(str(e)) from None
        return self._bind(name, plain)

    @contextmanager
    def _reading(self, principal: Principal, owner: str, design: str | None, scope: str) -> Iterator[
            tuple[BoundDesign, str]]:
        """The bound design, held, and the owner's name, for a call that reads (or removes) ``owner``'s memory:
        NotFound for an owner with none, and alike for one ``principal`` may not use."""
        name = owner_name(owner)
        served = self._served(design, scope)
        with served.lock, _store_errors():
            known = served.bound.knows(name)  # asked either way: a forbidden owner takes as long as an unknown one
            if not known or not principal.may(name):
                raise NotFound(f"no memory for the owner {name!r}" + (f" in scope {scope!r}" if scope else ""))
            yield served.bound, name

    # -- the operations ---------------------------------------------------------------------------

    def add(self, principal: Principal, owner: str, entries: Sequence[Entry], design: str | None = None,
            scope: str = "") -> list[int | None]:
        """Remember ``entries`` for ``owner``: a record id per entry once committed (the first id for an entry
        the owner already had; None for one the design's write gate kept out)."""
        name = owner_name(owner)
        if not principal.may(name):
            raise Forbidden(f"this token may not write for the owner {name!r}")
        if not entries:
            raise BadRequest("no entries to add; send at least one")
        if len(entries) > MAX_ENTRIES:
            raise TooLarge(f"{len(entries)} entries in one call; send at most {MAX_ENTRIES} a call")
        served = self._served(design, scope)
        self._writable(served)
        with served.lock, _store_errors():
            return served.bound.write(name, list(entries))

    def context(self, principal: Principal, owner: str, query: str, at: datetime | None = None,
                budget: int = 1000, design: str | None = None, scope: str = "") -> Context:
        """What the model would be shown for ``query`` at ``at`` (now if None) in ``budget`` tokens."""
        at = _aware(at)
        _check_query(query)
        _check_budget(budget)
        with self._reading(principal, owner, design, scope) as (bound, name):
            return bound.context(name, query, at, budget)

    def search(self, principal: Principal, owner: str, query: str, limit: int = 10, design: str | None = None,
               scope: str = "") -> list[Hit]:
        """The ``limit`` records of ``owner`` most relevant to ``query``, best first, with their scores."""
        _check_query(query)
        if not 1 <= limit <= MAX_RESULTS:
            raise TooLarge(f"a search returns 1 to {MAX_RESULTS} records; asked for {limit}")
        with self._reading(principal, owner, design, scope) as (bound, name):
            if not isinstance(bound.design, Ranks):
                raise NotAllowed(f"the {bound.name} design does not rank records for a query; ask for a context "
                                 "instead, or serve a design that ranks (vector)")
            records = {r.id: r for r in bound.records(name)}  # reads the owner as the store has it now
            return [Hit(records[i], s) for i, s in bound.design.ranked(name, query, limit) if i in records]

    def get(self, principal: Principal, owner: str, record_id: int, design: str | None = None,
            scope: str = "") -> Record:
        with self._reading(principal, owner, design, scope) as (bound, name):
            for r in bound.records(name):
                if r.id == record_id:
                    return r
        raise NotFound(f"the owner {name!r} has no record {record_id}")

    def list(self, principal: Principal, owner: str, page: int = 1, size: int = 50, design: str | None = None,
             scope: str = "") -> Page:
        """The owner's records oldest first, ``size`` a page; page 1 is the first."""
        if page < 1:
            raise BadRequest(f"pages count from 1; asked for page {page}")
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise TooLarge(f"a page holds 1 to {MAX_PAGE_SIZE} records; asked for {size}")
        with self._reading(principal, owner, design, scope) as (bound, name):
            records = bound.records(name)
        return Page(records[(page - 1) * size: page * size], page, size, len(records))

    def delete(self, principal: Principal, owner: str, record_id: int, design: str | None = None,
               scope: str = "") -> None:
        """Delete one record, where the design's memory is its records (``full``, ``vector``, ``recent``):
        gone from every context, search, listing and export. NotFound for a record the owner does not have (or
        an owner the principal may not see); NotAllowed, with the design's reason, where it builds its memory
        from its records (a summary would still hold the text)."""
        self._change(principal, owner, record_id, None, design, scope)

    def update(self, principal: Principal, owner: str, record_id: int, text: str, design: str | None = None,
               scope: str = "") -> Record:
        """Give one record a new text, where the design allows it (as :meth:`delete`): the same record (its id,
        time and origin kept) with the new text, which a context cites from now on."""
        changed = self._change(principal, owner, record_id, text, design, scope)
        assert changed is not None
        return changed

    def _change(self, principal: Principal, owner: str, record_id: int, text: str | None, design: str | None,
                scope: str) -> Record | None:
        """Update (``text``) or delete (None) one record. The record must be one the principal may see first, so
        a refusal says only what it would say of a record the owner has."""
        if text is not None:
            try:
                text = record_text(text)
            except MemstreamError as e:
                raise BadRequest(str(e)) from None
        with self._reading(principal, owner, design, scope) as (bound, name):
            if all(r.id != record_id for r in bound.records(name)):
                raise NotFound(f"the owner {name!r} has no record {record_id}")
            if not bound.design.changes_records:
                raise NotAllowed(refused_change(bound.design, "update" if text is not None else "delete"))
            if self.read_only or bound.held.store.read_only:
                raise NotAllowed(f"{bound.held.store.path} is served read-only; memory can be read, not written")
            try:
                if text is None:
                    bound.delete(name, record_id)
                    return None
                return bound.update(name, record_id, text)
            except NoSuchRecord:  # another process deleted it meanwhile
                raise NotFound(f"the owner {name!r} has no record {record_id}") from None

    def forget(self, principal: Principal, owner: str, design: str | None = None, scope: str = "") -> dict[str, int]:
        """Erase every trace of ``owner`` in ``design`` (every served design if None): rows removed per design."""
        name = owner_name(owner)
        gone: dict[str, int] = {}
        for d in [design] if design else self.designs:
            served = self._served(d, scope)
            self._writable(served)
            with served.lock, _store_errors():
                if served.bound.knows(name) and principal.may(name):
                    gone[served.bound.name] = served.bound.forget(name)
        if not gone:
            raise NotFound(f"no memory for the owner {name!r}" + (f" in scope {scope!r}" if scope else ""))
        return gone

    def history(self, principal: Principal, owner: str, design: str | None = None,
                scope: str = "") -> builtins.list[Any]:
        """Every version of what the design holds of ``owner``, oldest first, for a design that keeps versions."""
        with self._reading(principal, owner, design, scope) as (bound, name):
            if not isinstance(bound.design, KeepsVersions):
                raise NotAllowed(f"the {bound.name} design keeps no versions: a record, once written, is what it "
                                 "was; list the owner's records instead")
            bound.records(name)  # reads the owner as the store has it now
            return bound.design.versions(name)

    def owners(self, principal: Principal, design: str | None = None, scope: str = "") -> builtins.list[str]:
        """The owners with memory in ``design`` that ``principal`` may use, in the order first written."""
        served = self._served(design, scope)
        with served.lock, _store_errors():
            return [o for o in served.bound.owners() if principal.may(o)]

    def health(self) -> Health:
        """Whether the store answers now (each served design's owners read once)."""
        served = self._served(None, "")
        try:
            with served.lock, _store_errors():
                served.bound.owners()
        except Unavailable as e:
            return Health(False, served.bound.held.store.path, self.designs, self.read_only, str(e))
        return Health(True, served.bound.held.store.path, self.designs, self.read_only)

    def _writable(self, served: _Served) -> None:
        if self.read_only or served.bound.held.store.read_only:
            raise NotAllowed(f"{served.bound.held.store.path} is served read-only; memory can be read, not written")


def owner_name(owner: str) -> str:
    """``owner`` as the store names it; a bad name is one line."""
    try:
        return normalise_owner(owner)
    except ValueError as e:
        raise BadRequest(str(e)) from None


#: The modules whose failures are the store's (it cannot be reached, or refused a write), not the input's.
STORE_MODULES = ("memstream.designs.store", "memstream.sqlite", "psycopg", "sqlite3")


@contextmanager
def _store_errors() -> Iterator[None]:
    """A failure of the store as :class:`~.errors.Unavailable` (nothing was written: a bound design commits a
    write whole or not at all); any other :class:`~memstream.errors.MemstreamError` (a design refusing what it
    was given, say a time outside the years it accepts) as :class:`~.errors.BadRequest`. Which it is is read
    from where it was raised (the store's modules, :data:`STORE_MODULES`)."""
    try:
        yield
    except ServiceError:
        raise
    except MemstreamError as e:
        raise (Unavailable if _raised_in_store(e) else BadRequest)(str(e)) from None
    except sqlite3.Error as e:
        raise Unavailable(f"the store failed ({type(e).__name__}: {e}); nothing was written") from None


def _raised_in_store(error: BaseException) -> bool:
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = str(tb.tb_frame.f_globals.get("__name__", "")) if tb is not None else ""
    return module.startswith(STORE_MODULES)


def _aware(at: datetime | None) -> datetime:
    if at is None:
        return datetime.now(UTC)
    if at.tzinfo is None or at.utcoffset() is None:
        raise BadRequest("at has no time zone; add one, e.g. 2026-01-01T12:00:00+00:00")
    return at


def _check_query(query: str) -> None:
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("the query is empty; say what to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise TooLarge(f"the query is {len(query):,} characters; send at most {MAX_QUERY_CHARS:,}")


def _check_budget(budget: int) -> None:
    if not isinstance(budget, int) or budget < 1:
        raise BadRequest(f"a budget is a positive number of tokens, got {budget!r}")
    if budget > MAX_BUDGET:
        raise TooLarge(f"a budget of {budget:,} tokens is over the most this server gives, {MAX_BUDGET:,}")


__all__ = ["DEFAULT_DESIGN", "LOCAL", "Health", "Hit", "MemoryService", "Page", "owner_name", "storable"]
