"""What a design bound to a store needs of the store's rows, whichever database keeps them.

:class:`Rows` is the one contract between :mod:`.bound` (a design's memory as rows) and a back-end:
:class:`~.store.DesignStore` (one SQLite file) and :class:`~.postgres.PostgresStore` (a PostgreSQL
schema). Both keep the same tables (:mod:`.schema`) with the same meaning: a write of an owner is one
transaction that checks the owner's version before it writes (:meth:`Rows.write_owner` returns None when
another process wrote the owner since it was read), ids come a block at a time from a counter nobody else
draws the same block from, and ``forget`` deletes every row of the owner and logs the erasure. One record is
changed alone (``change_record``: updated in place, or deleted) only for a design that allows it, as one more
write of the owner: its version raised, so every other process reads the owner again before it uses it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from memstream.designs.base import OwnerRows
from memstream.errors import MemstreamError

#: Record ids a process reserves at a time (a crash leaves a gap, never a duplicate).
ID_BLOCK = 256


@dataclass(frozen=True)
class OwnerKey:
    """Whose rows: a design, a scope ("" for none) and an owner (as ``normalise_owner`` made it)."""

    design: str
    scope: str
    owner: str


@dataclass
class Held:
    """What a process holds of one owner: the version it read and how much of its rows the store has."""

    version: int = 0
    records: int = 0
    docs: dict[str, str] = field(default_factory=dict)  # each document's JSON as stored
    logs: dict[str, int] = field(default_factory=dict)

    def holds(self, rows: OwnerRows) -> bool:
        """Whether ``rows`` hold nothing the store lacks (a consolidation that found nothing to do): then
        there is nothing to write, and the owner's version need not move."""
        return (len(rows.records) == self.records
                and all(len(items) == self.logs.get(name, 0) for name, items in rows.logs.items())
                and {name: dumps(value) for name, value in rows.docs.items()} == self.docs)


#: The owner's log (``design_logs``) of its records changed alone: a row per update or delete naming the record,
#: what was done and when, never the text (a deleted record's text is gone from the file itself).
CHANGES = "#changes"


def change_item(record_id: int, text: str | None, at: str) -> dict[str, Any]:
    """The :data:`CHANGES` row of a record updated (``text`` given) or deleted (None) at ``at``."""
    return {"id": record_id, "change": "update" if text is not None else "delete", "at": at}


def held_after_change(held: Held, version: int, text: str | None) -> Held:
    """What a process holds of the owner once it changed one record (``text`` None: deleted it) at ``version``."""
    return Held(version, held.records - (text is None), dict(held.docs),
                {**held.logs, CHANGES: held.logs.get(CHANGES, 0) + 1})


def versions_counter(design: str) -> str:
    """The ``design_counters`` row that hands out owner versions of ``design`` (beside its record ids' row)."""
    return f"{design}#versions"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def digest(owner: str) -> str:
    """How the erasure log names a forgotten owner: whoever knows the name can find the row, nobody can read it."""
    return hashlib.sha256(owner.encode()).hexdigest()


class Rows(Protocol):
    """A design store's rows, read and written (see the module's docstring for what every back-end keeps)."""

    @property
    def path(self) -> str:
        """Where the store is, as messages name it (a file, or a URL without its password)."""

    @property
    def read_only(self) -> bool: ...

    def close(self) -> None: ...

    # -- transactions: begin, then commit or rollback; ``writing`` wraps one, ``reading`` one snapshot --

    def begin(self, key: OwnerKey | None = None) -> None:
        """Open a write transaction that holds the write lock of ``key``'s owner (of the whole store where
        the back-end has one lock) before anything inside reads what it will check."""

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    @property
    def failures(self) -> tuple[type[BaseException], ...]:
        """What a refused write raises (a full disk, a medium gone read-only, a server gone away)."""

    @property
    def in_transaction(self) -> bool: ...

    def refused(self, error: BaseException, *, rollback: bool = True) -> MemstreamError:
        """A write the back-end refused, rolled back (unless the transaction is another write's): the line to raise."""

    def reading(self) -> AbstractContextManager[Any]: ...

    def writing(self) -> AbstractContextManager[Any]: ...

    # -- settings, owners, records --

    def designs(self) -> dict[str, dict[str, Any]]: ...

    def record_settings(self, design: str, config: Mapping[str, Any], *, change: bool = False) -> None: ...

    def owners(self, design: str, scope: str) -> list[str]: ...

    def scopes(self, design: str) -> list[str]: ...

    def version(self, key: OwnerKey) -> int: ...

    def read_owner(self, key: OwnerKey) -> tuple[Held, OwnerRows]: ...

    def known_keys(self, key: OwnerKey, keys: Sequence[str]) -> dict[str, int]: ...

    def entry_keys(self, key: OwnerKey) -> dict[int, str]:
        """Each record id of the owner that came from an entry, with the entry's key."""

    def write_owner(self, key: OwnerKey, rows: OwnerRows, held: Held, keys: Mapping[int, str]) -> Held | None: ...

    def change_record(self, key: OwnerKey, held: Held, record_id: int, text: str | None) -> Held | None:
        """Inside a write transaction (under the owner's lock): the owner's record ``record_id`` given ``text``
        (its id, key, time and origin kept), or deleted (``text`` None: its row removed), the change logged
        (:data:`CHANGES`) and the owner's version raised, so every process reads the owner again; None,
        changing nothing, if another process wrote the owner since ``held`` was read."""

    # -- shared documents, ids --

    def read_shared(self, design: str, scope: str) -> dict[str, tuple[int, Any]]: ...

    def write_shared(self, design: str, scope: str,
                     changed: Mapping[str, tuple[int, Any]]) -> dict[str, int] | None: ...

    def reserve_ids(self, design: str, n: int = ID_BLOCK) -> int: ...

    def peek_id(self, design: str) -> int: ...

    def give_back_ids(self, design: str, start: int, end: int) -> None:
        """Return the unused ids ``start``..``end`` - 1 of a block, if no process reserved after it."""

    # -- forgetting, checking --

    def forget(self, key: OwnerKey) -> int: ...

    def erasures(self) -> list[dict[str, Any]]: ...

    def checkpoint(self) -> None:
        """After a forget: make the deleted rows' space the database's to reuse (what that guarantees is the
        back-end's to say)."""

    def problems(self) -> list[str]: ...
