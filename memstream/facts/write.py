"""The store's half of the write path: changes applied in one transaction, idempotently.

The caller (the ``facts`` design, the CLI) has extracted candidates and classified each against the
owner's current facts; this writes the outcome so that a reader never sees half of it: the source,
the new fact, its vector, its edges, its entities and the closing of the version it updates commit
together. Inside the transaction, before anything is written:

- the scoped content hash is looked up among the owner's live facts: a fact already there (a
  retried write, the same thing said twice) gains the source as provenance and nothing else;
- an update's target is followed to its latest version (another writer may have updated it since
  the classifier read it); a target since deleted makes the candidate new.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from memstream.errors import MemstreamError
from memstream.facts.profile import regenerate
from memstream.facts.records import Applied, Change, NewFact, Source, content_hash, epoch
from memstream.facts.schema import EXTENDS, UPDATES
from memstream.facts.store import FactStore, owner_of
from memstream.timeutil import to_epoch


def apply(store: FactStore, owner: str, source: Source, changes: Sequence[Change], *,
          tenant: str = "") -> list[Applied]:
    """Write ``changes`` (extracted from ``source``) for ``owner`` in one transaction; what each did."""
    owner = owner_of(owner)
    texts = [c.fact.text for c in changes]
    vectors = store.vectors(texts) if texts else np.zeros((0, 0), dtype=np.float32)  # outside the lock
    at_s = to_epoch(source.at)
    with store.writing() as db:
        sid = _source(db, tenant, owner, source, at_s)
        if texts:
            store.remember_vectors(texts, vectors)
        done = [_one(db, tenant, owner, sid, at_s, c, v) for c, v in zip(changes, vectors, strict=True)]
        if any(a.written for a in done):
            regenerate(db, tenant, owner, at_s)  # the profile is derived from the current preferences
        return done


def _source(db: sqlite3.Connection, tenant: str, owner: str, source: Source, at_s: float) -> int:
    db.execute("INSERT OR IGNORE INTO sources(tenant, owner, key, text, at_s) VALUES (?,?,?,?,?)",
               (tenant, owner, source.key, source.text, at_s))
    return db.execute("SELECT id FROM sources WHERE tenant=? AND owner=? AND key=?",
                      (tenant, owner, source.key)).fetchone()[0]


def _one(db: sqlite3.Connection, tenant: str, owner: str, sid: int, at_s: float, change: Change,
         vector: np.ndarray) -> Applied:
    key = content_hash(tenant, owner, change.fact.text)
    live = db.execute("SELECT id FROM facts WHERE tenant=? AND owner=? AND content_hash=? AND is_latest=1 AND "
                      "deleted_s IS NULL", (tenant, owner, key)).fetchone()
    if live:
        _cite(db, live[0], sid)
        return Applied("duplicate", live[0], False)
    target = latest(db, tenant, owner, change.target) if change.target is not None else None
    if change.action == "duplicate" and target is not None:
        _cite(db, target, sid)
        return Applied("duplicate", target, False)
    action = change.action if target is not None and change.action in ("update", "extend") else "new"
    fid = _insert(db, tenant, owner, change.fact, key, at_s, vector)
    _cite(db, fid, sid)
    if action == "update":
        db.execute("UPDATE facts SET is_latest=0, valid_to_s=MAX(valid_from_s, ?) WHERE id=?",
                   (epoch(change.fact.valid_from) or at_s, target))
        db.execute("INSERT INTO edges VALUES (?,?,?)", (fid, UPDATES, target))
    elif action == "extend":
        db.execute("INSERT INTO edges VALUES (?,?,?)", (fid, EXTENDS, target))
    return Applied(action, fid, True, target if action == "update" else None)


def latest(db: sqlite3.Connection, tenant: str, owner: str, fact_id: int) -> int | None:
    """The current version of ``fact_id``'s chain (following ``UPDATES`` forward), if it has one;
    a fact of another owner is refused in one line."""
    row = db.execute("SELECT tenant, owner FROM facts WHERE id=?", (int(fact_id),)).fetchone()
    if row is None:
        return None
    if tuple(row) != (tenant, owner):
        raise MemstreamError(f"fact {fact_id} is not one of {owner!r}'s facts")
    current, seen = int(fact_id), set()
    while current not in seen:
        seen.add(current)
        newer = db.execute("SELECT e.src FROM edges e JOIN facts f ON f.id = e.src WHERE e.dst=? AND e.kind=? "
                           "AND f.deleted_s IS NULL ORDER BY e.src DESC LIMIT 1", (current, UPDATES)).fetchone()
        if newer is None:
            break
        current = newer[0]
    alive = db.execute("SELECT 1 FROM facts WHERE id=? AND is_latest=1 AND deleted_s IS NULL", (current,)).fetchone()
    return current if alive else None


def _insert(db: sqlite3.Connection, tenant: str, owner: str, fact: NewFact, key: str, at_s: float,
            vector: np.ndarray) -> int:
    cur = db.execute(
        "INSERT INTO facts(tenant, owner, text, kind, salience, confidence, event_at, content_hash, created_s, "
        "valid_from_s, expires_s, embedding) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (tenant, owner, fact.text, fact.kind, float(fact.salience), float(fact.confidence), fact.event_at, key,
         at_s, epoch(fact.valid_from) or at_s, epoch(fact.expires_at),
         np.ascontiguousarray(vector, dtype=np.float32).tobytes()))
    fid = cur.lastrowid
    assert fid is not None  # an INSERT always sets it; sqlite3 types it optional for other statements
    db.executemany("INSERT OR IGNORE INTO entities VALUES (?,?)", [(fid, name) for name in fact.entities])
    return fid


def _cite(db: sqlite3.Connection, fact_id: int, source_id: int) -> None:
    db.execute("INSERT OR IGNORE INTO provenance VALUES (?,?)", (fact_id, source_id))
