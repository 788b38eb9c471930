"""The record log: every entry a design was given, per owner, in the order written, with ids.

The designs that keep the history themselves (``full``, ``buffer-summary``, ``vector``,
``tiered``) hold one; ids increase across owners, so provenance never confuses two owners.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import ClassVar

from memstream.designs.base import OwnerRows
from memstream.designs.context import Line
from memstream.designs.entries import Entry, Record, stamp_of
from memstream.designs.ids import Counter, IdSource
from memstream.designs.state import OwnerRecords, saved_records
from memstream.models import count_tokens
from memstream.stream import normalise_owner
from memstream.timeutil import to_epoch


class RecordLog:
    def __init__(self) -> None:
        self.by_owner: dict[str, list[Record]] = {}
        self.lines: dict[str, list[Line]] = {}  # each record's line, made once
        self.ids: IdSource = Counter()

    @property
    def next_id(self) -> int:
        return self.ids.next_id

    def append(self, owner: str, entries: Sequence[Entry]) -> list[Record]:
        owner = normalise_owner(owner)
        mine = self.by_owner.setdefault(owner, [])
        lines = self.lines.setdefault(owner, [])
        made = []
        for e in entries:
            record = Record(self.ids.take(), owner, e.text, e.at, e.source, e.kind, e.session)
            mine.append(record)
            lines.append(line_of(record))
            made.append(record)
        return made

    def records(self, owner: str) -> list[Record]:
        return self.by_owner.get(normalise_owner(owner), [])

    def lines_of(self, owner: str) -> list[Line]:
        return self.lines.get(normalise_owner(owner), [])

    def owners(self) -> list[str]:
        """Every owner with a record, in the order each was first written for."""
        return list(self.by_owner)

    def by_id(self) -> dict[int, Record]:
        """Every owner's records by id."""
        return {r.id: r for mine in self.by_owner.values() for r in mine}

    def saved(self) -> dict[str, OwnerRecords]:
        """Each owner's records, as its state file keeps them."""
        return {owner: OwnerRecords(records=saved_records(mine)) for owner, mine in self.by_owner.items()}

    def restore(self, next_id: int, owners: Mapping[str, Sequence[Record]]) -> None:
        """Hold exactly ``owners``' records (each owner's in id order) and go on from ``next_id``."""
        self.by_owner, self.lines = {}, {}
        for owner, records in owners.items():
            if records:
                mine = self.by_owner[owner] = sorted(records, key=lambda r: r.id)
                self.lines[owner] = [line_of(r) for r in mine]
        self.ids = Counter(next_id)

    def hold(self, owner: str, records: Sequence[Record]) -> None:
        """Hold exactly ``records`` for ``owner`` (in the order given: the order they were written)."""
        self.drop(owner)
        if records:
            self.by_owner[owner] = list(records)
            self.lines[owner] = [line_of(r) for r in records]

    def drop(self, owner: str) -> None:
        self.by_owner.pop(owner, None)
        self.lines.pop(owner, None)

    def change(self, owner: str, record_id: int, text: str | None) -> int:
        """Hold the owner's record ``record_id`` with ``text`` (its id, time and origin kept), or no more
        (``text`` None); where it was in the owner's records (KeyError if the owner has none of that id)."""
        owner = normalise_owner(owner)
        mine = self.by_owner.get(owner, [])
        at = next((i for i, r in enumerate(mine) if r.id == record_id), None)
        if at is None:
            raise KeyError(record_id)
        if text is None:
            del mine[at], self.lines[owner][at]
            if not mine:
                self.drop(owner)
        else:
            mine[at] = replace(mine[at], text=text)
            self.lines[owner][at] = line_of(mine[at])
        return at


class LogRows:
    """How a design that keeps its records in a :class:`RecordLog` (``self.log``) is kept in a store: its
    records are its rows; a design that keeps more extends these."""

    log: RecordLog

    def owner_rows(self, owner: str) -> OwnerRows:
        return OwnerRows(self.log.records(owner))

    def load_owner(self, owner: str, rows: OwnerRows) -> None:
        self.log.hold(owner, rows.records)

    def drop_owner(self, owner: str) -> None:
        self.log.drop(owner)

    def use_ids(self, ids: IdSource) -> None:
        self.log.ids = ids


class ChangeableLog(LogRows):
    """A design whose memory is its record log and nothing built from it (``full``, ``vector``, ``recent``): one
    record may be updated or deleted alone (:attr:`~memstream.designs.MemoryDesign.changes_records`)."""

    changes_records: ClassVar[bool] = True

    def change_record(self, owner: str, record_id: int, text: str | None) -> None:
        self.log.change(owner, record_id, text)


def line_of(record: Record) -> Line:
    """A record as a context shows it: its text verbatim, under its stamp."""
    return stamped(record.text, (record.id,), record.at)


def stamped(text: str, ids: tuple[int, ...], at: datetime) -> Line:
    group = stamp_of(at)
    return Line(text, count_tokens(text), ids, to_epoch(at), group, count_tokens(group))
