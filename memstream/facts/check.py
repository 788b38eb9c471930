"""`memstream facts check`: every problem of a facts file, one line each, reading only; among them, a line
for each fact that has not exactly one current version (``chains``)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import memstream.sqlite as sqlite
from memstream.facts import schema
from memstream.facts.chains import chain_problems


def check_facts_file(path: str | Path) -> list[str]:
    """The problems of a facts file (schema, integrity, version chains), read-only; empty when it is sound."""
    return sqlite.check_file(path, schema.FACTS, _problems)


def _problems(db: sqlite3.Connection) -> list[str]:
    """The facts file's own problems, in a file SQLite and the format check found sound."""
    names = {r[0]: r[1] for r in db.execute("SELECT name, type FROM sqlite_master")}
    problems = [f"table {t} is missing" for t in schema.TABLES if t not in names]
    problems += [f"trigger {t} is missing" for t in schema.TRIGGERS if names.get(t) != "trigger"]
    problems += _fts_problems(db)
    checks = {
        "edges name facts that do not exist": "SELECT COUNT(*) FROM edges WHERE src NOT IN (SELECT id FROM facts) "
                                              "OR dst NOT IN (SELECT id FROM facts)",
        "provenance names facts or sources that do not exist": "SELECT COUNT(*) FROM provenance WHERE fact_id NOT IN "
            "(SELECT id FROM facts) OR source_id NOT IN (SELECT id FROM sources)",
        "facts have no source": "SELECT COUNT(*) FROM facts WHERE id NOT IN (SELECT fact_id FROM provenance)",
        "facts have an empty or odd-sized vector": "SELECT COUNT(*) FROM facts WHERE length(embedding) = 0 OR "
                                                   "length(embedding) % 4 != 0",
        "edges join two owners": "SELECT COUNT(*) FROM edges e JOIN facts a ON a.id = e.src JOIN facts b ON "
                                 "b.id = e.dst WHERE a.owner != b.owner OR a.tenant != b.tenant",
    }
    for what, sql in checks.items():
        n = db.execute(sql).fetchone()[0]
        if n:
            problems.append(f"{n} {what}")
    return problems + chain_problems(db)


def _fts_problems(db: sqlite3.Connection) -> list[str]:
    """FTS5's own integrity check compares the index with the facts' text; it is run as a write command,
    so it runs on an in-memory copy (the file is never written)."""
    image = bytearray(db.serialize())
    image[18:20] = b"\x01\x01"  # the copy in memory cannot be in WAL mode: read it as a rollback-journal file
    with closing(sqlite.connect(":memory:", kind=schema.FACTS)) as copy:
        copy.deserialize(bytes(image))
        try:
            # rank 1: the index is compared with the facts' text too, not only with itself
            copy.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as e:
            return [f"the FTS index does not match the facts ({sqlite.reason(e)})"]
    return []
