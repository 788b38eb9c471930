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

A write is acknowledged (its ids returned) only once committed. What the row designs promise of a handle
holds here too (:mod:`.bound`): one write per owner at a time, a write needing the lock while another of
the handle's writes holds it refused in one line, a write the file refuses (a full disk) one line saying
what of it was kept (a facts file commits turn by turn: the turns before, each whole), and an owner with a
damaged row in the file (:meth:`~memstream.designs.base.OwnFile.damage`) refused in one line while the
other owners read and write on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from memstream.designs.base import MemoryDesign, OwnFile, refused_change
from memstream.designs.context import Context
from memstream.designs.entries import Entry, Record
from memstream.designs.store.bound import OPTIMISTIC, owner_name
from memstream.designs.store.schema import own_file_path
from memstream.designs.store.store import DesignStore, OwnerKey, damaged, not_stored
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
        #: Owners with a write under way through this handle (stages driven side by side, one per owner).
        self._writing: set[str] = set()
        #: The write holding the store's write lock through this handle's connection (only it releases it).
        self._holder: object | None = None

    def close(self) -> None:
        self.file.close()

    def settle(self) -> None:
        """Nothing to give back: the file keeps its own ids."""

    # -- reading --------------------------------------------------------------------------------

    def _owner(self, owner: str) -> tuple[str, str]:
        """The owner as the store names it, and as the file does."""
        owner = owner_name(owner)
        return owner, self.file.owner_key(owner)

    def _sound(self, owner: str, key: str) -> None:
        """One line naming the owner if a row of its memory in the file is damaged (the others still read):
        its memory is neither used half-read nor written on."""
        problems = self.file.damage(key)
        if problems:
            more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
            raise MemstreamError(damaged(self.file.path, self._key(owner), problems[0] + more))

    def _key(self, owner: str) -> OwnerKey:
        return OwnerKey(self.name, self.scope, owner)

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
        try:
            return self.file.records(key, owner)
        except (KeyError, ValueError, TypeError) as e:
            raise MemstreamError(damaged(self.file.path, self._key(owner), e)) from None

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
        owner, key = self._owner(owner)
        self._sound(owner, key)
        return self.design.context(key, query, now, budget_tokens)

    # -- writing --------------------------------------------------------------------------------

    def remember_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int | None]]:
        """Write ``entries`` for ``owner``; a record id per entry once committed (None for one the gate kept
        out; the first id for one the owner already had)."""
        owner, key = self._owner(owner)
        stored: dict[str, int] = {}
        todo: list[Entry] = []

        def attempt() -> Stage[None]:
            stored.clear()
            stored.update(self.file.known(key, [e.key for e in entries]))
            todo[:] = list({e.key: e for e in entries if e.key not in stored}.values())
            ids = (yield from self.design.remember_stage(key, todo)) if todo else []
            stored.update({e.key: i for e, i in zip(todo, ids, strict=True) if i is not None})

        def kept() -> str:
            held = len(self.file.known(key, [e.key for e in todo])) if todo else 0
            return (f"{held} of its {len(todo)} new entries were kept, each whole (written again, the rest is "
                    "stored once)") if held else "nothing of it was kept"

        yield from self._changing(owner, key, attempt, lambda: [e.key for e in todo], kept)
        return [stored.get(e.key) for e in entries]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        owner, key = self._owner(owner)
        made: list[int] = [0]

        def attempt() -> Stage[None]:
            made[0] = yield from self.design.consolidate_stage(key, now)

        yield from self._changing(owner, key, attempt, list, lambda: "nothing of it was kept")
        return made[0]

    def _changing(self, owner: str, key: str, attempt: Callable[[], Stage[None]],
                  written: Callable[[], Sequence[str]], kept: Callable[[], str]) -> Stage[None]:
        """Run ``attempt`` (a stage changing the owner) and commit what it wrote (``written()``: the keys of the
        entries it wrote), trying again on a conflict (see the module's docstring). A write SQLite refuses (a
        full disk) is one line saying what of it the file kept (``kept()``).

        Several owners' writes may run side by side through one handle (a batched runner drives their stages
        together): a second write for an owner already under way is refused, and so is a write that would
        need the store's write lock while another of this handle's writes holds it (it would wait on it in the
        same thread); neither touches the write under way."""
        self._writable()
        self._not_under_way(owner, key)
        self._sound(owner, key)
        me = object()
        self._writing.add(key)
        try:
            for tries in range(OPTIMISTIC + 1):
                if tries == OPTIMISTIC:
                    self._lock(me)
                try:
                    yield from attempt()
                    if self._holder is not me:
                        self._lock(me)
                    if self.file.commit(key, written()):
                        return
                    self.file.discard()
                except sqlite3.Error as e:  # the file refused a write (a full disk, a medium gone read-only)
                    self.file.discard()
                    raise not_stored(self.file.path, e, kept=kept()) from None
                except BaseException:
                    self.file.discard()
                    raise
                finally:
                    self._release(me)  # the lock only: nothing was written to the design store
        finally:
            self._writing.discard(key)
        # every writer through a store takes its lock to commit: only one writing the file itself gets here
        raise MemstreamError(f"{self.file.path} was written by something other than this store while the write "
                             f"held the store's lock; write to it only through the store ({self.store.path})")

    def _not_under_way(self, owner: str, key: str) -> None:
        if key in self._writing:
            raise MemstreamError(f"a write for {owner!r} is already under way through this handle; write again "
                                 "once it has finished (one write per owner at a time)")

    def _lock(self, me: object) -> None:
        """Take the store's write lock for the write ``me``; one line if another write of this handle has it."""
        if self.store.in_transaction:
            raise MemstreamError(f"{self.store.path}: another write through this handle holds the store's write "
                                 "lock while it waits for its model; write again once it has finished")
        self.store.begin()
        self._holder = me

    def _release(self, me: object) -> None:
        """End the transaction of the write ``me``, if it holds one (never another write's)."""
        if self._holder is me:
            self._holder = None
            self.store.rollback()

    def _writable(self) -> None:
        if self.store.read_only:
            raise MemstreamError(f"{self.store.path} is read-only here; memory can be read, not written")

    # -- forgetting -----------------------------------------------------------------------------

    def change_record(self, owner: str, record_id: int, text: str | None) -> bool:
        """Refused in one line: a design kept in a file of its own builds its memory from its records (the
        stream's reflections, the facts extracted from a turn), so no record of it changes alone."""
        raise MemstreamError(refused_change(self.design, "update" if text is not None else "delete"))

    def forget(self, owner: str) -> int:
        """Remove every trace of ``owner`` from the design's file (its own forget: one transaction, deleted
        bytes overwritten, the write-ahead log emptied) and log the erasure in the store; the rows removed.
        A damaged owner can be forgotten (it is the way out)."""
        self._writable()
        owner, key = self._owner(owner)
        self._not_under_way(owner, key)
        me = object()
        self._lock(me)  # no write of the store commits meanwhile
        try:
            gone = self.file.forget(key)
            self.store.log_erasure(self._key(owner), gone)
            self._holder = None
            self.store.commit()
        except sqlite3.Error as e:
            raise not_stored(self.file.path, e) from None
        finally:
            self._release(me)
        self.store.checkpoint()
        return gone
