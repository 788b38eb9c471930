"""What many tests share that is not a fixture: the clock they start on, where the repository and its data
are, and readers of what a run wrote. Imported as ``tests.helpers`` (pytest runs from the repository root)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from memstream.eval import Models
from memstream.models import HashEmbedder, Message, OfflineChatModel, prompt_of

#: The repository's root, its recorded answers (tests/fixtures) and the benchmarks' dev halves beside it.
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DATA = ROOT.parent / "shared" / "data"
LOCOMO_DEV = DATA / "locomo" / "locomo-dev.json"
LONGMEMEVAL_DEV = DATA / "longmemeval" / "longmemeval-s-dev.json"

Test = TypeVar("Test")


def needs_data(test: Test) -> Test:
    """Marks a test that reads the dev halves in ../shared/data (``real_data``), skipped where they are not."""
    here = LOCOMO_DEV.exists() and LONGMEMEVAL_DEV.exists()
    return pytest.mark.real_data(pytest.mark.skipif(not here, reason="../shared/data is not here")(test))

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def hours(h: float) -> datetime:
    return T0 + timedelta(hours=h)


def contents(run: Path) -> tuple[str, list, list]:
    """What a run wrote: its event log, and every row of its stream's memories and accesses."""
    with closing(sqlite3.connect(run / "streams.db")) as db:
        memories = db.execute("SELECT id, owner, kind, text, created_at, importance, cites, metadata, embedding "
                              "FROM memories ORDER BY id").fetchall()
        accesses = db.execute("SELECT memory_id, accessed_at FROM accesses ORDER BY rowid").fetchall()
    return (run / "events.jsonl").read_text(), memories, accesses


def statements(messages: list[Message]) -> dict[int, str]:
    """The numbered statements of an insights prompt."""
    out = {}
    for line in prompt_of(messages).splitlines():
        head, _, rest = line.partition(". ")
        if head.isdigit():
            out[int(head)] = rest
    return out


def tiny_locomo(tmp_path: Path) -> Path:
    """A LoCoMo file of one conversation (three sessions of six turns, three questions), written in ``tmp_path``."""
    said = ["I adopted a grey cat called Pixel last week.", "Nice! I started pottery classes on Tuesdays.",
            "My sister moved to Lisbon in March.", "I ran the charity race and finished in 51 minutes."]
    sessions = {}
    for s in range(1, 4):
        sessions[f"session_{s}_date_time"] = f"1:56 pm on {s + 7} May, 2023"
        sessions[f"session_{s}"] = [{"speaker": ("Ann", "Bob")[t % 2], "dia_id": f"D{s}:{t + 1}",
                                     "text": f"{said[(s + t) % 4]} (session {s}, turn {t + 1})"} for t in range(6)]
    qa = [{"question": "What is the name of Ann's grey cat?", "answer": "Pixel", "evidence": ["D1:4"], "category": 4},
          {"question": "Where did the sister move?", "answer": "Lisbon", "evidence": ["D3:6"], "category": 1},
          {"question": "How fast was the charity race?", "answer": "51 minutes", "evidence": ["D2:2", "D3:1"],
           "category": 2}]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "c1", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
                                                                     **sessions}, "qa": qa}]))
    return path


def offline_models() -> Models:
    """The offline stand-ins for every role of an eval, with a small hash embedder."""
    chat = OfflineChatModel()
    return Models(chat, chat, chat, HashEmbedder(64))
