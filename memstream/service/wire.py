"""What the service answers, as JSON: the response models the HTTP API declares (so its OpenAPI spec says them)
and the client reads back, and how a design's records and contexts become them (the HTTP API and the MCP tools share
them). Pydantic only at run time, so the client needs neither the designs nor FastAPI."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from memstream.designs import Context, Record


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RecordOut(Out):
    """A record as the design keeps it: its id (what a context's provenance names), owner, text and origin."""

    id: int
    owner: str
    text: str
    at: datetime
    source: str
    kind: str
    session: str


class BlockOut(Out):
    """One block of a context: its tier, its text, its tokens and the ids of the records it comes from."""

    tier: str
    text: str
    tokens: int
    ids: list[int]


class ContextOut(Out):
    """What the model would be shown: the blocks in reading order, their text joined, and what was cut."""

    text: str
    tokens: int
    budget: int
    cut: int
    cut_tokens: int
    blocks: list[BlockOut]


class HitOut(Out):
    record: RecordOut
    score: float | None


class SearchOut(Out):
    hits: list[HitOut]


class PageOut(Out):
    records: list[RecordOut]
    page: int
    size: int
    total: int


class AddOut(Out):
    """A record id per entry, in order, once committed (None: kept out by the design's write gate)."""

    ids: list[int | None]


class ForgetOut(Out):
    """The rows removed, per design."""

    removed: dict[str, int]


class OwnersOut(Out):
    owners: list[str]


class HistoryOut(Out):
    versions: list[dict[str, Any]]


class HealthOut(Out):
    ok: bool
    store: str
    designs: list[str]
    read_only: bool
    problem: str
    version: str


class ErrorOut(Out):
    """Every refusal: one line saying what went wrong and how to fix it."""

    detail: str


def record_out(r: Record) -> RecordOut:
    return RecordOut(id=r.id, owner=r.owner, text=r.text, at=r.at, source=r.source, kind=r.kind, session=r.session)


def context_out(c: Context) -> ContextOut:
    return ContextOut(text=c.text, tokens=c.tokens, budget=c.budget, cut=c.cut, cut_tokens=c.cut_tokens,
                      blocks=[BlockOut(tier=b.tier, text=b.text, tokens=b.tokens, ids=list(b.ids)) for b in c.blocks])
