"""The records of a memory stream: a memory, and a memory as recalled with its score.

These are the stream's boundary types (pydantic, frozen): what a caller gets
back and what ``memstream import`` reads. Inside, the stream keeps plain numpy
columns per owner.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memstream.timeutil import require_aware

OBSERVATION = "observation"
REFLECTION = "reflection"
PLAN = "plan"
DIALOGUE = "dialogue"
#: The kinds the paper uses; any other lowercase word is accepted too.
KNOWN_KINDS = (OBSERVATION, REFLECTION, PLAN, DIALOGUE)

MIN_IMPORTANCE = 1
MAX_IMPORTANCE = 10


class Memory(BaseModel):
    """One entry of an agent's stream. Immutable once written."""

    model_config = ConfigDict(frozen=True)

    id: int
    owner: str
    kind: str
    text: str
    created_at: datetime
    last_accessed_at: datetime
    importance: int = Field(ge=MIN_IMPORTANCE, le=MAX_IMPORTANCE)
    cites: tuple[int, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("created_at", "last_accessed_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return require_aware(value)


class Weights(BaseModel):
    """How the three components are combined, and how fast recency decays.

    The defaults are the paper's: every weight 1, decay 0.995 per simulated hour.
    """

    model_config = ConfigDict(frozen=True)

    recency: float = Field(default=1.0, ge=0.0)
    importance: float = Field(default=1.0, ge=0.0)
    relevance: float = Field(default=1.0, ge=0.0)
    decay: float = Field(default=0.995, gt=0.0, le=1.0)


class Recall(BaseModel):
    """A memory as retrieval saw it: the raw and normalised components and the total."""

    model_config = ConfigDict(frozen=True)

    memory: Memory
    rank: int
    score: float
    recency: float
    importance: float
    relevance: float
    raw_recency: float
    raw_importance: float
    raw_relevance: float
    weights: Weights

    def as_row(self) -> dict[str, Any]:
        """A flat JSON-ready dict, the shape ``memstream recall --json`` prints."""
        m = self.memory
        return {
            "rank": self.rank,
            "id": m.id,
            "owner": m.owner,
            "kind": m.kind,
            "text": m.text,
            "created_at": m.created_at.isoformat(),
            "last_accessed_at": m.last_accessed_at.isoformat(),
            "importance_rating": m.importance,
            "cites": list(m.cites),
            "score": self.score,
            "recency": self.recency,
            "importance": self.importance,
            "relevance": self.relevance,
            "raw_recency": self.raw_recency,
            "raw_importance": self.raw_importance,
            "raw_relevance": self.raw_relevance,
            "weights": self.weights.model_dump(),
        }
