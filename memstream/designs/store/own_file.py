"""A design bound to a store whose memory is a file of the design's own kind beside it (``stream``, ``facts``).

The design's settings and erasures are the store's rows, as for every design; its memory is its own file
(:func:`~.schema.own_file_path`), which the design opens (:meth:`~memstream.designs.MemoryDesign.attach_file`)
and reads owner by owner as it always does (the stream catches up with what other processes commit by a
high-water mark; the facts store reads SQLite at each call).

How a write stays right with many processes (the same promise as :mod:`.bound`):

1. The entries the owner already has (by :attr:`~memstream.designs.entries.Entry.key`) are left out.
2. The design's write stage runs (its model requests go to whoever drives the stage); what it writes may wait
   in memory (the stream's write buffer, its ids handed out).
3. Holding the design store's write lock (every writer through a store takes it to commit, so commits of one
   store never interleave), the file is asked to commit (:meth:`~memstream.designs.base.OwnFile.commit`): it
   refuses, writing nothing, if another process stored one of the entries or wrote under it; then what waits
   is discarded and the write runs again. After :data:`~.bound.OPTIMISTIC` such tries it runs holding the
   lock from the start, so it always ends. Nothing is written to the design store itself.

A write is acknowledged (its ids returned) only once committed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from memstream.designs.base import MemoryDesign, OwnFile
from memstream.designs.context import Context
from memstream.designs.entries import Entry, Record
from memstream.designs.store.bound import OPTIMISTIC, owner_name
from memstream.designs.store.schema import own_file_path
from memstream.designs.store.store import DesignStore, OwnerKey
from memstream.errors import MemstreamError
from memstream.models import Stage

T = TypeVar("T")


class OwnFileDesign:
    """A design whose memory is a file of its own kind beside the store, for owners in ``scope``."""

    def __init__(self, store: DesignStore, design: MemoryDesign, *, scope: str = "") -> None:
        self.store, self.design, self.scope = store, design, scope
        self.name = design.name
        self.file: OwnFile = design.attach_file(own_file_path(store.path, design.name), scope,
                                                read_only=store.read_only)

    def close(self) -> None:
        self.file.close()

    # -- reading --------------------------------------------------------------------------------

    def _owner(self, owner: str) -> tuple[str, str]:
        """The owner as the store names it, and as the file does."""
        owner = owner_name(owner)
        return owner, self.file.owner_key(owner)

    def owners(self) -> list[str]:
        return self.file.owners()

    def knows(self, owner: str) -> bool:
        return owner in self.file.owners()

    def change(self, owners: Sequence[str], change: Callable[[MemoryDesign], T]) -> T:
        """Several owners changed at once: what a design kept in rows offers (letta's shared blocks); a design
        in a file of its own changes one owner per write."""
        raise MemstreamError(f"the {self.name} design changes one owner per write; write each owner's memory")

    def records(self, owner: str) -> list[Record]:
        owner, key = self._owner(owner)
        return self.file.records(key, owner)

    def stored_records(self, owner: str) -> list[Record]:
        """The owner's records as its file has them (the file is read, nothing is indexed here)."""
        return self.records(owner)

    def entry_keys(self, owner: str) -> dict[int, str]:
        return self.file.entry_keys(self._owner(owner)[1])

    def known_keys(self, owner: str, keys: Sequence[str]) -> dict[str, int]:
        return self.file.known(self._owner(owner)[1], keys)

    def texts(self, owner: str) -> list[str]:
        return self.file.texts(self._owner(owner)[1])

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        return self.design.context(self._owner(owner)[1], query, now, budget_tokens)

    # -- writing --------------------------------------------------------------------------------

    def remember_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int | None]]:
        """Write ``entries`` for ``owner``; a record id per entry once committed (None for one the gate kept
        out; the first id for one the owner already had)."""
        key = self._owner(owner)[1]
        stored: dict[str, int] = {}
        todo: list[Entry] = []

        def attempt() -> Stage[None]:
            stored.clear()
            stored.update(self.file.known(key, [e.key for e in entries]))
            todo[:] = list({e.key: e for e in entries if e.key not in stored}.values())
            ids = (yield from self.design.remember_stage(key, todo)) if todo else []
            stored.update({e.key: i for e, i in zip(todo, ids, strict=True) if i is not None})

        yield from self._changing(key, attempt, lambda: [e.key for e in todo])
        return [stored.get(e.key) for e in entries]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        key = self._owner(owner)[1]
        made: list[int] = [0]

        def attempt() -> Stage[None]:
            made[0] = yield from self.design.consolidate_stage(key, now)

        yield from self._changing(key, attempt, list)
        return made[0]

    def _changing(self, key: str, attempt: Callable[[], Stage[None]],
                  written: Callable[[], Sequence[str]]) -> Stage[None]:
        """Run ``attempt`` (a stage changing the owner) and commit what it wrote (``written()``: the keys of the
        entries it wrote), trying again on a conflict (see the module's docstring)."""
        self._writable()
        for tries in range(OPTIMISTIC + 1):
            locked = tries == OPTIMISTIC
            if locked:
                self.store.begin()
            try:
                yield from attempt()
                if not locked:
                    self.store.begin()
                if self.file.commit(key, written()):
                    return
                self.file.discard()
            except BaseException:
                self.file.discard()
                raise
            finally:
                self.store.rollback()  # the lock only: nothing was written to the design store
        raise AssertionError("a write holding the lock cannot conflict")  # pragma: no cover

    def _writable(self) -> None:
        if self.store.read_only:
            raise MemstreamError(f"{self.store.path} is read-only here; memory can be read, not written")

    # -- forgetting -----------------------------------------------------------------------------

    def forget(self, owner: str) -> int:
        """Remove every trace of ``owner`` from the design's file (its own forget: one transaction, deleted
        bytes overwritten, the write-ahead log emptied) and log the erasure in the store; the rows removed."""
        self._writable()
        owner, key = self._owner(owner)
        self.store.begin()  # no write of the store commits meanwhile
        try:
            gone = self.file.forget(key)
            self.store.log_erasure(OwnerKey(self.name, self.scope, owner), gone)
            self.store.commit()
        except BaseException:
            self.store.rollback()
            raise
        self.store.checkpoint()
        return gone

