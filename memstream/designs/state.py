"""What a design's state file holds, as typed records: validated when read, so a damaged file is refused in one
line rather than misread.

Every design's state is a :class:`DesignState` (pydantic, read from and written to JSON by
:mod:`memstream.designs.persist`); inside, a design keeps plain dataclasses (``Record``, ``Summary``,
``MemoryBlock`` ...) and converts at this boundary. State is kept per owner (``owners``: one typed
record per owner, holding that owner's records, summary, blocks or versions), with only what is
shared across owners (the next record id, blocks attached to several owners) beside it: an owner's
memory can be read, written or forgotten without the others'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from memstream.designs.entries import Record
from memstream.designs.summary import Summary


def _moment(value: object) -> object:
    """An ISO-8601 text as the aware datetime ``datetime.fromisoformat`` reads (as the first format did)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime) and (value.tzinfo is None or value.utcoffset() is None):
        raise ValueError("a time without a time zone")
    return value


#: A time in a state file: ISO-8601 with its offset, read back to the same datetime.
Moment = Annotated[datetime, BeforeValidator(_moment), PlainSerializer(datetime.isoformat, return_type=str)]


class Saved(BaseModel):
    """A record of a state file: no field it does not know, never changed once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DesignState(Saved):
    """Everything a design knows (each design's state extends this)."""


class SavedRecord(Saved):
    """One record (an entry as a design keeps it); its owner is the owner it is kept under."""

    id: int = Field(ge=1)
    text: str
    at: Moment
    source: str
    kind: str
    session: str

    @classmethod
    def of(cls, r: Record) -> SavedRecord:
        return cls(id=r.id, text=r.text, at=r.at, source=r.source, kind=r.kind, session=r.session)

    def record(self, owner: str) -> Record:
        return Record(self.id, owner, self.text, self.at, self.source, self.kind, self.session)


class SavedSummary(Saved):
    """A recursive summary: its text, the records it absorbed, those waiting (by id), those passed over."""

    text: str = ""
    covers: list[int] = Field(default_factory=list)
    pending: list[int] = Field(default_factory=list)
    calls: int = Field(default=0, ge=0)
    skipped: list[int] = Field(default_factory=list)

    @classmethod
    def of(cls, s: Summary) -> SavedSummary:
        return cls(text=s.text, covers=list(s.covers), pending=[r.id for r in s.pending], calls=s.calls,
                   skipped=list(s.skipped))

    def summary(self, records: Mapping[int, Record]) -> Summary:
        """The summary, its pending records found among ``records`` (by id)."""
        return Summary(self.text, list(self.covers), [records[i] for i in self.pending], self.calls,
                       list(self.skipped))


class OwnerRecords(Saved):
    """An owner's records, in the order they were written."""

    records: list[SavedRecord] = Field(default_factory=list)


class SummarisedOwner(OwnerRecords):
    """An owner's records and the recursive summary of those that left the window."""

    summary: SavedSummary = Field(default_factory=SavedSummary)


class LogState(DesignState):
    """The state of a design that keeps only its record log (``full``, ``vector``): each owner's records."""

    next_id: int = Field(default=1, ge=1)
    owners: dict[str, OwnerRecords] = Field(default_factory=dict)


class SummarisedState(DesignState):
    """The state of ``buffer-summary``: each owner's records and summary."""

    next_id: int = Field(default=1, ge=1)
    owners: dict[str, SummarisedOwner] = Field(default_factory=dict)


def saved_records(records: Iterable[Record]) -> list[SavedRecord]:
    return [SavedRecord.of(r) for r in records]


def records_of(owners: Mapping[str, OwnerRecords]) -> dict[str, list[Record]]:
    """Each owner's records as the design keeps them."""
    return {owner: [r.record(owner) for r in saved.records] for owner, saved in owners.items()}
