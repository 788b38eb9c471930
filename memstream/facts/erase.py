"""Hard delete: a source, or facts, and everything derived from them, gone from the file's bytes.

From a deleted source, provenance leads to every fact extracted from it; from each fact, ``UPDATES``
edges lead to its earlier versions, which go too (they are the same fact as it was). For all of
them, in one transaction: their vectors (in the rows), their cached embeddings, their FTS entries
(the external-content index's delete, then a merge that drops the old segments), their edges,
entities and provenance, the sources left with no fact (they would bring the facts back if read
again), and the owner's profile, regenerated from what remains. An audit record names what was
removed by id and count, never by text.

Then the bytes: the connection runs with ``secure_delete`` (freed pages are zeroed), ``VACUUM``
rewrites the file, and a ``TRUNCATE`` checkpoint empties the ``-wal`` file. A reader in another
process holding an old snapshot can keep the checkpoint from finishing; :class:`Erased` says so
(``wal_clean``), and the next erase or ``memstream facts check --purge`` finishes it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memstream.errors import MemstreamError
from memstream.facts.lifecycle import audit
from memstream.facts.profile import regenerate
from memstream.facts.schema import UPDATES
from memstream.facts.store import FactStore, owner_of
from memstream.sqlite import BUSY_TIMEOUT_S
from memstream.timeutil import to_epoch

#: How long the checkpoint that empties the ``-wal`` waits for readers in other processes.
CHECKPOINT_WAIT_S = 2.0


@dataclass
class Erased:
    facts: list[int] = field(default_factory=list)
    sources: int = 0
    edges: int = 0
    cached_vectors: int = 0
    profile_regenerated: bool = False
    wal_clean: bool = True
    seconds: float = 0.0


def erase_source(store: FactStore, owner: str, key: str, at: datetime, *, tenant: str = "",
                 purge: bool = True) -> Erased:
    """Hard-delete the source ``key`` of ``owner`` and everything derived from it."""
    owner = owner_of(owner)
    started = time.perf_counter()
    with store.writing() as db:
        row = db.execute("SELECT id FROM sources WHERE tenant=? AND owner=? AND key=?", (tenant, owner, key)).fetchone()
        if row is None:
            raise MemstreamError(f"{owner!r} has no source {key!r}; nothing was deleted")
        seeds = [r[0] for r in db.execute("SELECT fact_id FROM provenance WHERE source_id=?", (row[0],))]
        erased = _remove(store, db, tenant, owner, _with_earlier(db, seeds), [row[0]], to_epoch(at),
                         {"source": key})
    return _finish(store, erased, started, purge)


def erase_facts(store: FactStore, owner: str, ids: Sequence[int], at: datetime, *, tenant: str = "",
                purge: bool = True) -> Erased:
    """Hard-delete these facts of ``owner`` and their earlier versions."""
    owner = owner_of(owner)
    started = time.perf_counter()
    with store.writing() as db:
        ids = sorted({int(i) for i in ids})
        found = dict(db.execute(f"SELECT id, owner || '\x1f' || tenant FROM facts WHERE id IN "
                                f"({','.join('?' * len(ids))})", ids).fetchall()) if ids else {}
        wrong = [i for i in ids if found.get(i) != f"{owner}\x1f{tenant}"]
        if not ids or wrong:
            raise MemstreamError(f"no fact {wrong[0] if wrong else '(none named)'} of {owner!r}; nothing was deleted")
        erased = _remove(store, db, tenant, owner, _with_earlier(db, ids), [], to_epoch(at), {})
    return _finish(store, erased, started, purge)


def erase_owner(store: FactStore, owner: str, at: datetime, *, tenant: str = "", purge: bool = True) -> int:
    """Hard-delete everything of ``owner`` in ``tenant``: every fact and version, source, edge, provenance,
    entity, cached vector, the profile and the audit records that name the owner; the rows deleted. One
    transaction; the audit keeps one record that an owner was forgotten, naming them by a digest only."""
    owner = owner_of(owner)
    with store.writing() as db:
        where = (tenant, owner)
        ids = [i for (i,) in db.execute("SELECT id FROM facts WHERE tenant=? AND owner=?", where)]
        sources = [s for (s,) in db.execute("SELECT id FROM sources WHERE tenant=? AND owner=?", where)]
        erased = _remove(store, db, tenant, owner, ids, sources, to_epoch(at), {})
        gone = len(ids) + erased.sources + erased.edges + erased.cached_vectors
        gone += db.execute("DELETE FROM sources WHERE tenant=? AND owner=?", where).rowcount  # any left uncited
        gone += db.execute("DELETE FROM profiles WHERE tenant=? AND owner=?", where).rowcount
        gone += db.execute("DELETE FROM audit WHERE tenant=? AND owner=?", where).rowcount
        audit(db, to_epoch(at), tenant, "", "forget-owner",
              {"owner_sha256": hashlib.sha256(owner.encode()).hexdigest(), "rows": gone})
    if purge:
        purge_file(store)
    return gone


def _with_earlier(db: sqlite3.Connection, ids: Sequence[int]) -> list[int]:
    """``ids`` and every earlier version they update, transitively."""
    found, frontier = set(ids), list(ids)
    while frontier:
        marks = ",".join("?" * len(frontier[:900]))
        batch, frontier = frontier[:900], frontier[900:]
        for (dst,) in db.execute(f"SELECT dst FROM edges WHERE kind=? AND src IN ({marks})", (UPDATES, *batch)):
            if dst not in found:
                found.add(dst)
                frontier.append(dst)
    return sorted(found)


def _remove(store: FactStore, db: sqlite3.Connection, tenant: str, owner: str, ids: list[int], named: list[int],
            at_s: float, detail: dict) -> Erased:
    erased = Erased(facts=ids)
    table = _ids_table(db, ids)
    texts = [t for (t,) in db.execute(f"SELECT text FROM facts WHERE id IN (SELECT id FROM {table})")]
    keys = [store.cache_key(t) for t in texts]
    erased.cached_vectors = sum(db.execute("DELETE FROM embed_cache WHERE key=?", (k,)).rowcount for k in keys)
    erased.edges = db.execute(f"DELETE FROM edges WHERE src IN (SELECT id FROM {table}) OR dst IN "
                              f"(SELECT id FROM {table})").rowcount
    cited = {s for (s,) in db.execute(f"SELECT DISTINCT source_id FROM provenance WHERE fact_id IN "
                                      f"(SELECT id FROM {table})")}
    db.execute(f"DELETE FROM provenance WHERE fact_id IN (SELECT id FROM {table})")
    db.execute(f"DELETE FROM entities WHERE fact_id IN (SELECT id FROM {table})")
    db.execute(f"DELETE FROM facts WHERE id IN (SELECT id FROM {table})")  # the FTS trigger deletes their entries
    orphans = [s for s in cited if not db.execute("SELECT 1 FROM provenance WHERE source_id=?", (s,)).fetchone()]
    gone = sorted(set(named) | set(orphans))
    erased.sources = sum(db.execute("DELETE FROM sources WHERE id=?", (s,)).rowcount for s in gone)
    db.execute(f"DROP TABLE {table}")
    db.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")  # merge: old segments (and their terms) go
    regenerate(db, tenant, owner, at_s)
    erased.profile_regenerated = True
    audit(db, at_s, tenant, owner, "hard-delete", {**detail, "facts": ids, "sources": len(gone),
                                                   "edges": erased.edges, "cached_vectors": erased.cached_vectors})
    return erased


def _ids_table(db: sqlite3.Connection, ids: list[int]) -> str:
    """The ids in a temporary table (a source with thousands of facts is past SQLite's parameter limit)."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS erasing(id INTEGER PRIMARY KEY)")
    db.execute("DELETE FROM erasing")
    db.executemany("INSERT OR IGNORE INTO erasing VALUES (?)", [(i,) for i in ids])
    return "temp.erasing"


def _finish(store: FactStore, erased: Erased, started: float, purge: bool) -> Erased:
    if purge:
        erased.wal_clean = purge_file(store)
    erased.seconds = time.perf_counter() - started
    return erased


def purge_file(store: FactStore) -> bool:
    """Rewrite the file without free pages and empty its ``-wal``; whether the ``-wal`` is now empty."""
    if store.in_memory:
        return True
    store.db.execute("VACUUM")
    store.db.execute(f"PRAGMA busy_timeout={int(CHECKPOINT_WAIT_S * 1000)}")  # readers are waited for briefly
    try:
        busy, _, _ = store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        store.db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    return busy == 0
