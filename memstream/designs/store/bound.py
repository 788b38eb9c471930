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

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from datetime import datetime
from typing import Any, TypeVar

from memstream.designs.base import MemoryDesign, _drive
from memstream.designs.context import Context
from memstream.designs.entries import Entry, Record
from memstream.designs.store.store import ID_BLOCK, DesignStore, Held, OwnerKey, dumps
from memstream.errors import MemstreamError
from memstream.models import ChatModel, Stage
from memstream.stream import normalise_owner

T = TypeVar("T")

#: Writes tried without the lock before one runs holding it.
OPTIMISTIC = 3


class StoreIds:
    """Record ids from the store, a block at a time (:data:`~.store.ID_BLOCK`); ``design`` names the counter
    row (a design's, or ``design#name`` for another of its sequences, :meth:`sequence`)."""

    def __init__(self, store: DesignStore, design: str) -> None:
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

    def __init__(self, store: DesignStore, design: MemoryDesign, *, scope: str = "") -> None:
        self.store, self.design, self.scope = store, design, scope
        self.name = design.name
        self.ids = StoreIds(store, design.name)
        design.use_ids(self.ids)
        self._held: dict[str, Held] = {}
        #: Each shared document's version and JSON as read (None: read them again before the next use).
        self._shared: dict[str, tuple[int, str]] | None = None

    def close(self) -> None:
        """Give back the ids this process reserved and did not use (the store stays open: its opener closes it)."""
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
                raise MemstreamError(f"{self.store.path}: the {self.name} memory of {owner!r} is damaged "
                                     f"({type(e).__name__}: {e}); run `memstream memory check`") from None
        self._held[owner] = held

    def _fresh_shared(self) -> None:
        stored = self.store.read_shared(self.name, self.scope)
        versions = {n: v for n, (v, _) in stored.items()}
        if self._shared is None or versions != {n: v for n, (v, _) in self._shared.items()}:
            self.design.load_shared({n: value for n, (_, value) in stored.items()})
            self._shared = {n: (v, dumps(value)) for n, (v, value) in stored.items()}

    def _unheld(self, owner: str) -> None:
        """Forget what this process holds of ``owner`` (its memory may be half changed): read again next time."""
        self._held.pop(owner, None)
        self.design.drop_owner(owner)
        self._shared = None
        self.ids.reset()

    def owners(self) -> list[str]:
        return self.store.owners(self.name, self.scope)

    def records(self, owner: str) -> list[Record]:
        owner = owner_name(owner)
        self._fresh(owner)
        return list(self.design.owner_rows(owner).records)

    def entry_keys(self, owner: str) -> dict[int, str]:
        """Each record id that came from an entry, with the entry's key."""
        owner = owner_name(owner)
        return dict(self.store.db.execute(
            "SELECT id, key FROM design_records WHERE design=? AND scope=? AND owner=? AND key IS NOT NULL",
            (self.name, self.scope, owner)).fetchall())

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
        and store what it changed, trying again on a conflict (see the module's docstring)."""
        if self.store.read_only:
            raise MemstreamError(f"{self.store.path} is read-only here; memory can be read, not written")
        for tries in range(OPTIMISTIC + 1):
            locked = tries == OPTIMISTIC
            if locked:
                self.store.begin()
            try:
                self._fresh(owner)
                keys = yield from attempt()
                if self._store(owner, keys, locked):
                    return
            except BaseException:
                self.store.rollback()
                self._unheld(owner)
                raise
            self._unheld(owner)
        raise AssertionError("a write holding the lock cannot conflict")  # pragma: no cover

    def _store(self, owner: str, keys: dict[int, str], locked: bool) -> bool:
        """Commit what the design now holds of ``owner`` beyond what the store has; whether it was stored."""
        if not locked:
            self.store.begin()
        held = self.store.write_owner(self._key(owner), self.design.owner_rows(owner), self._held[owner], keys)
        if held is None or not self._store_shared():
            self.store.rollback()
            return False
        self.store.commit()
        self._held[owner] = held
        return True

    def _store_shared(self) -> bool:
        """Write the shared documents the design changed (inside the write transaction); False, writing none,
        if another process changed one since this one read it."""
        assert self._shared is not None, "shared documents are read before a change"
        was = self._shared
        now = {n: (v, dumps(v)) for n, v in self.design.shared_rows().items()}
        changed = {n: (was.get(n, (0, ""))[0], v) for n, (v, text) in now.items() if was.get(n, (0, ""))[1] != text}
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
        if self.store.read_only:
            raise MemstreamError(f"{self.store.path} is read-only here; memory can be read, not written")
        self.store.begin()
        try:
            for owner in names:
                self._fresh(owner)
            made = change(self.design)
            for owner in names:
                held = self.store.write_owner(self._key(owner), self.design.owner_rows(owner), self._held[owner], {})
                assert held is not None, "an owner read under the lock cannot have moved"
                self._held[owner] = held
            stored = self._store_shared()
            assert stored, "shared documents read under the lock cannot have moved"
            self.store.commit()
        except BaseException:
            self.store.rollback()
            for owner in names:
                self._unheld(owner)
            raise
        return made

    # -- forgetting -----------------------------------------------------------------------------

    def forget(self, owner: str) -> int:
        """Remove every trace of ``owner`` from this design's memory in the store, in one transaction; the
        rows removed. What the owner shared with others (a block attached to several owners) stays."""
        owner = owner_name(owner)
        if self.store.read_only:
            raise MemstreamError(f"{self.store.path} is read-only here; memory can be read, not written")
        self.store.begin()
        try:
            self._shared = None
            self._fresh(owner)
            self.design.drop_owner(owner)
            gone = self.store.forget(self._key(owner))
            stored = self._store_shared()
            assert stored, "shared documents read under the lock cannot have moved"
            self.store.commit()
        except BaseException:
            self.store.rollback()
            self._unheld(owner)
            raise
        self._held.pop(owner, None)
        self.store.checkpoint()
        return gone


class BoundDesign:
    """A design bound to its store (what :func:`~memstream.designs.store.open_design` gives): the calls of
    :class:`~memstream.designs.MemoryDesign`, each owner read from the store when first asked for and every
    write committed before it returns, plus the owner's lifecycle (``owners``, ``export``, ``forget``)."""

    def __init__(self, held: RowsDesign, *, chat: ChatModel | None = None) -> None:
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
        return _drive(self.remember_stage(owner, entries), self.chat, self.name, "write")

    def consolidate(self, owner: str, now: datetime) -> int:
        return _drive(self.consolidate_stage(owner, now), self.chat, self.name, "consolidate")

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        return self.held.context(owner, query, now, budget_tokens)

    def owners(self) -> list[str]:
        return self.held.owners()

    def records(self, owner: str) -> list[Record]:
        return self.held.records(owner)

    def export(self, owner: str) -> Iterator[Entry]:
        """The entries ``owner`` was given, in the order written (what :meth:`import_entries` replays)."""
        keys = self.held.entry_keys(owner)
        for r in self.held.records(owner):
            if r.id in keys:
                given = keys[r.id]
                yield Entry(text=r.text, at=r.at, source=r.source, kind=r.kind, session=r.session,  # type: ignore[arg-type]
                            id=given[3:] if given.startswith("id:") else None)

    def import_entries(self, owner: str, entries: Iterable[Entry], *, batch: int = 100) -> int:
        """Write ``entries`` for ``owner`` in batches; how many were new (those the owner had are skipped)."""
        new, todo = 0, list(entries)
        for start in range(0, len(todo), batch):
            chunk = todo[start:start + batch]
            before = set(self.held.store.known_keys(self.held._key(owner_name(owner)), [e.key for e in chunk]))
            self.write(owner, chunk)
            new += len({e.key for e in chunk} - before)
        return new

    def change(self, owners: Sequence[str], change: Callable[[MemoryDesign], T]) -> T:
        """Change the memory of several owners at once, in one transaction (:meth:`RowsDesign.change`)."""
        return self.held.change(owners, change)

    def forget(self, owner: str) -> int:
        return self.held.forget(owner)
