"""A design bound to a store: its memory read owner by owner when first asked for, written row by row.

How a write stays right with many processes on one store (and one process on many owners):

1. Before a write, the owner's version in the store is compared with the one this process read; if
   another process wrote the owner since, the owner is read again (only that owner).
2. The design's own write stage runs (it may ask the model; its requests go to whoever drives the stage).
3. In one transaction that takes the write lock, the owner's version is checked again; if unchanged, the
   new records, changed documents and new log items are written and the version raised; else nothing is
   written, the owner is read again and the write runs again (the call cache answers repeated requests).
   After :data:`OPTIMISTIC` such tries the write runs holding the lock from the start, so it always ends.

A write is acknowledged (its ids returned) only once committed. Entries are known by their key (their id,
else a digest of what they say, :attr:`~memstream.designs.entries.Entry.key`): an entry the owner already
has is not written again, and its first id is returned.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from memstream.designs.base import MemoryDesign, _drive, refused_change
from memstream.designs.context import Context
from memstream.designs.entries import Entry, Record, record_text
from memstream.designs.store.rows import ID_BLOCK, Held, OwnerKey, Rows, digest, dumps
from memstream.designs.store.store import damaged
from memstream.errors import MemstreamError
from memstream.models import CachedChatModel, ChatModel, Stage, forget_in_cache
from memstream.stream import normalise_owner

T = TypeVar("T")

#: Writes tried without the lock before one runs holding it.
OPTIMISTIC = 3


class StoreIds:
    """Record ids from the store, a block at a time (:data:`~.store.ID_BLOCK`); ``design`` names the counter
    row (a design's, or ``design#name`` for another of its sequences, :meth:`sequence`)."""

    def __init__(self, store: Rows, design: str) -> None:
        self.store, self.design = store, design
        self._next = self._end = 0
        self._sequences: dict[str, StoreIds] = {}

    def sequence(self, name: str) -> StoreIds:
        """The design's ids named ``name`` (kept in the counter row ``design#name``)."""
        return self._sequences.setdefault(name, StoreIds(self.store, f"{self.design}#{name}"))

    def take(self) -> int:
        if self._next >= self._end:
            self._next = self.store.reserve_ids(self.design)
            self._end = self._next + ID_BLOCK
        taken, self._next = self._next, self._next + 1
        return taken

    @property
    def next_id(self) -> int:
        return self._next if self._next < self._end else self.store.peek_id(self.design)

    def give_back(self) -> None:
        """Return what is left of the block (and of the other sequences'), at close."""
        if self._next < self._end:
            self.store.give_back_ids(self.design, self._next, self._end)
        for other in self._sequences.values():
            other.give_back()
        self._next = self._end = 0

    def reset(self) -> None:
        """Give up the block (a rolled-back transaction took it back), and those of the other sequences."""
        self._next = self._end = 0
        for other in self._sequences.values():
            other.reset()


def owner_name(owner: str) -> str:
    try:
        return normalise_owner(owner)
    except ValueError as e:
        raise MemstreamError(str(e)) from None


class RowsDesign:
    """A design whose memory the store keeps as rows (:class:`~memstream.designs.base.OwnerRows`)."""

    def __init__(self, store: Rows, design: MemoryDesign, *, scope: str = "") -> None:
        self.store, self.design, self.scope = store, design, scope
        self.name = design.name
        self.ids = StoreIds(store, design.name)
        design.use_ids(self.ids)
        self._held: dict[str, Held] = {}
        #: Each shared document's version and JSON as read (None: read them again before the next use).
        self._shared: dict[str, tuple[int, str]] | None = None
        #: Times reading the shared documents changed what the design held of them (a write begun before
        #: may have lost its changes to them, and is tried again).
        self._shared_reads = 0
        #: Owners with a write under way through this handle (stages driven side by side, one per owner).
        self._writing: set[str] = set()
        #: The write whose transaction this handle's connection holds (only it commits or rolls it back).
        self._holder: object | None = None

    def close(self) -> None:
        """Give back the ids this process reserved and did not use (the store stays open: its opener closes it)."""
        self.settle()

    def settle(self) -> None:
        """Give back the ids reserved and not used, so the store's counter is the next id this process takes (a
        copy taken now, resumed by another process, goes on with the same ids as this one)."""
        if not self.store.read_only:
            with suppress(MemstreamError):  # the store is busy or full: the ids stay reserved, a gap, nothing worse
                self.ids.give_back()

    # -- reading --------------------------------------------------------------------------------

    def _key(self, owner: str) -> OwnerKey:
        return OwnerKey(self.name, self.scope, owner)

    def _fresh(self, owner: str) -> None:
        """Hold the owner as the store has it now (read again only if another process wrote it)."""
        held = self._held.get(owner)
        if held is None or self.store.version(self._key(owner)) != held.version:
            self._load(owner)
        self._fresh_shared()

    def _load(self, owner: str) -> None:
        held, rows = self.store.read_owner(self._key(owner))
        self.design.drop_owner(owner)
        if held.version:
            try:
                self.design.load_owner(owner, rows)
            except (KeyError, ValueError, TypeError) as e:
                self.design.drop_owner(owner)
                raise MemstreamError(damaged(self.store.path, self._key(owner), e)) from None
        self._held[owner] = held

    def _fresh_shared(self) -> None:
        stored = self.store.read_shared(self.name, self.scope)
        versions = {n: v for n, (v, _) in stored.items()}
        if self._shared is None or versions != {n: v for n, (v, _) in self._shared.items()}:
            held = {n: dumps(v) for n, v in self.design.shared_rows().items()}
            self.design.load_shared({n: value for n, (_, value) in stored.items()})
            self._shared = {n: (v, dumps(value)) for n, (v, value) in stored.items()}
            if held != {n: text for n, (_, text) in self._shared.items()}:
                self._shared_reads += 1

    def _unheld(self, owner: str) -> None:
        """Forget what this process holds of ``owner`` (its memory may be half changed): read again next time."""
        self._held.pop(owner, None)
        self.design.drop_owner(owner)
        self._shared = None
        self.ids.reset()

    def owners(self) -> list[str]:
        return self.store.owners(self.name, self.scope)

    def knows(self, owner: str) -> bool:
        return self.store.version(self._key(owner)) > 0

    def records(self, owner: str) -> list[Record]:
        owner = owner_name(owner)
        self._fresh(owner)
        return list(self.design.owner_rows(owner).records)

    def stored_records(self, owner: str) -> list[Record]:
        """The owner's records as the store has them, read without loading them into the design (no index
        is built, nothing embedded): what an export needs."""
        return list(self.store.read_owner(self._key(owner_name(owner)))[1].records)

    def known_keys(self, owner: str, keys: Sequence[str]) -> dict[str, int]:
        return self.store.known_keys(self._key(owner_name(owner)), keys)

    def texts(self, owner: str) -> list[str]:
        """Every text the owner's memory holds: records, and the strings of its documents and logs."""
        owner = owner_name(owner)
        self._fresh(owner)
        rows = self.design.owner_rows(owner)
        return [r.text for r in rows.records] + _strings([rows.docs, rows.logs, rows.extras])

    def entry_keys(self, owner: str) -> dict[int, str]:
        """Each record id that came from an entry, with the entry's key."""
        owner = owner_name(owner)
        return self.store.entry_keys(self._key(owner))

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        owner = owner_name(owner)
        self._fresh(owner)
        return self.design.context(owner, query, now, budget_tokens)

    # -- writing --------------------------------------------------------------------------------

    def remember_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int | None]]:
        """Write ``entries`` for ``owner`` (each passes the design's gate); a record id per entry once
        committed (None for one the gate kept out; the first id for one the owner already had)."""
        owner = owner_name(owner)
        keys = [e.key for e in entries]
        stored: dict[str, int] = {}

        def attempt() -> Stage[dict[int, str]]:
            stored.clear()
            stored.update(self.store.known_keys(self._key(owner), keys))
            todo = list({k: e for k, e in zip(keys, entries, strict=True) if k not in stored}.items())
            ids = (yield from self.design.remember_stage(owner, [e for _, e in todo])) if todo else []
            made = {k: i for (k, _), i in zip(todo, ids, strict=True) if i is not None}
            stored.update(made)
            return {i: k for k, i in made.items()}

        yield from self._changing(owner, attempt)
        return [stored.get(k) for k in keys]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        owner = owner_name(owner)
        made: list[int] = []

        def attempt() -> Stage[dict[int, str]]:
            made[:] = [(yield from self.design.consolidate_stage(owner, now))]
            return {}

        yield from self._changing(owner, attempt)
        return made[0]

    def _changing(self, owner: str, attempt: Any) -> Stage[None]:
        """Run ``attempt`` (a stage changing the owner; the entry key of each record it made from an entry)
        and store what it changed, trying again on a conflict (see the module's docstring).

        Several owners' writes may run side by side through one handle (a batched runner drives their stages
        together); each commits or rolls back only its own transaction, and one that must run holding the
        lock refuses the others in one line until it is done (they would wait on it in the same thread)."""
        self._refuse_unwritable(owner, "is already under way through this handle; write again once it has finished "
                                       "(one write per owner at a time)")
        me = object()
        self._writing.add(owner)
        try:
            for tries in itertools.count():
                locked = tries >= OPTIMISTIC  # (under the lock, only this handle's own other writes can intrude)
                if locked:
                    self._lock(me, owner)
                try:
                    self._fresh(owner)
                    reads = self._shared_reads
                    keys = yield from attempt()
                    if self._store(owner, keys, me, reads):
                        return
                except self.store.failures as e:  # a full disk, a medium gone read-only: nothing of the write kept
                    self._unheld(owner)
                    raise self.store.refused(e, rollback=self._holder is me) from None
                except BaseException:
                    self._release(me)
                    self._unheld(owner)
                    raise
                self._unheld(owner)
        finally:
            self._release(me)
            self._writing.discard(owner)

    def _lock(self, me: object, owner: str) -> None:
        """Take the store's write lock for the write ``me``; one line if another write of this handle has it."""
        if self.store.in_transaction:
            raise MemstreamError(f"{self.store.path}: another write through this handle holds the store's write "
                                 "lock while it waits for its model; write again once it has finished")
        self.store.begin(self._key(owner))
        self._holder = me

    def _release(self, me: object) -> None:
        """Roll back the transaction of the write ``me``, if it holds one (never another write's)."""
        if self._holder is me:
            self._holder = None
            self.store.rollback()

    def _store(self, owner: str, keys: dict[int, str], me: object, reads: int) -> bool:
        """Commit what the design now holds of ``owner`` beyond what the store has; whether it was stored.
        Nothing changed (a consolidation with nothing to do): no transaction, the version stays."""
        rows = self.design.owner_rows(owner)
        if self._held[owner].holds(rows) and self._shared is not None and not self._shared_changes()[1]:
            self._release(me)  # the lock, if this try held it
            return True
        if self._holder is not me:
            self._lock(me, owner)
        held = self.store.write_owner(self._key(owner), rows, self._held[owner], keys)
        if held is None or reads != self._shared_reads or not self._store_shared():
            self._release(me)
            return False
        self._holder = None
        self.store.commit()
        self._held[owner] = held
        return True

    def _shared_changes(self) -> tuple[dict[str, tuple[Any, str]], dict[str, tuple[int, Any]]]:
        """The shared documents as the design holds them now (value, JSON), and those changed since read
        (each with the version read and its new value)."""
        assert self._shared is not None, "shared documents are read before a change"
        was = self._shared
        now = {n: (v, dumps(v)) for n, v in self.design.shared_rows().items()}
        return now, {n: (was.get(n, (0, ""))[0], v) for n, (v, text) in now.items() if was.get(n, (0, ""))[1] != text}

    def _store_shared(self) -> bool:
        """Write the shared documents the design changed (inside the write transaction); False, writing none,
        if another process changed one since this one read it."""
        if self._shared is None:  # another write through this handle failed and dropped them: read them again
            return False
        was = self._shared
        now, changed = self._shared_changes()
        if not changed:
            return True
        versions = self.store.write_shared(self.name, self.scope, changed)
        if versions is None:
            return False
        self._shared = {**was, **{n: (versions[n], now[n][1]) for n in changed}}
        return True

    def change(self, owners: Sequence[str], change: Callable[[MemoryDesign], T]) -> T:
        """Run ``change`` on the design with ``owners`` as the store has them, holding the lock, and store what
        it changed of each (and of what is shared) in that one transaction: how memory of several owners at
        once is changed (letta's ``share_block``: one block attached to every owner in ``owners``)."""
        names = list(dict.fromkeys(owner_name(o) for o in owners))
        self._refuse_unwritable()
        self.store.begin()
        try:
            for owner in names:
                self._fresh(owner)
            made = change(self.design)
            for owner in names:
                held = self.store.write_owner(self._key(owner), self.design.owner_rows(owner), self._held[owner], {})
                if held is None:  # (a back-end that locks owner by owner: another process wrote it meanwhile)
                    raise MemstreamError(f"{self.store.path}: another process wrote {owner!r} meanwhile; "
                                         "nothing was changed, try again")
                self._held[owner] = held
            if not self._store_shared():
                raise MemstreamError(f"{self.store.path}: another process changed what {', '.join(names)} share "
                                     "meanwhile; nothing was changed, try again")
            self.store.commit()
        except BaseException:
            self.store.rollback()
            for owner in names:
                self._unheld(owner)
            raise
        return made

    def _refuse_unwritable(self, owner: str | None = None, busy: str = "") -> None:
        """One line, before anything is read, where this handle cannot write now: a read-only store, or (for
        ``owner``) a write of that owner still under way through it (``busy`` says what to do instead)."""
        if self.store.read_only:
            raise MemstreamError(f"{self.store.path} is read-only here; memory can be read, not written")
        if owner is not None and owner in self._writing:
            raise MemstreamError(f"a write for {owner!r} {busy}")

    # -- one record changed alone ---------------------------------------------------------------

    def change_record(self, owner: str, record_id: int, text: str | None) -> bool:
        """Give the owner's record ``record_id`` the text ``text`` (None: delete it) in one transaction holding
        the lock, in a design that allows it (:attr:`~memstream.designs.MemoryDesign.changes_records`; one line
        naming why where it does not); False, changing nothing, if the owner has no such record.

        The store changes the record's row (a deleted one's text is overwritten in the file, as a forgotten
        owner's is), logs the change and raises the owner's version: every other process reads the owner again
        before its next use, so its indexes learn of the change; this one changes what it holds in place."""
        owner = owner_name(owner)
        if not self.design.changes_records:
            raise MemstreamError(refused_change(self.design, "update" if text is not None else "delete"))
        self._refuse_unwritable(owner, "is under way through this handle; change its records once that write has "
                                       "finished")
        me = object()
        self._lock(me, owner)
        try:
            self._fresh(owner)
            if all(r.id != record_id for r in self.design.owner_rows(owner).records):
                self._release(me)
                return False
            held = self.store.change_record(self._key(owner), self._held[owner], record_id, text)
            assert held is not None, "an owner read under the lock cannot have moved"
            self.design.change_record(owner, record_id, text)
            self._holder = None
            self.store.commit()
            self._held[owner] = held
        except self.store.failures as e:
            self._unheld(owner)
            raise self.store.refused(e, rollback=self._holder is me) from None
        except BaseException:
            self._release(me)
            self._unheld(owner)
            raise
        if text is None:
            self.store.checkpoint()  # (no copy of the deleted row left in the write-ahead log)
        return True

    # -- forgetting -----------------------------------------------------------------------------

    def forget(self, owner: str) -> int:
        """Remove every trace of ``owner`` from this design's memory in the store, in one transaction; the
        rows removed. What the owner shared with others (a block attached to several owners) stays."""
        owner = owner_name(owner)
        self._refuse_unwritable(owner, "is under way through this handle; forget it once that write has finished")
        me = object()
        self._lock(me, owner)
        try:
            self._shared = None
            self._fresh(owner)
            self.design.drop_owner(owner)
            gone = self.store.forget(self._key(owner))
            stored = self._store_shared()
            assert stored, "shared documents read under the lock cannot have moved"
            self._holder = None
            self.store.commit()
        except self.store.failures as e:
            self._unheld(owner)
            raise self.store.refused(e, rollback=self._holder is me) from None
        except BaseException:
            self._release(me)
            self._unheld(owner)
            raise
        self._held.pop(owner, None)
        self.store.checkpoint()
        return gone


class NoSuchRecord(MemstreamError):
    """An update or delete of a record the owner does not have (a service answers it as not found)."""


def no_record(owner: str, record_id: int) -> str:
    return f"{owner_name(owner)!r} has no record {record_id} here"


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


class HeldDesign(Protocol):
    """What :class:`BoundDesign` holds: a design's memory in a store, as rows (:class:`RowsDesign`) or in a
    file of the design's own kind beside it (:class:`~.own_file.OwnFileDesign`)."""

    name: str
    scope: str
    design: MemoryDesign

    @property
    def store(self) -> Rows: ...

    def remember_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int | None]]: ...

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]: ...

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context: ...

    def owners(self) -> list[str]: ...

    def knows(self, owner: str) -> bool: ...

    def change(self, owners: Sequence[str], change: Callable[[MemoryDesign], T]) -> T: ...

    def records(self, owner: str) -> list[Record]: ...

    def stored_records(self, owner: str) -> list[Record]: ...

    def entry_keys(self, owner: str) -> dict[int, str]: ...

    def known_keys(self, owner: str, keys: Sequence[str]) -> dict[str, int]: ...

    def texts(self, owner: str) -> list[str]: ...

    def change_record(self, owner: str, record_id: int, text: str | None) -> bool: ...

    def forget(self, owner: str) -> int: ...

    def settle(self) -> None: ...


class BoundDesign:
    """A design bound to its store (what :func:`~memstream.designs.store.open_design` gives): the calls of
    :class:`~memstream.designs.MemoryDesign`, each owner read from the store when first asked for and every
    write committed before it returns, plus the owner's lifecycle (``owners``, ``export``, ``forget``)."""

    def __init__(self, held: HeldDesign, *, chat: ChatModel | None = None) -> None:
        self.held, self.chat = held, chat
        self.name = held.name
        self.design = held.design
        self.config = held.design.config

    def remember_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int | None]]:
        return self.held.remember_stage(owner, entries)

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        return self.held.consolidate_stage(owner, now)

    def write(self, owner: str, entries: Sequence[Entry]) -> list[int | None]:
        """Remember ``entries`` for ``owner``; a record id per entry (None: kept out by the write gate)."""
        with self._calls_for(owner):
            return _drive(self.remember_stage(owner, entries), self.chat, self.name, "write")

    def consolidate(self, owner: str, now: datetime) -> int:
        with self._calls_for(owner):
            return _drive(self.consolidate_stage(owner, now), self.chat, self.name, "consolidate")

    def call_tag(self, owner: str) -> str:
        """How a call cache marks the calls made for ``owner`` here: a digest of the design, scope and owner."""
        return digest(dumps([self.name, self.held.scope, owner_name(owner)]))

    def _calls_for(self, owner: str) -> AbstractContextManager[None]:
        """The calls made inside recorded as ``owner``'s, if the chat model is a call cache."""
        return self.chat.for_owner(self.call_tag(owner)) if isinstance(self.chat, CachedChatModel) else nullcontext()

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        return self.held.context(owner, query, now, budget_tokens)

    def settle(self) -> None:
        """The store left as another process would go on from it: the ids reserved and not used given back (a
        run's checkpoint copies the store after this, so a run resumed from it takes the ids the unbroken one
        does)."""
        self.held.settle()

    def owners(self) -> list[str]:
        return self.held.owners()

    def knows(self, owner: str) -> bool:
        """Whether the store holds memory of ``owner`` (in this design and scope), without reading it."""
        return self.held.knows(owner_name(owner))

    def records(self, owner: str) -> list[Record]:
        return self.held.records(owner)

    def export(self, owner: str) -> Iterator[Entry]:
        """The entries ``owner`` was given, in the order written (what :meth:`import_entries` replays)."""
        with self.held.store.reading():  # the keys and the records as of one commit
            keys = self.held.entry_keys(owner)
            records = self.held.stored_records(owner)
        for r in records:
            if r.id in keys:
                given = keys[r.id]
                yield Entry(text=r.text, at=r.at, source=r.source, kind=r.kind,  # type: ignore[arg-type]
                            session=r.session, id=given[3:] if given.startswith("id:") else None)

    def import_entries(self, owner: str, entries: Iterable[Entry], *, batch: int = 100) -> int:
        """Write ``entries`` for ``owner`` in batches; how many were new (those the owner had are skipped)."""
        new, todo = 0, list(entries)
        for start in range(0, len(todo), batch):
            chunk = todo[start:start + batch]
            before = set(self.held.known_keys(owner, [e.key for e in chunk]))
            self.write(owner, chunk)
            new += len({e.key for e in chunk} - before)
        return new

    def update(self, owner: str, record_id: int, text: str) -> Record:
        """Give ``owner``'s record ``record_id`` the text ``text``, in a design whose memory is its records
        (:attr:`~memstream.designs.MemoryDesign.changes_records`; one line saying why not in another): the same
        record (its id, time and origin kept) with the new text, what a context cites from now on, in every
        process. One line if the owner has no such record."""
        text = record_text(text)
        if not self.held.change_record(owner, record_id, text):
            raise NoSuchRecord(no_record(owner, record_id))
        return next(r for r in self.records(owner) if r.id == record_id)

    def delete(self, owner: str, record_id: int) -> None:
        """Delete ``owner``'s record ``record_id`` (in a design whose memory is its records): gone from every
        context, search, listing and export, in every process, its text overwritten in the store's file. One
        line if the owner has no such record; the owner stays (with its other records, if any)."""
        if not self.held.change_record(owner, record_id, None):
            raise NoSuchRecord(no_record(owner, record_id))

    def change(self, owners: Sequence[str], change: Callable[[MemoryDesign], T]) -> T:
        """Change the memory of several owners at once, in one transaction (:meth:`RowsDesign.change`)."""
        return self.held.change(owners, change)

    def forget(self, owner: str, *, calls: CachedChatModel | str | Path | None = None) -> int:
        """Remove every trace of ``owner`` from the store (see the held design's ``forget``); the rows removed.

        ``calls``: a call cache (a :class:`~memstream.models.CachedChatModel` or its file) the design's
        requests went through: every call made for the owner (recorded when this bound design's chat model is
        that cache: :meth:`write` and :meth:`consolidate` tag them) and every cached answer that quotes one of
        the owner's texts (records, summaries, facts, insights: for calls a batched runner made) is deleted
        from it, its bytes overwritten. The cache keeps requests only as hashes."""
        texts = self.held.texts(owner) if calls is not None else []
        gone = self.held.forget(owner)
        if isinstance(calls, CachedChatModel):
            calls.forget_owner(self.call_tag(owner), texts)
        elif calls is not None:
            forget_in_cache(calls, self.call_tag(owner), texts)
        return gone
