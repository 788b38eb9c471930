"""The facts file's tables: one SQLite file (WAL) per store, every owner's facts scoped inside it.

A fact's text, owner, hash, embedding and creation time are never edited (a trigger refuses it): a
change is a new version that ``UPDATES`` the old one, whose ``is_latest``/``valid_to_s`` close it.
The FTS5 index reads its text from ``facts`` (external content) and is kept in step by triggers, so
a hard delete that removes a row removes its index entries in the same transaction.
"""

from __future__ import annotations

from memstream.sqlite import StoreKind

#: What a facts file is: how it says so in its meta table, and the words its messages use.
FORMAT = "memstream-facts"  #: what its meta table records
FACTS = StoreKind(noun="facts file", marker=FORMAT, tables=frozenset({"meta", "facts"}), held="facts",
                  make="create one with `memstream facts add`", reads="use a read-only command (history, as-of, check)")
SCHEMA_VERSION = FACTS.version
#: A fact's kinds (the issue's four).
KINDS = ("fact", "preference", "episode", "procedure")
#: Edges between facts: a new version of, an enrichment of.
UPDATES = "UPDATES"
EXTENDS = "EXTENDS"
EDGE_KINDS = (UPDATES, EXTENDS)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
  id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  owner TEXT NOT NULL,
  key TEXT NOT NULL,
  text TEXT NOT NULL,
  at_s REAL NOT NULL,
  UNIQUE(tenant, owner, key));
CREATE TABLE IF NOT EXISTS facts(
  id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  owner TEXT NOT NULL,
  text TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ({", ".join(f"'{k}'" for k in KINDS)})),
  salience REAL NOT NULL CHECK (salience BETWEEN 0 AND 1),
  confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  event_at TEXT,
  content_hash TEXT NOT NULL,
  created_s REAL NOT NULL,
  valid_from_s REAL NOT NULL,
  valid_to_s REAL,
  expires_s REAL,
  deleted_s REAL,
  deleted_why TEXT,
  is_latest INTEGER NOT NULL DEFAULT 1 CHECK (is_latest IN (0, 1)),
  recalls INTEGER NOT NULL DEFAULT 0,
  embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS facts_scope ON facts(tenant, owner, is_latest, deleted_s);
CREATE INDEX IF NOT EXISTS facts_hash ON facts(tenant, owner, content_hash);
CREATE TABLE IF NOT EXISTS edges(
  src INTEGER NOT NULL REFERENCES facts(id),
  kind TEXT NOT NULL CHECK (kind IN ('{UPDATES}', '{EXTENDS}')),
  dst INTEGER NOT NULL REFERENCES facts(id),
  PRIMARY KEY(src, kind, dst)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges(dst, kind);
CREATE TABLE IF NOT EXISTS provenance(
  fact_id INTEGER NOT NULL REFERENCES facts(id),
  source_id INTEGER NOT NULL REFERENCES sources(id),
  PRIMARY KEY(fact_id, source_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS provenance_by_source ON provenance(source_id);
CREATE TABLE IF NOT EXISTS entities(
  fact_id INTEGER NOT NULL REFERENCES facts(id),
  name TEXT NOT NULL,
  PRIMARY KEY(fact_id, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entities_by_name ON entities(name);
CREATE TABLE IF NOT EXISTS embed_cache(key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS profiles(
  tenant TEXT NOT NULL,
  owner TEXT NOT NULL,
  text TEXT NOT NULL,
  fact_ids TEXT NOT NULL,
  made_s REAL NOT NULL,
  PRIMARY KEY(tenant, owner));
CREATE TABLE IF NOT EXISTS audit(
  id INTEGER PRIMARY KEY,
  at_s REAL NOT NULL,
  tenant TEXT NOT NULL,
  owner TEXT NOT NULL,
  action TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(text, content='facts', content_rowid='id',
  tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS facts_fts_insert AFTER INSERT ON facts
  BEGIN INSERT INTO facts_fts(rowid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER IF NOT EXISTS facts_fts_delete AFTER DELETE ON facts
  BEGIN INSERT INTO facts_fts(facts_fts, rowid, text) VALUES ('delete', old.id, old.text); END;
CREATE TRIGGER IF NOT EXISTS facts_text_fixed BEFORE UPDATE OF id, tenant, owner, text, content_hash, created_s,
  embedding ON facts
  BEGIN SELECT RAISE(ABORT, 'a fact''s text is never edited: write a new version that updates it'); END;
"""
#: What `memstream facts check` looks for.
TABLES = ("meta", "sources", "facts", "edges", "provenance", "entities", "embed_cache", "profiles", "audit",
          "facts_fts")
TRIGGERS = ("facts_fts_insert", "facts_fts_delete", "facts_text_fixed")
