"""What a design store file is: its kind, its tables, and why they are shaped so.

Rows, not a state file: a write adds the rows of the entries it adds and rewrites only the documents it
changed, so a write costs the same at the 10,000th entry as at the 100th, and an owner is read when it is
first asked for. Every row names its design, its scope (a tenant or workspace; "" for none) and its owner;
what is shared across owners lives in its own table (``design_shared``), never in rows with a missing owner.

- ``design_settings``: each design the store holds, with the settings it was made with (and every change
  of them the user asked for, in ``changes``).
- ``design_owners``: each owner's version, raised by every write of the owner (how a process sees that
  another wrote, and how a write checks nobody wrote the owner under it).
- ``design_records``: the records, appended in the order written (``seq``), each with its key (the
  entry's id or digest: a retried write is stored once) and what the design keeps beside it (``extra``). One
  record is changed alone (its text updated, or its row deleted) only in a design whose memory is its records,
  as a write of the owner (its version raised), the change logged in ``design_logs`` (``#changes``).
- ``design_docs`` / ``design_logs``: an owner's small documents (rewritten when changed) and append-only lists.
- ``design_counters``: the next record id per design, handed out a block at a time, and (row
  ``DESIGN#versions``) the next owner version, so a version is never given twice, even to an owner
  forgotten and written again.
- ``design_erasures``: that an owner was forgotten, when, and how many rows went: never what they held
  (the owner is named by a digest).

A design that keeps its memory in a file of its own kind (``stream``, ``facts``: their files mark their kind
in their own ``meta`` table, so they cannot be this file) keeps it beside the store, at
:func:`own_file_path` (``PATH.stream``, ``PATH.facts``); its settings and erasures are still this file's rows.
"""

from __future__ import annotations

from pathlib import Path

from memstream.sqlite import StoreKind

FORMAT = "memstream-designs"
DESIGN_STORE = StoreKind(
    noun="design store", marker=FORMAT, held="memory",
    tables=frozenset({"meta", "design_settings", "design_owners", "design_records", "design_docs", "design_logs",
                      "design_shared", "design_counters", "design_erasures"}),
    make="write to it first (memstream memory remember --store PATH ...)",
    reads="read it with a command that only reads (memory context, owners, export, check)")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS design_settings (
  design TEXT PRIMARY KEY, config TEXT NOT NULL, made_at TEXT NOT NULL, changes TEXT NOT NULL DEFAULT '[]');
CREATE TABLE IF NOT EXISTS design_owners (
  design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (design, scope, owner));
CREATE TABLE IF NOT EXISTS design_records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL,
  id INTEGER NOT NULL, key TEXT,
  text TEXT NOT NULL, at TEXT NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL, session TEXT NOT NULL,
  extra TEXT,
  UNIQUE (design, id), UNIQUE (design, scope, owner, key));
CREATE INDEX IF NOT EXISTS design_records_by_owner ON design_records (design, scope, owner, seq);
CREATE TABLE IF NOT EXISTS design_docs (
  design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (design, scope, owner, name));
CREATE TABLE IF NOT EXISTS design_logs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS design_logs_by_owner ON design_logs (design, scope, owner, name, seq);
CREATE TABLE IF NOT EXISTS design_shared (
  design TEXT NOT NULL, scope TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (design, scope, name));
CREATE TABLE IF NOT EXISTS design_counters (design TEXT PRIMARY KEY, next INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS design_erasures (
  id INTEGER PRIMARY KEY, at TEXT NOT NULL, design TEXT NOT NULL, scope TEXT NOT NULL,
  owner_sha256 TEXT NOT NULL, rows INTEGER NOT NULL);
"""


#: Where a design with a file of its own keeps it: beside the store, named by the store and the design.
OWN_FILE = "{store}.{design}"


def own_file_path(store: str | Path, design: str) -> str:
    """The file of ``design``'s own kind beside the store at ``store`` (:data:`OWN_FILE`)."""
    return OWN_FILE.format(store=store, design=design)
