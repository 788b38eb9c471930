"""A checkpoint's state written only where it changed: its larger parts kept once each, by their content.

An agent's state is mostly what changes slowly or not at all from one simulated hour to the next: the day's plan
(its hourly blocks, decomposed as the day goes: a block never changes once made), the places it has seen, when it
last talked with whom. Written whole into every checkpoint, it grew through the day with the plan, and a
checkpoint's cost with it. So a checkpoint's ``state.json`` keeps each agent's own keys, and in place of every
list or object (at any depth under them) whose JSON is at least :data:`PART_BYTES` long a reference
``{"$part": KEY}``: KEY the hash of its JSON (its own parts referred to the same way), held once in the run's
``checkpoint/parts.db``. A checkpoint writes the parts no checkpoint wrote before, which is what changed.

A part is written (and committed) before the state that refers to it, so a kill at any point leaves every
checkpoint whole; parts no checkpoint refers to any more are removed when a kept checkpoint is written
(:meth:`Parts.keep_only`). A ``state.json`` with no references (written before the parts) reads as it is.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

#: A list or object whose JSON is this long or longer is kept as a part.
PART_BYTES = 128
#: The key of a reference to a part.
REF = "$part"
_SCHEMA = "CREATE TABLE IF NOT EXISTS parts(key TEXT PRIMARY KEY, json TEXT NOT NULL) WITHOUT ROWID"


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _ref_of(value: Any) -> str | None:
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(REF), str):
        return value[REF]
    return None


class Parts:
    """The parts of a run's checkpoints (``checkpoint/parts.db``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def split(self, agents: list[Any]) -> tuple[list[Any], int]:
        """``agents`` (each an agent's state) with their larger values put in parts, and the bytes of the
        parts that were not there before (written in one transaction)."""
        new: dict[str, str] = {}
        out = [{k: _split(v, new) for k, v in a.items()} if isinstance(a, dict) else a for a in agents]
        if not new:
            return out, 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path)) as db, db:
            db.execute(_SCHEMA)
            known = set(_existing(db, list(new)))
            fresh = [(k, t) for k, t in new.items() if k not in known]
            db.executemany("INSERT OR IGNORE INTO parts VALUES (?, ?)", fresh)
        return out, sum(len(t.encode("utf-8")) for _, t in fresh)

    def join(self, value: Any) -> Any:
        """``value`` with every reference to a part replaced by the part (ValueError if one is missing)."""
        if not _has_ref(value):
            return value
        if not self.path.is_file():
            raise ValueError(f"it refers to parts, and there is no {self.path.name}")
        with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)) as db:
            cache: dict[str, Any] = {}
            return _join(value, db, cache)

    def keep_only(self, states: Iterable[Any]) -> None:
        """Remove every part that none of ``states`` (as written: with their references) refers to."""
        if not self.path.is_file():
            return
        with closing(sqlite3.connect(self.path)) as db, db:
            db.execute(_SCHEMA)
            wanted: set[str] = set()
            todo = [k for s in states for k in _refs(s)]
            while todo:
                fresh = [k for k in dict.fromkeys(todo) if k not in wanted]
                wanted.update(fresh)
                todo = [r for k, text in _existing_texts(db, fresh) for r in _refs(json.loads(text))]
            db.execute("CREATE TEMP TABLE wanted(key TEXT PRIMARY KEY) WITHOUT ROWID")
            db.executemany("INSERT INTO wanted VALUES (?)", ((k,) for k in wanted))
            db.execute("DELETE FROM parts WHERE key NOT IN (SELECT key FROM wanted)")


def _split(value: Any, new: dict[str, str]) -> Any:
    """``value`` with its larger lists and objects (its own first) replaced by references, their JSON in ``new``."""
    if isinstance(value, dict):
        value = {k: _split(v, new) for k, v in value.items()}
    elif isinstance(value, list):
        value = [_split(v, new) for v in value]
    else:
        return value
    text = _text(value)
    if len(text) < PART_BYTES:
        return value
    key = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
    new[key] = text
    return {REF: key}


def _join(value: Any, db: sqlite3.Connection, cache: dict[str, Any]) -> Any:
    key = _ref_of(value)
    if key is not None:
        if key not in cache:
            row = db.execute("SELECT json FROM parts WHERE key=?", (key,)).fetchone()
            if row is None:
                raise ValueError(f"its part {key[:12]} is missing")
            cache[key] = _join(json.loads(row[0]), db, cache)
        return cache[key]
    if isinstance(value, dict):
        return {k: _join(v, db, cache) for k, v in value.items()}
    if isinstance(value, list):
        return [_join(v, db, cache) for v in value]
    return value


def _refs(value: Any) -> list[str]:
    key = _ref_of(value)
    if key is not None:
        return [key]
    if isinstance(value, dict):
        return [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def _has_ref(value: Any) -> bool:
    return bool(_refs(value))


def _existing(db: sqlite3.Connection, keys: list[str]) -> list[str]:
    return [k for k, _ in _existing_texts(db, keys, texts=False)]


def _existing_texts(db: sqlite3.Connection, keys: list[str], *, texts: bool = True) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    column = "json" if texts else "''"
    for at in range(0, len(keys), 500):
        chunk = keys[at:at + 500]
        found += db.execute(f"SELECT key, {column} FROM parts WHERE key IN ({','.join('?' * len(chunk))})",
                            chunk).fetchall()
    return found
