"""The records of a memory stream: a memory, the retrieval weights, and a memory as recalled.

Weights are a pydantic model (they come from users and the command line);
memories and recalls are named tuples: immutable, typed, and built in bulk on the
retrieval path, where a frozen dataclass cost five times as much to make (its
``__init__`` sets each field through ``object.__setattr__``) and was a third of a
small retrieval's time.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, NamedTuple, TypedDict

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from memstream.files import JsonObject

OBSERVATION = "observation"
REFLECTION = "reflection"
PLAN = "plan"
DIALOGUE = "dialogue"
#: What an agent thinks to itself that is not a reflection: a memo on a conversation, a planning
#: thought, the morning's revision of its situation (the reference implementation's "thought" nodes).
THOUGHT = "thought"
#: The kinds the paper uses; any other lowercase word is accepted too.
KNOWN_KINDS = (OBSERVATION, REFLECTION, PLAN, DIALOGUE, THOUGHT)

MIN_IMPORTANCE = 1
MAX_IMPORTANCE = 10
#: Largest id a citation may name (SQLite's integers are 64-bit).
MAX_ID = 2**63 - 1
#: Unicode categories no owner name may hold: controls, invisible formatting (zero-width space,
#: bidi marks), surrogates, private use, unassigned, line and paragraph separators.
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def normalise_owner(name: str) -> str:
    """An owner's name as stored and looked up: Unicode NFC, surrounding whitespace stripped.

    So "josé" typed either way (NFC or NFD) or with a stray trailing space is one owner; a name
    with control or invisible characters (which print like another name) is refused.
    """
    if not isinstance(name, str):
        raise ValueError(f"an owner's name must be text, not {type(name).__name__}")
    clean = unicodedata.normalize("NFC", name).strip()
    if not clean:
        raise ValueError("the owner's name is empty")
    hidden = [c for c in clean if unicodedata.category(c) in HIDDEN]
    if hidden:
        raise ValueError(f"the owner's name {clean!r} holds invisible or control characters "
                         f"({', '.join(repr(c) for c in hidden[:3])}); write the name in plain letters")
    return clean


def check_text(text: str) -> str:
    """A memory's text: not blank, and storable (no NUL, no lone surrogate)."""
    if not text.strip():
        raise ValueError("text is empty")
    if "\x00" in text:
        raise ValueError("text holds a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text holds a lone surrogate (not valid Unicode); fix its encoding") from None
    return text


#: A memory's text as a pydantic field: checked by :func:`check_text`.
MemoryText = Annotated[str, AfterValidator(check_text)]


class ReadOnlyDict(dict):
    """A dict that refuses changes: a memory's metadata (and the objects nested in it).

    Memories are immutable once written, and the stream hands the same :class:`Memory`
    to every read of it, so its metadata must not change under another reader. Still a
    ``dict`` to everything that reads one (``json``, pydantic, ``==``), and picklable.
    """

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> None:
        raise TypeError("a memory's metadata is read-only (memories are immutable once written); copy it with dict()")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type, tuple[JsonObject]]:
        return (ReadOnlyDict, (dict(self),))


#: A memory with no metadata shares this empty one.
NO_METADATA: Mapping[str, Any] = ReadOnlyDict()


class MemoryRecord(TypedDict):
    """A :class:`Memory` as JSON data (``memstream inspect --json``, provenance): dumped as is."""

    id: int
    owner: str
    kind: str
    text: str
    created_at: str
    last_accessed_at: str
    importance: int
    cites: list[int]
    metadata: JsonObject  # what the writer attached, free-form


class RecallRow(TypedDict):
    """A :class:`Recall` flattened, the shape ``memstream recall --json`` prints."""

    rank: int
    id: int
    owner: str
    kind: str
    text: str
    created_at: str
    last_accessed_at: str
    importance_rating: int
    cites: list[int]
    score: float
    recency: float
    importance: float
    relevance: float
    raw_recency: float
    raw_importance: float
    raw_relevance: float
    time: float
    weights: dict[str, float]


class Memory(NamedTuple):
    """One entry of an agent's stream, as read back. Immutable once written.

    A plain record: memories are validated on the way in (:class:`NewMemory`)
    and retrieval builds many of these on its hot path.
    """

    id: int
    owner: str
    kind: str
    text: str
    created_at: datetime
    last_accessed_at: datetime
    importance: int
    cites: tuple[int, ...] = ()
    metadata: Mapping[str, Any] = NO_METADATA

    def to_dict(self) -> MemoryRecord:
        """JSON-ready fields (times as ISO-8601 strings)."""
        return {"id": self.id, "owner": self.owner, "kind": self.kind, "text": self.text,
                "created_at": self.created_at.isoformat(),
                "last_accessed_at": self.last_accessed_at.isoformat(),
                "importance": self.importance, "cites": list(self.cites), "metadata": dict(self.metadata)}


class Weights(BaseModel):
    """How the components are combined, and how fast recency decays.

    The defaults are the paper's: recency, importance and relevance weighted 1, decay
    0.995 per simulated hour. ``time`` is memstream's addition, off by default: it is
    added to a memory created inside the span of time the query names ("yesterday",
    "two weeks ago", "in May 2023"; see :mod:`memstream.stream.timescope`). ``bm25`` weighs
    keyed BM25, the fourth component of the ``generative+bm25`` retriever that ``memstream eval``
    and the ``tiered`` design rank with (``memstream.designs.retrievers``); the stream's own score
    has no BM25 term, so it never reads it. One weight type for every ranking memstream makes.
    """

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    recency: float = Field(default=1.0, ge=0.0, le=1e6)
    importance: float = Field(default=1.0, ge=0.0, le=1e6)
    relevance: float = Field(default=1.0, ge=0.0, le=1e6)
    decay: float = Field(default=0.995, gt=0.0, le=1.0)
    time: float = Field(default=0.0, ge=0.0, le=1e6)
    bm25: float = Field(default=1.0, ge=0.0, le=1e6)


class Recall(NamedTuple):
    """A memory as retrieval saw it: the raw and normalised components and the total."""

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
    time: float = 0.0  # 1 if the memory was created inside the span the query names

    def as_row(self) -> RecallRow:
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
            "time": self.time,
            "weights": self.weights.model_dump(),
        }
