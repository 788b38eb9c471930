"""What a design is given to remember (an :class:`Entry`) and what it keeps of it (a :class:`Record`).

An entry is a turn of a conversation, an observation or a tool result, with its time and its
source (the speaker, the tool, the sensor). Entries arrive from users and datasets, so they are
validated (pydantic); records are the design's own, plain dataclasses, each with an id that
provenance names.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memstream.errors import MemstreamError
from memstream.stream import MemoryText, check_text

#: What an entry is. ``pinned`` entries (a profile, standing instructions) are always in a tiered context.
Kind = Literal["turn", "observation", "tool", "pinned"]


class Entry(BaseModel):
    """One thing to remember: its text, when it happened, where it came from, and its session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: MemoryText
    at: datetime
    source: str = "user"
    kind: Kind = "turn"
    session: str = ""
    #: The entry's own id, if its writer gives one: the same id written again for the same owner is
    #: stored once (a retried write). Without one, the entry is known by its time, source, kind and text.
    id: str | None = Field(default=None, min_length=1, max_length=200)

    @property
    def key(self) -> str:
        """What makes this entry the same entry when written again (its id, else a digest of what it says)."""
        if self.id is not None:
            return f"id:{self.id}"
        said = json.dumps([self.at.isoformat(), self.source, self.kind, self.session, self.text])
        return "sha256:" + hashlib.sha256(said.encode()).hexdigest()[:32]

    @field_validator("source", "session", "id")
    @classmethod
    def _storable(cls, value: str | None) -> str | None:
        """Text a store can hold: no NUL, no lone surrogate (SQLite refuses to encode one, mid-write)."""
        if value is not None:
            if "\x00" in value:
                raise ValueError("holds a NUL character")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("holds a lone surrogate (not valid Unicode); fix its encoding") from None
        return value

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("at has no time zone; add one, e.g. +00:00")
        return value


def entry(**fields: Any) -> Entry:
    """An entry from its fields, with a one-line error naming the problem."""
    try:
        return Entry(**fields)
    except ValidationError as e:
        first = e.errors()[0]
        raise MemstreamError(f"bad entry: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def record_text(text: str) -> str:
    """A record's new text, checked as an entry's is (not blank, storable); one line if it is not."""
    if not isinstance(text, str):
        raise MemstreamError(f"a record's text is text, got {type(text).__name__}")
    try:
        return check_text(text)
    except ValueError as e:
        raise MemstreamError(f"a record's new text cannot be used: {e}") from None



@dataclass(frozen=True)
class Record:
    """An entry as a design keeps it: with its id, its owner and the line a context shows."""

    id: int
    owner: str
    text: str
    at: datetime
    source: str
    kind: str
    session: str

    @property
    def stamp(self) -> str:
        """The heading a record is shown under in a context: when it was said."""
        return stamp_of(self.at)

    @property
    def line(self) -> str:
        """How the record reads on its own (in a prompt to summarise it): its stamp, then its text."""
        return f"{self.stamp} {self.text}"


def stamp_of(at: datetime) -> str:
    return f"[{at:%d %B %Y %H:%M}]"
