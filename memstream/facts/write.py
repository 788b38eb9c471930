"""The store's half of the write path: changes applied in one transaction, idempotently.

The caller (the ``facts`` design, the CLI) has extracted candidates and classified each against the
owner's current facts; this writes the outcome so that a reader never sees half of it: the source,
the new fact, its vector, its edges, its entities and the closing of the version it updates commit
together. Inside the transaction, before anything is written:

- the scoped content hash is looked up among all the owner's facts, every version (the text is the
  fact's identity, see ``chains``):
  - a current fact with that text (a retried write, the same thing said twice) gains the source as
    provenance and nothing else;
  - an earlier version with that text, said no later than it was superseded (an earlier message
    added again, a replay), is history already known: it gains the source and nothing changes (the
    chain's current version stays current);
  - an earlier or forgotten version, said after it stopped being current ("the user said this
    again"), is true again: a new version that supersedes its chain's latest one, so the text
    never comes back as a second current version beside the correction;
- an update's target is followed to its chain's latest version (another writer may have updated it
  since the classifier read it), a forgotten one too (it is superseded: restoring it later brings it
  back as history, not as a second current version); a target since hard-deleted makes it new.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from memstream.facts.chains import head
from memstream.facts.profile import regenerate
from memstream.facts.records import Action, Applied, Change, NewFact, Source, content_hash, epoch
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
    known = db.execute("SELECT id, is_latest AND deleted_s IS NULL, valid_to_s FROM facts WHERE tenant=? AND owner=? "
                       "AND content_hash=? ORDER BY is_latest AND deleted_s IS NULL DESC, id DESC LIMIT 1",
                       (tenant, owner, key)).fetchone()
    if known and known[1]:
        _cite(db, known[0], sid)
        return Applied("duplicate", known[0], False)
    if known:  # an earlier or forgotten version says this
        newest = head(db, tenant, owner, known[0])
        if newest != known[0] and known[2] is not None and at_s <= known[2]:
            _cite(db, known[0], sid)  # said while it was true: already in the history
            return Applied("duplicate", latest(db, tenant, owner, known[0]) or known[0], False)
        return _write(db, tenant, owner, sid, at_s, change, key, vector, "update", newest)
    newest = head(db, tenant, owner, change.target) if change.target is not None else None
    target = latest(db, tenant, owner, change.target) if change.target is not None else None
    if change.action == "duplicate" and target is not None:
        _cite(db, target, sid)
        return Applied("duplicate", target, False)
    if change.action == "update" and newest is not None:
        return _write(db, tenant, owner, sid, at_s, change, key, vector, "update", newest)
    if change.action == "extend" and target is not None:
        return _write(db, tenant, owner, sid, at_s, change, key, vector, "extend", target)
    return _write(db, tenant, owner, sid, at_s, change, key, vector, "new", None)


def _write(db: sqlite3.Connection, tenant: str, owner: str, sid: int, at_s: float, change: Change, key: str,
           vector: np.ndarray, action: Action, target: int | None) -> Applied:
    """Insert the change's fact; an update closes ``target`` (its chain's latest version) and links to it."""
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
    """The current version of ``fact_id``'s chain, if it has one (its latest version, unless that was
    forgotten); a fact of another owner is refused in one line."""
    newest = head(db, tenant, owner, fact_id)
    if newest is None:
        return None
    alive = db.execute("SELECT 1 FROM facts WHERE id=? AND is_latest=1 AND deleted_s IS NULL", (newest,)).fetchone()
    return newest if alive else None


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
