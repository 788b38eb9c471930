"""The memory stream: append-only memories, scored retrieval on FAISS, persisted in SQLite."""

from memstream.stream import offline as _offline_rules  # noqa: F401 - registers the importance rule
from memstream.stream.damage import unreadable_time_sql
from memstream.stream.importance import (
    FALLBACK_IMPORTANCE,
    add_rated,
    importance_stage,
    parse_importance,
    rate_importance,
    rated,
)
from memstream.stream.jsonl import import_items, import_jsonl, read_jsonl
from memstream.stream.memory import (
    DIALOGUE,
    HIDDEN,
    MAX_IMPORTANCE,
    MIN_IMPORTANCE,
    OBSERVATION,
    PLAN,
    REFLECTION,
    THOUGHT,
    Memory,
    MemoryRecord,
    MemoryText,
    Recall,
    Weights,
    normalise_owner,
)
from memstream.stream.offline import rate_poignancy
from memstream.stream.scoring import minmax, recency, top_k
from memstream.stream.store import StreamMark, check_file, copy_stream, reflected_key, rewind_stream
from memstream.stream.stream import MemoryStream, NewMemory, new_memory
from memstream.stream.timescope import TimeScope, time_scope

__all__ = [
    "DIALOGUE", "FALLBACK_IMPORTANCE", "HIDDEN", "MAX_IMPORTANCE", "MIN_IMPORTANCE", "OBSERVATION", "PLAN",
    "REFLECTION",
    "THOUGHT", "Memory", "MemoryRecord", "MemoryStream", "MemoryText", "NewMemory", "Recall", "StreamMark", "TimeScope",
    "Weights", "add_rated", "check_file", "copy_stream", "import_items", "import_jsonl", "importance_stage", "minmax",
    "new_memory", "normalise_owner", "parse_importance", "rate_importance", "rate_poignancy", "rated", "read_jsonl",
    "recency", "reflected_key", "rewind_stream", "time_scope", "top_k", "unreadable_time_sql",
]
