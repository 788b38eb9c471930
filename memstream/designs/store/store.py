"""A design store's rows read and written: one SQLite file (WAL) shared by any number of processes.

This module knows rows, not designs: :mod:`.bound` turns a design's memory into rows
(:class:`~memstream.designs.base.OwnerRows`) and back. Every change is one transaction that takes the
write lock first (``BEGIN IMMEDIATE``); what a process read is marked by the owner's version, so a write
that finds the version moved under it is refused (:meth:`DesignStore.write_owner` returns None) and the
caller reads again and retries. Deleted rows are overwritten (``secure_delete``), so a forgotten owner's
text is gone from the file itself, not only from its tables.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memstream.sqlite as sqlite
from memstream.designs.base import OwnerRows
from memstream.designs.entries import Record
from memstream.designs.store.rows import (
    CHANGES,
    ID_BLOCK,
    Held,
    OwnerKey,
    change_item,
    digest,
    dumps,
    held_after_change,
    versions_counter,
)
from memstream.designs.store.schema import DESIGN_STORE, FORMAT, SCHEMA
from memstream.errors import MemstreamError


def fix_for(error: BaseException) -> str:
    """What the user can do about a write SQLite refused ("; " and the fix), or "" if nothing is known."""
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
    if code == sqlite3.SQLITE_FULL:
        return "; free some disk space and write again"
    if code == sqlite3.SQLITE_READONLY:
        return "; check the file's permissions, or open it read_only=True to read it"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return "; another process holds the store's write lock: try again when it is done"
    return ""


def record_time(at: str) -> datetime:
    """A record's time as stored: an ISO time with its zone (ValueError for anything else)."""
    when = datetime.fromisoformat(at)
    if when.utcoffset() is None:
        raise ValueError(f"time {at[:40]!r} has no time zone")
    return when


def damaged(path: str, key: OwnerKey, error: BaseException | str) -> str:
    """The one line for an owner whose rows cannot be read back (``error``: what failed, or why)."""
    why = error if isinstance(error, str) else (
        f"{type(error).__name__}: {str(error).splitlines()[0][:80] if str(error) else ''}")
    return f"{path}: the {key.design} memory of {key.owner!r} is damaged ({why[:120]}); run `memstream memory check`"


def not_stored(path: str, error: BaseException, *, kept: str = "nothing of it was kept") -> MemstreamError:
    """The one line for a write SQLite refused (a full disk, a medium gone read-only) at ``path``; ``kept``:
    what of the write is in the file all the same."""
    return MemstreamError(f"{path}: the write was not stored ({sqlite.reason(error)}); {kept}{fix_for(error)}")



class DesignStore:
    """The rows of every design in one file; ``read_only`` opens it without writing anything."""

    #: What a write this store refuses raises (a full disk, a medium gone read-only): see :meth:`refused`.
    failures: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = str(path)
        self.db = sqlite.connect(path, kind=DESIGN_STORE, read_only=read_only, create=not read_only)
        if not read_only:
            self.db.execute("PRAGMA secure_delete=ON")
            sqlite.create_tables(self.db, SCHEMA, {"format": FORMAT, "schema_version": str(DESIGN_STORE.version)})

    @property
    def read_only(self) -> bool:
        return self.db.read_only

    def close(self) -> None:
        self.db.close()

    # -- transactions ---------------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """One committed state for everything read inside."""
        with sqlite.transaction(self.db, write=False) as db:
            yield db

    def begin(self, key: OwnerKey | None = None) -> None:
        """Take the write lock (waiting for another process's write); :meth:`commit` or :meth:`rollback` ends it.
        SQLite has one lock for the file, so it serialises every owner's writes (``key`` is not needed)."""
        if self.db.read_only:
            raise MemstreamError(f"{self.path} is open read-only; open it for writing to change it")
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise MemstreamError(f"{self.path}: cannot write ({sqlite.reason(e)}){fix_for(e)}") from None

    def commit(self) -> None:
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error as e:
            raise self.refused(e) from None

    def refused(self, error: BaseException, *, rollback: bool = True) -> MemstreamError:
        """A write SQLite refused (a full disk, a medium gone read-only), rolled back (unless the transaction
        is another write's): the one line to raise."""
        if rollback:
            self.rollback()
        return not_stored(self.path, error)

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (or the one already open), committed at the end, rolled back on failure."""
        if self.db.in_transaction:
            yield self.db
            return
        self.begin()
        try:
            yield self.db
        except sqlite3.Error as e:
            raise self.refused(e) from None
        except BaseException:
            self.rollback()
            raise
        self.commit()

    # -- settings -------------------------------------------------------------------------------

    def designs(self) -> dict[str, dict[str, Any]]:
        """Each design the store holds, with the settings it was made with (or last reconfigured to)."""
        return {d: json.loads(c) for d, c in self.db.execute("SELECT design, config FROM design_settings")}

    def record_settings(self, design: str, config: Mapping[str, Any], *, change: bool = False) -> None:
        """Record ``design``'s settings (a new design), or their change (``change``: the user asked for it)."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.writing() as db:
            row = db.execute("SELECT config, changes FROM design_settings WHERE design=?", (design,)).fetchone()
            if row is None:
                db.execute("INSERT INTO design_settings VALUES (?,?,?,'[]')", (design, dumps(config), now))
            elif change:
                changes = [*json.loads(row[1]), {"at": now, "from": json.loads(row[0]), "to": dict(config)}]
                db.execute("UPDATE design_settings SET config=?, changes=? WHERE design=?",
                           (dumps(config), dumps(changes), design))

    # -- owners ---------------------------------------------------------------------------------

    def owners(self, design: str, scope: str) -> list[str]:
        """Every owner of ``design`` in ``scope`` with memory, in the order each was first written for."""
        return [o for (o,) in self.db.execute(
            "SELECT owner FROM design_owners WHERE design=? AND scope=? ORDER BY rowid", (design, scope))]

    def scopes(self, design: str) -> list[str]:
        return [s for (s,) in self.db.execute(
            "SELECT DISTINCT scope FROM design_owners WHERE design=? ORDER BY scope", (design,))]

    def version(self, key: OwnerKey) -> int:
        row = self.db.execute("SELECT version FROM design_owners WHERE design=? AND scope=? AND owner=?",
                              (key.design, key.scope, key.owner)).fetchone()
        return row[0] if row else 0

    def read_owner(self, key: OwnerKey) -> tuple[Held, OwnerRows]:
        """Everything of one owner, as one committed state (an owner never written: empty rows, version 0);
        one line naming the owner if a row of it is damaged (the other owners still read)."""
        where = (key.design, key.scope, key.owner)
        with self.reading() as db:
            version = self.version(key)
            rows = db.execute("SELECT id, text, at, source, kind, session, extra FROM design_records "
                              "WHERE design=? AND scope=? AND owner=? ORDER BY seq", where).fetchall()
            docs = dict(db.execute("SELECT name, value FROM design_docs WHERE design=? AND scope=? AND owner=?",
                                   where).fetchall())
            items = db.execute("SELECT name, value FROM design_logs WHERE design=? AND scope=? AND owner=? "
                               "ORDER BY seq", where).fetchall()
        try:
            records = [Record(i, key.owner, text, record_time(at), source, kind, session)
                       for i, text, at, source, kind, session, _ in rows]
            extras = {i: json.loads(extra) for i, *_, extra in rows if extra is not None}
            logs: dict[str, list[Any]] = {}
            for name, value in items:
                logs.setdefault(name, []).append(json.loads(value))
            values = {n: json.loads(v) for n, v in docs.items()}
        except (ValueError, TypeError) as e:
            raise MemstreamError(damaged(self.path, key, e)) from None
        held = Held(version, len(records), dict(docs), {name: len(items) for name, items in logs.items()})
        return held, OwnerRows(records, extras, values, logs)

    def known_keys(self, key: OwnerKey, keys: Sequence[str]) -> dict[str, int]:
        """Which of ``keys`` the owner's records already have, with their record ids."""
        found: dict[str, int] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start:start + 500])
            found.update(self.db.execute(
                f"SELECT key, id FROM design_records WHERE design=? AND scope=? AND owner=? AND key IN "
                f"({','.join('?' * len(chunk))})", (key.design, key.scope, key.owner, *chunk)).fetchall())
        return found

    def entry_keys(self, key: OwnerKey) -> dict[int, str]:
        """Each record id of the owner that came from an entry, with the entry's key."""
        return dict(self.db.execute(
            "SELECT id, key FROM design_records WHERE design=? AND scope=? AND owner=? AND key IS NOT NULL",
            (key.design, key.scope, key.owner)).fetchall())

    def write_owner(self, key: OwnerKey, rows: OwnerRows, held: Held, keys: Mapping[int, str]) -> Held | None:
        """Store what is new in ``rows`` since ``held`` (inside a write transaction), raising the owner's
        version; None, writing nothing, if another process wrote the owner since ``held`` was read."""
        db = self.db
        assert db.in_transaction, "write_owner runs inside a write transaction"
        now = self.version(key)
        if now != held.version:
            return None
        where = (key.design, key.scope, key.owner)
        new = rows.records[held.records:]
        db.executemany(
            "INSERT INTO design_records (design, scope, owner, id, key, text, at, source, kind, session, extra) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(*where, r.id, keys.get(r.id), r.text, r.at.isoformat(), r.source, r.kind, r.session,
              dumps(rows.extras[r.id]) if r.id in rows.extras else None) for r in new])
        docs = {name: dumps(value) for name, value in rows.docs.items()}
        db.executemany("INSERT OR REPLACE INTO design_docs VALUES (?,?,?,?,?)",
                       [(*where, name, text) for name, text in docs.items() if held.docs.get(name) != text])
        db.executemany("DELETE FROM design_docs WHERE design=? AND scope=? AND owner=? AND name=?",
                       [(*where, name) for name in held.docs if name not in docs])
        logs = {name: len(items) for name, items in rows.logs.items()}
        db.executemany("INSERT INTO design_logs (design, scope, owner, name, value) VALUES (?,?,?,?,?)",
                       [(*where, name, dumps(item)) for name, items in rows.logs.items()
                        for item in items[held.logs.get(name, 0):]])
        version = self._next_version(key.design, now)
        db.execute("INSERT INTO design_owners VALUES (?,?,?,?) ON CONFLICT (design, scope, owner) "
                   "DO UPDATE SET version = excluded.version", (*where, version))
        return Held(version, len(rows.records), docs, logs)

    def change_record(self, key: OwnerKey, held: Held, record_id: int, text: str | None) -> Held | None:
        """Update or delete one record of the owner (see :meth:`~.rows.Rows.change_record`)."""
        db = self.db
        assert db.in_transaction, "change_record runs inside a write transaction"
        now = self.version(key)
        if now != held.version:
            return None
        where = (key.design, key.scope, key.owner, record_id)
        if text is None:
            changed = db.execute("DELETE FROM design_records WHERE design=? AND scope=? AND owner=? AND id=?",
                                 where).rowcount
        else:
            changed = db.execute("UPDATE design_records SET text=? WHERE design=? AND scope=? AND owner=? AND id=?",
                                 (text, *where)).rowcount
        assert changed == 1, "a record the owner holds at the version read is in the store"
        db.execute("INSERT INTO design_logs (design, scope, owner, name, value) VALUES (?,?,?,?,?)",
                   (key.design, key.scope, key.owner, CHANGES,
                    dumps(change_item(record_id, text, datetime.now(UTC).isoformat(timespec="seconds")))))
        version = self._next_version(key.design, now)
        db.execute("UPDATE design_owners SET version=? WHERE design=? AND scope=? AND owner=?",
                   (version, key.design, key.scope, key.owner))
        return held_after_change(held, version, text)

    def _next_version(self, design: str, now: int) -> int:
        """An owner's next version (inside the write): above its version ``now`` and above every version any
        owner of ``design`` was given before. Why: a forgotten owner has no version (0); written again, it
        started at 1, the very version another process still held of its forgotten memory, which that
        process then went on serving (and building on) as if nothing had changed."""
        counter = versions_counter(design)
        self.db.execute("INSERT OR IGNORE INTO design_counters VALUES (?, 1)", (counter,))
        (given,) = self.db.execute("SELECT next FROM design_counters WHERE design=?", (counter,)).fetchone()
        version = max(int(given), now + 1)
        self.db.execute("UPDATE design_counters SET next=? WHERE design=?", (version + 1, counter))
        return version

    # -- what is shared across owners -----------------------------------------------------------

    def read_shared(self, design: str, scope: str) -> dict[str, tuple[int, Any]]:
        """Each shared document of ``design`` in ``scope``: its version and value."""
        return {name: (version, json.loads(value)) for name, value, version in self.db.execute(
            "SELECT name, value, version FROM design_shared WHERE design=? AND scope=?", (design, scope))}

    def write_shared(self, design: str, scope: str, changed: Mapping[str, tuple[int, Any]]) -> dict[str, int] | None:
        """Store the ``changed`` documents (each with the version it was read at) inside a write transaction;
        their new versions, or None (writing nothing) if another process changed one of them meanwhile."""
        assert self.db.in_transaction, "write_shared runs inside a write transaction"
        now = {n: v for n, (v, _) in self.read_shared(design, scope).items()}
        if any(now.get(name, 0) != version for name, (version, _) in changed.items()):
            return None
        self.db.executemany("INSERT OR REPLACE INTO design_shared VALUES (?,?,?,?,?)",
                            [(design, scope, name, dumps(value), version + 1)
                             for name, (version, value) in changed.items()])
        return {name: version + 1 for name, (version, _) in changed.items()}

    # -- ids ------------------------------------------------------------------------------------

    def reserve_ids(self, design: str, n: int = ID_BLOCK) -> int:
        """The first of ``n`` record ids nobody else will take (inside the caller's write transaction, if one
        is open; else in one of its own)."""
        with self.writing() as db:
            db.execute("INSERT OR IGNORE INTO design_counters VALUES (?, 1)", (design,))
            (first,) = db.execute("SELECT next FROM design_counters WHERE design=?", (design,)).fetchone()
            db.execute("UPDATE design_counters SET next=? WHERE design=?", (first + n, design))
        return int(first)

    def give_back_ids(self, design: str, start: int, end: int) -> None:
        """Return the unused ids ``start``..``end`` - 1 of a block, if no process reserved after it (so one
        process closing and opening a store goes on 1, 2, 3 ... as a design alone does)."""
        with self.writing() as db:
            db.execute("UPDATE design_counters SET next=? WHERE design=? AND next=?", (start, design, end))

    def peek_id(self, design: str) -> int:
        """The next record id the store would hand out for ``design``."""
        row = self.db.execute("SELECT next FROM design_counters WHERE design=?", (design,)).fetchone()
        return int(row[0]) if row else 1

    # -- forgetting -----------------------------------------------------------------------------

    def forget(self, key: OwnerKey) -> int:
        """Delete every row of the owner (inside a write transaction) and log the erasure; the rows deleted."""
        assert self.db.in_transaction, "forget runs inside a write transaction"
        where = (key.design, key.scope, key.owner)
        gone = 0
        for table in ("design_records", "design_docs", "design_logs", "design_owners"):
            gone += self.db.execute(f"DELETE FROM {table} WHERE design=? AND scope=? AND owner=?", where).rowcount
        self.log_erasure(key, gone)
        return gone

    def log_erasure(self, key: OwnerKey, rows: int) -> None:
        """Record that the owner was forgotten, when and how many rows went (inside a write transaction)."""
        assert self.db.in_transaction, "an erasure is logged inside a write transaction"
        self.db.execute("INSERT INTO design_erasures (at, design, scope, owner_sha256, rows) VALUES (?,?,?,?,?)",
                        (datetime.now(UTC).isoformat(timespec="seconds"), key.design, key.scope,
                         digest(key.owner), rows))

    def erasures(self) -> list[dict[str, Any]]:
        cursor = self.db.execute("SELECT at, design, scope, owner_sha256, rows FROM design_erasures ORDER BY id")
        return [dict(zip(("at", "design", "scope", "owner_sha256", "rows"), row, strict=True)) for row in cursor]

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file and empty it (after a forget: no copy of a deleted row left)."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- checking -------------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Every problem of the store's rows, one line each (SQLite's own check first)."""
        return check_rows(self.db)


def check_rows(db: sqlite3.Connection) -> list[str]:
    """What :func:`check` finds in an open store beyond SQLite's integrity check."""
    problems: list[str] = []
    for design, most, counter in db.execute(
            "SELECT r.design, MAX(r.id), c.next FROM design_records r LEFT JOIN design_counters c USING (design) "
            "GROUP BY r.design"):
        if counter is None or most >= counter:
            problems.append(f"{design}: record id {most} was never handed out (next id {counter})")
    for design, scope, owner in db.execute(
            "SELECT DISTINCT design, scope, owner FROM design_records EXCEPT "
            "SELECT design, scope, owner FROM design_owners"):
        problems.append(f"{design}: owner {owner!r} (scope {scope!r}) has records but no version")
    for table, column in (("design_records", "extra"), ("design_docs", "value"), ("design_logs", "value"),
                          ("design_shared", "value")):
        for rowid, value in db.execute(f"SELECT rowid, {column} FROM {table} WHERE {column} IS NOT NULL"):
            try:
                json.loads(value)
            except ValueError:
                problems.append(f"{table} row {rowid}: {column} is not JSON")
    for seq, at in db.execute("SELECT seq, at FROM design_records"):
        try:
            record_time(at)
        except (ValueError, TypeError) as e:
            problems.append(f"design_records row {seq}: time {str(at)[:40]!r} is not a time with a zone "
                            f"({str(e)[:60]})")
    return problems[:50]


def check(path: str | Path) -> list[str]:
    """Every problem of the design store at ``path`` (none if it is sound), reading only."""
    return sqlite.check_file(path, DESIGN_STORE, check_rows)


def looks_like_store(path: str | Path) -> bool:
    """Whether ``path`` is a design store file (a quick look, for messages)."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return db.execute("SELECT value FROM meta WHERE key='format'").fetchone() == (FORMAT,)
    except sqlite3.Error:
        return False
