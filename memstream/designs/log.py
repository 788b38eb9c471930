"""The record log: every entry a design was given, per owner, in the order written, with ids.

The designs that keep the history themselves (``full``, ``buffer-summary``, ``vector``,
``tiered``) hold one; ids increase across owners, so provenance never confuses two owners.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memstream.designs.context import Line
from memstream.designs.entries import Entry, Record, stamp_of
from memstream.models import count_tokens
from memstream.stream import normalise_owner
from memstream.timeutil import to_epoch


class RecordLog:
    def __init__(self) -> None:
        self.by_owner: dict[str, list[Record]] = {}
        self.lines: dict[str, list[Line]] = {}  # each record's line, made once
        self.next_id = 1

    def append(self, owner: str, entries: Sequence[Entry]) -> list[Record]:
        owner = normalise_owner(owner)
        mine = self.by_owner.setdefault(owner, [])
        lines = self.lines.setdefault(owner, [])
        made = []
        for e in entries:
            record = Record(self.next_id, owner, e.text, e.at, e.source, e.kind, e.session)
            self.next_id += 1
            mine.append(record)
            lines.append(line_of(record))
            made.append(record)
        return made

    def records(self, owner: str) -> list[Record]:
        return self.by_owner.get(normalise_owner(owner), [])

    def lines_of(self, owner: str) -> list[Line]:
        return self.lines.get(normalise_owner(owner), [])

    def get_state(self) -> dict[str, Any]:
        return {"next_id": self.next_id,
                "records": [r.to_dict() for mine in self.by_owner.values() for r in mine]}

    def set_state(self, state: dict[str, Any]) -> None:
        self.__init__()
        for d in sorted(state["records"], key=lambda d: d["id"]):
            record = Record.from_dict(d)
            self.by_owner.setdefault(record.owner, []).append(record)
            self.lines.setdefault(record.owner, []).append(line_of(record))
        self.next_id = int(state["next_id"])


def line_of(record: Record) -> Line:
    """A record as a context shows it: its text verbatim, under its stamp."""
    return stamped(record.text, (record.id,), record.at)


def stamped(text: str, ids: tuple[int, ...], at: datetime) -> Line:
    group = stamp_of(at)
    return Line(text, count_tokens(text), ids, to_epoch(at), group, count_tokens(group))
