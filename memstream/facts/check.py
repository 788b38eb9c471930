"""`memstream facts check`: every problem of a facts file, one line each, reading only."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from memstream.facts import schema
from memstream.stream import read_only_media


def check_facts_file(path: str | Path) -> list[str]:
    path = Path(path)
    if not path.is_file():
        return [f"{path}: no such file"]
    mode = "immutable=1" if read_only_media(path) else "mode=ro"
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
    except sqlite3.Error as e:
        return [f"{path}: cannot open ({e})"]
    with closing(db):
        try:
            return _problems(db)
        except sqlite3.DatabaseError as e:
            return [f"{path}: damaged ({str(e).splitlines()[0][:80]})"]


def _problems(db: sqlite3.Connection) -> list[str]:
    problems = [f"integrity: {r[0]}" for r in db.execute("PRAGMA integrity_check") if r[0] != "ok"]
    if problems:
        return problems[:20]
    names = {r[0]: r[1] for r in db.execute("SELECT name, type FROM sqlite_master")}
    missing = [t for t in schema.TABLES if t not in names]
    if "meta" in missing or "facts" in missing:
        return [f"not a memstream facts file (tables: {', '.join(sorted(names)) or 'none'})"]
    problems += [f"table {t} is missing" for t in missing]
    meta = dict(db.execute("SELECT key, value FROM meta"))
    if meta.get("format") != schema.FORMAT:
        problems.append(f"format is {meta.get('format')!r}, not {schema.FORMAT!r}")
    if meta.get("schema_version") != str(schema.SCHEMA_VERSION):
        problems.append(f"schema version {meta.get('schema_version')!r}; this memstream reads {schema.SCHEMA_VERSION}")
    problems += [f"trigger {t} is missing" for t in schema.TRIGGERS if names.get(t) != "trigger"]
    problems += _fts_problems(db)
    checks = {
        "edges name facts that do not exist": "SELECT COUNT(*) FROM edges WHERE src NOT IN (SELECT id FROM facts) "
                                              "OR dst NOT IN (SELECT id FROM facts)",
        "provenance names facts or sources that do not exist": "SELECT COUNT(*) FROM provenance WHERE fact_id NOT IN "
            "(SELECT id FROM facts) OR source_id NOT IN (SELECT id FROM sources)",
        "facts have no source": "SELECT COUNT(*) FROM facts WHERE id NOT IN (SELECT fact_id FROM provenance)",
        "owners have more than one current version of a fact": "SELECT COUNT(*) FROM edges e JOIN facts a ON "
            "a.id = e.dst WHERE e.kind = 'UPDATES' AND a.is_latest = 1",
        "facts have an empty or odd-sized vector": "SELECT COUNT(*) FROM facts WHERE length(embedding) = 0 OR "
                                                   "length(embedding) % 4 != 0",
        "edges join two owners": "SELECT COUNT(*) FROM edges e JOIN facts a ON a.id = e.src JOIN facts b ON "
                                 "b.id = e.dst WHERE a.owner != b.owner OR a.tenant != b.tenant",
    }
    for what, sql in checks.items():
        n = db.execute(sql).fetchone()[0]
        if n:
            problems.append(f"{n} {what}")
    return problems


def _fts_problems(db: sqlite3.Connection) -> list[str]:
    """FTS5's own integrity check compares the index with the facts' text; it is run as a write command,
    so it runs on an in-memory copy (the file is never written)."""
    image = bytearray(db.serialize())
    image[18:20] = b"\x01\x01"  # the copy in memory cannot be in WAL mode: read it as a rollback-journal file
    with closing(sqlite3.connect(":memory:")) as copy:
        copy.deserialize(bytes(image))
        try:
            # rank 1: the index is compared with the facts' text too, not only with itself
            copy.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as e:
            return [f"the FTS index does not match the facts ({str(e).splitlines()[0][:80]})"]
    return []
