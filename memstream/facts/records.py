"""What the facts store holds and is asked to write: plain dataclasses, checked where they are made.

A :class:`NewFact` is a candidate the write path decided to keep; a :class:`Change` says what to do
with it (``new``, ``duplicate`` of, ``update`` of, ``extend`` a target fact); a :class:`Source` is
the message or document chunk it was extracted from (provenance). A :class:`Fact` is a stored row.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from memstream.errors import MemstreamError
from memstream.facts.schema import KINDS
from memstream.timeutil import to_epoch

Action = Literal["new", "duplicate", "update", "extend"]
ACTIONS: tuple[Action, ...] = ("new", "duplicate", "update", "extend")
#: The longest fact text kept (an atomic fact is a sentence or two, not a document).
MAX_FACT_CHARS = 2000


def normalised(text: str) -> str:
    """A fact's text as its hash reads it: NFC, case folded, runs of whitespace as one space."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def content_hash(tenant: str, owner: str, text: str) -> str:
    """The scoped idempotency key: the same text for the same owner (and tenant) is the same fact."""
    return hashlib.sha256("\x1f".join((tenant, owner, normalised(text))).encode()).hexdigest()


def aware(at: datetime, what: str) -> datetime:
    if not isinstance(at, datetime) or at.tzinfo is None or at.utcoffset() is None:
        raise MemstreamError(f"{what} needs a time with a zone, e.g. 2026-05-01T09:00+00:00")
    return at


def clean_text(text: str, what: str = "a fact") -> str:
    text = " ".join(str(text).split())
    if not text:
        raise MemstreamError(f"{what} is empty; give its text")
    if len(text) > MAX_FACT_CHARS:
        raise MemstreamError(f"{what} is {len(text)} characters; an atomic fact is at most {MAX_FACT_CHARS}")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co") for c in text):
        raise MemstreamError(f"{what} holds control or invisible characters; remove them")
    return text


@dataclass(frozen=True)
class NewFact:
    text: str
    kind: str = "fact"
    salience: float = 0.5
    confidence: float = 1.0
    entities: tuple[str, ...] = ()
    event_at: str | None = None        # a real-world date the fact is about, as said ("2023-05-08")
    expires_at: datetime | None = None
    valid_from: datetime | None = None  # default: when it is written

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", clean_text(self.text))
        if self.kind not in KINDS:
            raise MemstreamError(f"unknown fact kind {self.kind!r}; use one of {', '.join(KINDS)}")
        for name in ("salience", "confidence"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
                raise MemstreamError(f"a fact's {name} must be between 0 and 1, got {value!r}")
        for name in ("expires_at", "valid_from"):
            if getattr(self, name) is not None:
                aware(getattr(self, name), name)
        names = tuple(dict.fromkeys(" ".join(e.split()) for e in self.entities if str(e).strip()))
        object.__setattr__(self, "entities", names)


@dataclass(frozen=True)
class Change:
    action: Action
    fact: NewFact
    target: int | None = None  # the fact it duplicates, updates or extends

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise MemstreamError(f"unknown change {self.action!r}; use one of {', '.join(ACTIONS)}")
        if self.action != "new" and self.target is None:
            raise MemstreamError(f"a {self.action} names the fact it is about")


@dataclass(frozen=True)
class Source:
    """Where facts come from: a message or a document chunk, by a key unique for its owner."""

    key: str
    text: str
    at: datetime

    def __post_init__(self) -> None:
        if not str(self.key).strip():
            raise MemstreamError("a source needs a key (a message id, a document chunk id)")
        aware(self.at, "a source's time")


@dataclass(frozen=True)
class Fact:
    id: int
    tenant: str
    owner: str
    text: str
    kind: str
    salience: float
    confidence: float
    event_at: str | None
    created_s: float
    valid_from_s: float
    valid_to_s: float | None
    expires_s: float | None
    deleted_s: float | None
    deleted_why: str | None
    is_latest: bool
    recalls: int
    sources: tuple[int, ...] = ()
    entities: tuple[str, ...] = ()

    @property
    def current(self) -> bool:
        return self.is_latest and self.deleted_s is None

    def to_dict(self) -> dict[str, object]:
        def iso(s: float | None) -> str | None:
            return None if s is None else datetime.fromtimestamp(s, UTC).isoformat()

        return {"id": self.id, "owner": self.owner, "tenant": self.tenant, "text": self.text, "kind": self.kind,
                "salience": self.salience, "confidence": self.confidence, "event_at": self.event_at,
                "created_at": iso(self.created_s), "valid_from": iso(self.valid_from_s),
                "valid_to": iso(self.valid_to_s), "expires_at": iso(self.expires_s),
                "deleted_at": iso(self.deleted_s), "deleted_why": self.deleted_why, "is_latest": self.is_latest,
                "recalls": self.recalls, "sources": list(self.sources), "entities": list(self.entities)}


FACT_COLUMNS = ("id, tenant, owner, text, kind, salience, confidence, event_at, created_s, valid_from_s, valid_to_s, "
                "expires_s, deleted_s, deleted_why, is_latest, recalls")


#: A row of ``FACT_COLUMNS``, as SQLite returns it (``is_latest`` a 0 or 1).
FactRow = tuple[int, str, str, str, str, float, float, str | None, float, float, float | None, float | None,
                float | None, str | None, int, int]


def fact_of(row: FactRow, sources: tuple[int, ...] = (), entities: tuple[str, ...] = ()) -> Fact:
    return Fact(*row[:14], bool(row[14]), int(row[15]), sources, entities)


@dataclass(frozen=True)
class Applied:
    """What a change did: the fact it left current, whether a row was written, and what it closed."""

    action: Action
    fact_id: int
    written: bool
    closed: int | None = None  # the version an update superseded


@dataclass
class Hit:
    """A fact a read found: its score and how (the lists it ranked in, or the edge it came through)."""

    fact: Fact
    score: float
    via: list[str] = field(default_factory=list)
    similarity: float = 0.0  # the dense cosine with the query


def epoch(at: datetime | None) -> float | None:
    return None if at is None else to_epoch(at)
