from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstream.models import HashEmbedder, OfflineChatModel
from memstream.stream import MemoryStream

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)

# Tests answer from scripted servers that count requests: the structured-output probe
# (memstream.models.probe) stays off unless a test asks for it, whatever the shell exports.
os.environ["MEMSTREAM_STRUCTURED"] = "json_schema"


def hours(h: float) -> datetime:
    return T0 + timedelta(hours=h)


@pytest.fixture
def chat() -> OfflineChatModel:
    """The offline stand-in, fresh per test (its usage counts start at zero)."""
    return OfflineChatModel()


@pytest.fixture
def stream() -> MemoryStream:
    s = MemoryStream(":memory:", HashEmbedder(64))
    yield s
    s.close()


def contents(run: Path) -> tuple[str, list, list]:
    """What a run wrote: its event log, and every row of its stream's memories and accesses."""
    with closing(sqlite3.connect(run / "streams.db")) as db:
        memories = db.execute("SELECT id, owner, kind, text, created_at, importance, cites, metadata, embedding "
                              "FROM memories ORDER BY id").fetchall()
        accesses = db.execute("SELECT memory_id, accessed_at FROM accesses ORDER BY rowid").fetchall()
    return (run / "events.jsonl").read_text(), memories, accesses
