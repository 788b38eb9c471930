"""A design store's rows in PostgreSQL: memory shared by processes on several machines.

The same tables as the SQLite file (:mod:`.schema` says what each holds), in one PostgreSQL schema per
store (``postgresql://user:password@host/db?schema=NAME``; ``memstream`` if the URL names none), reached
through a small connection pool (psycopg 3, ``memstream[postgres]``).

Where SQLite has one write lock for the file, PostgreSQL lets writers of different owners run at once: a
write transaction takes a transaction-scoped advisory lock on its owner (``pg_advisory_xact_lock`` on a
hash of the schema, design, scope and owner) before it reads the version it checks, so writes of one
owner are serialised (the locked retry of :mod:`.bound` always ends) and writes of other owners are not
held up. The documents shared across owners have one such lock per design and scope, taken after the
owner's (always in that order, so two writers cannot wait on each other). Record ids come from one
``UPDATE ... RETURNING`` on the counter, committed at once on a connection of its own: a block is never
handed out twice, and a write that rolls back leaves a gap, as a crash does.

One store object is used by one thread at a time (as an SQLite connection is); each process opens its own.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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
from memstream.designs.store.schema import DESIGN_STORE, FORMAT
from memstream.errors import MemstreamError, import_extra

if TYPE_CHECKING:
    import psycopg

#: The URL schemes that name a PostgreSQL store (anything else is an SQLite file's path).
SCHEMES = ("postgresql", "postgres")
#: The schema a URL without ``?schema=`` keeps its store in.
DEFAULT_SCHEMA = "memstream"
#: Connections one store object keeps at most: a write transaction's, and one for ids and reads beside it.
POOL_SIZE = 4
#: Seconds to wait for the server (or for a connection of the pool) before saying it cannot be reached.
CONNECT_TIMEOUT_S = 10
#: The tables a forget deletes from (and so :meth:`PostgresStore.checkpoint` vacuums).
OWNER_TABLES = ("design_records", "design_docs", "design_logs", "design_owners")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")

#: :data:`.schema.SCHEMA` in PostgreSQL's words: BIGSERIAL for the sequences, and ``design_owners.seq``
#: for the order owners were first written in (SQLite's rowid).
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS design_settings (
  design TEXT PRIMARY KEY, config TEXT NOT NULL, made_at TEXT NOT NULL, changes TEXT NOT NULL DEFAULT '[]');
CREATE TABLE IF NOT EXISTS design_owners (
  seq BIGSERIAL, design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL, version BIGINT NOT NULL,
  PRIMARY KEY (design, scope, owner));
CREATE TABLE IF NOT EXISTS design_records (
  seq BIGSERIAL PRIMARY KEY,
  design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL,
  id BIGINT NOT NULL, key TEXT,
  text TEXT NOT NULL, at TEXT NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL, session TEXT NOT NULL,
  extra TEXT,
  UNIQUE (design, id), UNIQUE (design, scope, owner, key));
CREATE INDEX IF NOT EXISTS design_records_by_owner ON design_records (design, scope, owner, seq);
CREATE TABLE IF NOT EXISTS design_docs (
  design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (design, scope, owner, name));
CREATE TABLE IF NOT EXISTS design_logs (
  seq BIGSERIAL PRIMARY KEY,
  design TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS design_logs_by_owner ON design_logs (design, scope, owner, name, seq);
CREATE TABLE IF NOT EXISTS design_shared (
  design TEXT NOT NULL, scope TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, version BIGINT NOT NULL,
  PRIMARY KEY (design, scope, name));
CREATE TABLE IF NOT EXISTS design_counters (design TEXT PRIMARY KEY, next BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS design_erasures (
  id BIGSERIAL PRIMARY KEY, at TEXT NOT NULL, design TEXT NOT NULL, scope TEXT NOT NULL,
  owner_sha256 TEXT NOT NULL, rows BIGINT NOT NULL);
"""


def is_postgres(spec: object) -> bool:
    """Whether a store spec names a PostgreSQL store (a ``postgresql://`` URL) rather than a file."""
    return isinstance(spec, str) and spec.split("://", 1)[0].lower() in SCHEMES and "://" in spec


def split_url(url: str) -> tuple[str, str, str]:
    """``url`` as (what psycopg connects with, the schema, the URL as messages show it: no password)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), DEFAULT_SCHEMA)
    if not _IDENTIFIER.fullmatch(schema):
        raise MemstreamError(f"schema {schema[:40]!r} in the store URL is not a plain name; use lower-case "
                             "letters, digits and _ (at most 63), e.g. ?schema=memory")
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
    host = parts.netloc.rsplit("@", 1)[-1]
    user = parts.username or ""
    shown = urlunsplit((parts.scheme, f"{user}@{host}" if user else host, parts.path, f"schema={schema}", ""))
    return conninfo, schema, shown


def lock_id(*names: str) -> int:
    """A 64-bit advisory lock key for ``names`` (one owner's, or one scope's shared documents)."""
    hashed = hashlib.blake2b("\0".join(names).encode(), digest_size=8).digest()
    return int.from_bytes(hashed, "big", signed=True)


def reason(error: BaseException) -> str:
    """PostgreSQL's (or psycopg's) message for ``error``: its first line, short enough for a one-line error."""
    text = str(error).strip()
    return text.splitlines()[0][:160] if text else type(error).__name__


class PostgresStore:
    """The rows of every design in one PostgreSQL schema; ``read_only`` opens it in read-only transactions."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self._psycopg = import_extra("psycopg", feature="a PostgreSQL design store", extra="postgres")
        pool = import_extra("psycopg_pool", feature="a PostgreSQL design store", extra="postgres")
        self._conninfo, self.schema, self.path = split_url(url)
        self._read_only = read_only
        self._open: psycopg.Connection[Any] | None = None  # the transaction open now, if any
        self._made()
        self.pool = pool.ConnectionPool(self._conninfo, min_size=1, max_size=POOL_SIZE, open=False,
                                        timeout=CONNECT_TIMEOUT_S, configure=self._configure,
                                        kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S})
        self.pool.open(wait=False)  # its first connection is made while the caller goes on (it waits on first use)

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def failures(self) -> tuple[type[BaseException], ...]:
        return (self._psycopg.Error,)

    @property
    def in_transaction(self) -> bool:
        return self._open is not None

    def refused(self, error: BaseException, *, rollback: bool = True) -> MemstreamError:
        if rollback:
            self.rollback()
        return MemstreamError(f"{self.path}: the write was not stored ({reason(error)}); nothing of it was kept")

    def close(self) -> None:
        self.rollback()
        self.pool.close()

    # -- connections ----------------------------------------------------------------------------

    @contextmanager
    def _errors(self, doing: str = "cannot read or write") -> Iterator[None]:
        """PostgreSQL's errors as one line naming the store (never a traceback)."""
        try:
            yield
        except self._psycopg.Error as e:
            raise MemstreamError(f"{self.path}: {doing} ({reason(e)})") from None

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Every connection of the pool: the store's schema first on the search path; read-only if opened so."""
        conn.execute(f"SET search_path TO {self.schema}")
        if self._read_only:
            conn.execute("SET default_transaction_read_only = on")

    def _made(self) -> None:
        """Check the schema is a design store this code reads (making it first, unless read-only), on a
        connection of its own: a server that cannot be reached is said here, with PostgreSQL's reason."""
        with self._errors("cannot connect"), \
                self._psycopg.connect(self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            tables = {t for (t,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (self.schema,))}
            meta: dict[str, str] = {}
            if "meta" in tables:
                meta = dict(conn.execute(f"SELECT key, value FROM {self.schema}.meta").fetchall())
            if tables and meta.get("format") != FORMAT:
                raise MemstreamError(f"{self.path}: schema {self.schema} holds tables that are not a memstream "
                                     f"{DESIGN_STORE.noun}; name another schema (?schema=NAME)")
            version = meta.get("schema_version", "1")
            if not version.isdecimal() or int(version) > DESIGN_STORE.version:
                raise MemstreamError(f"{self.path} was made by a newer memstream (format {version[:20]}); "
                                     "upgrade memstream")
            if not tables and self._read_only:
                raise MemstreamError(f"{self.path} holds no {DESIGN_STORE.held} yet; {DESIGN_STORE.make}")
            if not self._read_only and not DESIGN_STORE.tables <= tables:
                with conn.transaction():  # two processes making one store make it once
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id(self.schema, "made"),))
                    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
                    conn.execute(f"SET LOCAL search_path TO {self.schema}")
                    conn.execute(SCHEMA)
                    conn.cursor().executemany("INSERT INTO meta VALUES (%s, %s) ON CONFLICT DO NOTHING",
                                              [("format", FORMAT), ("schema_version", str(DESIGN_STORE.version))])

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The open transaction's connection, or one of the pool's (each statement then its own transaction)."""
        if self._open is not None:
            with self._errors():
                yield self._open
            return
        with self._errors(), self.pool.connection() as conn:
            yield conn

    def _in_transaction(self, what: str) -> psycopg.Connection[Any]:
        assert self._open is not None, f"{what} runs inside a write transaction"
        return self._open

    def _lock(self, *names: str) -> None:
        with self._errors():
            self._in_transaction("a lock").execute("SELECT pg_advisory_xact_lock(%s)",
                                                   (lock_id(self.schema, *names),))

    # -- transactions ---------------------------------------------------------------------------

    def begin(self, key: OwnerKey | None = None) -> None:
        """Open a write transaction holding ``key``'s owner lock (waiting while another process writes that
        owner); :meth:`commit` or :meth:`rollback` ends it. Writes of other owners go on meanwhile."""
        if self._read_only:
            raise MemstreamError(f"{self.path} is open read-only; open it for writing to change it")
        assert self._open is None, "one write transaction at a time"
        with self._errors("cannot write"):
            conn = self.pool.getconn()
            try:
                conn.execute("BEGIN")
            except BaseException:
                self.pool.putconn(conn)
                raise
        self._open = conn
        if key is not None:
            try:
                self._lock("owner", key.design, key.scope, key.owner)
            except BaseException:
                self.rollback()
                raise

    def commit(self) -> None:
        conn = self._in_transaction("commit")
        try:
            conn.execute("COMMIT")
        except self._psycopg.Error as e:
            self.rollback()
            raise MemstreamError(f"{self.path}: the write was not stored ({reason(e)}); "
                                 "nothing of it was kept") from None
        self._open = None
        self.pool.putconn(conn)

    def rollback(self) -> None:
        conn, self._open = self._open, None
        if conn is None:
            return
        try:
            conn.execute("ROLLBACK")
        except self._psycopg.Error:
            conn.close()  # a broken connection: the server rolled the transaction back; the pool makes another
        self.pool.putconn(conn)

    @contextmanager
    def writing(self) -> Iterator[psycopg.Connection[Any]]:
        """One write transaction (or the one already open), committed at the end, rolled back on failure."""
        if self._open is not None:
            yield self._open
            return
        self.begin()
        try:
            yield self._in_transaction("writing")
        except BaseException:
            self.rollback()
            raise
        self.commit()

    @contextmanager
    def reading(self) -> Iterator[psycopg.Connection[Any]]:
        """One committed state for everything read inside (a repeatable-read snapshot; inside a write, that
        write's, where the owner's lock keeps the owner's rows still)."""
        if self._open is not None:
            yield self._open
            return
        with self._errors(), self.pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._open = conn
            try:
                yield conn
            finally:
                self._open = None
                conn.execute("ROLLBACK")

    # -- settings -------------------------------------------------------------------------------

    def designs(self) -> dict[str, dict[str, Any]]:
        with self._connection() as db:
            return {d: json.loads(c) for d, c in db.execute("SELECT design, config FROM design_settings")}

    def record_settings(self, design: str, config: Mapping[str, Any], *, change: bool = False) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.writing() as db:
            self._lock("settings", design)
            row = db.execute("SELECT config, changes FROM design_settings WHERE design=%s", (design,)).fetchone()
            if row is None:
                db.execute("INSERT INTO design_settings VALUES (%s,%s,%s,'[]')", (design, dumps(config), now))
            elif change:
                changes = [*json.loads(row[1]), {"at": now, "from": json.loads(row[0]), "to": dict(config)}]
                db.execute("UPDATE design_settings SET config=%s, changes=%s WHERE design=%s",
                           (dumps(config), dumps(changes), design))

    # -- owners ---------------------------------------------------------------------------------

    def owners(self, design: str, scope: str) -> list[str]:
        with self._connection() as db:
            return [o for (o,) in db.execute(
                "SELECT owner FROM design_owners WHERE design=%s AND scope=%s ORDER BY seq", (design, scope))]

    def scopes(self, design: str) -> list[str]:
        with self._connection() as db:
            return [s for (s,) in db.execute(
                "SELECT DISTINCT scope FROM design_owners WHERE design=%s ORDER BY scope", (design,))]

    def version(self, key: OwnerKey) -> int:
        with self._connection() as db:
            row = db.execute("SELECT version FROM design_owners WHERE design=%s AND scope=%s AND owner=%s",
                             (key.design, key.scope, key.owner)).fetchone()
        return int(row[0]) if row else 0

    def read_owner(self, key: OwnerKey) -> tuple[Held, OwnerRows]:
        where = (key.design, key.scope, key.owner)
        with self.reading() as db:
            version = self.version(key)
            rows = db.execute("SELECT id, text, at, source, kind, session, extra FROM design_records "
                              "WHERE design=%s AND scope=%s AND owner=%s ORDER BY seq", where).fetchall()
            docs = dict(db.execute("SELECT name, value FROM design_docs WHERE design=%s AND scope=%s AND owner=%s",
                                   where).fetchall())
            logs: dict[str, list[Any]] = {}
            for name, value in db.execute("SELECT name, value FROM design_logs WHERE design=%s AND scope=%s AND "
                                          "owner=%s ORDER BY seq", where):
                logs.setdefault(name, []).append(json.loads(value))
        records = [Record(int(i), key.owner, text, datetime.fromisoformat(at), source, kind, session)
                   for i, text, at, source, kind, session, _ in rows]
        extras = {int(i): json.loads(extra) for i, *_, extra in rows if extra is not None}
        held = Held(version, len(records), dict(docs), {name: len(items) for name, items in logs.items()})
        return held, OwnerRows(records, extras, {n: json.loads(v) for n, v in docs.items()}, logs)

    def known_keys(self, key: OwnerKey, keys: Sequence[str]) -> dict[str, int]:
        with self._connection() as db:
            return {k: int(i) for k, i in db.execute(
                "SELECT key, id FROM design_records WHERE design=%s AND scope=%s AND owner=%s AND key = ANY(%s)",
                (key.design, key.scope, key.owner, list(keys)))}

    def entry_keys(self, key: OwnerKey) -> dict[int, str]:
        with self._connection() as db:
            return {int(i): k for i, k in db.execute(
                "SELECT id, key FROM design_records WHERE design=%s AND scope=%s AND owner=%s AND key IS NOT NULL",
                (key.design, key.scope, key.owner))}

    def write_owner(self, key: OwnerKey, rows: OwnerRows, held: Held, keys: Mapping[int, str]) -> Held | None:
        """Store what is new in ``rows`` since ``held`` (inside a write transaction, under the owner's lock),
        raising the owner's version; None, writing nothing, if another process wrote the owner since."""
        self._lock("owner", key.design, key.scope, key.owner)  # held already if begin named the owner
        if self.version(key) != held.version:
            return None
        where = (key.design, key.scope, key.owner)
        docs = {name: dumps(value) for name, value in rows.docs.items()}
        logs = {name: len(items) for name, items in rows.logs.items()}
        with self._errors(), self._in_transaction("write_owner").cursor() as db:
            db.executemany(
                "INSERT INTO design_records (design, scope, owner, id, key, text, at, source, kind, session, extra) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                [(*where, r.id, keys.get(r.id), r.text, r.at.isoformat(), r.source, r.kind, r.session,
                  dumps(rows.extras[r.id]) if r.id in rows.extras else None) for r in rows.records[held.records:]])
            db.executemany("INSERT INTO design_docs VALUES (%s,%s,%s,%s,%s) ON CONFLICT (design, scope, owner, name) "
                           "DO UPDATE SET value = EXCLUDED.value",
                           [(*where, name, text) for name, text in docs.items() if held.docs.get(name) != text])
            db.executemany("DELETE FROM design_docs WHERE design=%s AND scope=%s AND owner=%s AND name=%s",
                           [(*where, name) for name in held.docs if name not in docs])
            db.executemany("INSERT INTO design_logs (design, scope, owner, name, value) VALUES (%s,%s,%s,%s,%s)",
                           [(*where, name, dumps(item)) for name, items in rows.logs.items()
                            for item in items[held.logs.get(name, 0):]])
            # versions come from one counter per design, never reused (a forgotten owner written again must
            # not take a version another process still holds of its forgotten memory: see store.py)
            db.execute("INSERT INTO design_counters VALUES (%s, 1) ON CONFLICT DO NOTHING",
                       (versions_counter(key.design),))
            db.execute("UPDATE design_counters SET next = GREATEST(next, %s) + 1 WHERE design = %s RETURNING next - 1",
                       (held.version + 1, versions_counter(key.design)))
            (version,) = db.fetchone()  # type: ignore[misc]
            db.execute("INSERT INTO design_owners (design, scope, owner, version) VALUES (%s,%s,%s,%s) "
                       "ON CONFLICT (design, scope, owner) DO UPDATE SET version = EXCLUDED.version", (*where, version))
        return Held(int(version), len(rows.records), docs, logs)

    def change_record(self, key: OwnerKey, held: Held, record_id: int, text: str | None) -> Held | None:
        """Update or delete one record of the owner (see :meth:`~.rows.Rows.change_record`)."""
        self._lock("owner", key.design, key.scope, key.owner)
        if self.version(key) != held.version:
            return None
        where = (key.design, key.scope, key.owner, record_id)
        with self._errors(), self._in_transaction("change_record").cursor() as db:
            if text is None:
                db.execute("DELETE FROM design_records WHERE design=%s AND scope=%s AND owner=%s AND id=%s", where)
            else:
                db.execute("UPDATE design_records SET text=%s WHERE design=%s AND scope=%s AND owner=%s AND id=%s",
                           (text, *where))
            assert db.rowcount == 1, "a record the owner holds at the version read is in the store"
            db.execute("INSERT INTO design_logs (design, scope, owner, name, value) VALUES (%s,%s,%s,%s,%s)",
                       (*where[:3], CHANGES,
                        dumps(change_item(record_id, text, datetime.now(UTC).isoformat(timespec="seconds")))))
            db.execute("INSERT INTO design_counters VALUES (%s, 1) ON CONFLICT DO NOTHING",
                       (versions_counter(key.design),))
            db.execute("UPDATE design_counters SET next = GREATEST(next, %s) + 1 WHERE design = %s RETURNING next - 1",
                       (held.version + 1, versions_counter(key.design)))
            (version,) = db.fetchone()  # type: ignore[misc]
            db.execute("UPDATE design_owners SET version=%s WHERE design=%s AND scope=%s AND owner=%s",
                       (version, *where[:3]))
        return held_after_change(held, int(version), text)

    # -- what is shared across owners -----------------------------------------------------------

    def read_shared(self, design: str, scope: str) -> dict[str, tuple[int, Any]]:
        """Each shared document of ``design`` in ``scope``: its version and value. Inside a write transaction
        it takes the scope's shared lock first, so what the write read stays true until it commits."""
        if self._open is not None and not self._read_only:
            self._lock("shared", design, scope)
        with self._connection() as db:
            return {name: (int(version), json.loads(value)) for name, value, version in db.execute(
                "SELECT name, value, version FROM design_shared WHERE design=%s AND scope=%s", (design, scope))}

    def write_shared(self, design: str, scope: str, changed: Mapping[str, tuple[int, Any]]) -> dict[str, int] | None:
        conn = self._in_transaction("write_shared")
        now = {n: v for n, (v, _) in self.read_shared(design, scope).items()}
        if any(now.get(name, 0) != version for name, (version, _) in changed.items()):
            return None
        with self._errors(), conn.cursor() as db:
            db.executemany("INSERT INTO design_shared VALUES (%s,%s,%s,%s,%s) ON CONFLICT (design, scope, name) "
                           "DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version",
                           [(design, scope, name, dumps(value), version + 1)
                            for name, (version, value) in changed.items()])
        return {name: version + 1 for name, (version, _) in changed.items()}

    # -- ids ------------------------------------------------------------------------------------

    def reserve_ids(self, design: str, n: int = ID_BLOCK) -> int:
        """The first of ``n`` record ids nobody else will take: one atomic ``UPDATE ... RETURNING``, committed
        at once on a connection of its own (so a write transaction never holds the counter's row)."""
        if self._read_only:
            raise MemstreamError(f"{self.path} is open read-only; open it for writing to change it")
        with self._errors("cannot write"), self.pool.connection() as db:
            row = db.execute("INSERT INTO design_counters VALUES (%s, %s) ON CONFLICT (design) "
                             "DO UPDATE SET next = design_counters.next + %s RETURNING next - %s",
                             (design, 1 + n, n, n)).fetchone()
        assert row is not None
        return int(row[0])

    def give_back_ids(self, design: str, start: int, end: int) -> None:
        """Return the unused ids ``start``..``end`` - 1 of a block, if no process reserved after it."""
        with self._connection() as conn:
            conn.execute("UPDATE design_counters SET next=%s WHERE design=%s AND next=%s", (start, design, end))

    def peek_id(self, design: str) -> int:
        with self._connection() as db:
            row = db.execute("SELECT next FROM design_counters WHERE design=%s", (design,)).fetchone()
        return int(row[0]) if row else 1

    # -- forgetting -----------------------------------------------------------------------------

    def forget(self, key: OwnerKey) -> int:
        """Delete every row of the owner (inside a write transaction, under its lock) and log the erasure;
        the rows deleted. See :meth:`checkpoint` for what is then left on the server's disk."""
        self._lock("owner", key.design, key.scope, key.owner)
        where = (key.design, key.scope, key.owner)
        gone = 0
        with self._errors(), self._in_transaction("forget").cursor() as db:
            for table in OWNER_TABLES:
                db.execute(f"DELETE FROM {table} WHERE design=%s AND scope=%s AND owner=%s", where)
                gone += db.rowcount
            db.execute("INSERT INTO design_erasures (at, design, scope, owner_sha256, rows) VALUES (%s,%s,%s,%s,%s)",
                       (datetime.now(UTC).isoformat(timespec="seconds"), key.design, key.scope,
                        digest(key.owner), gone))
        return gone

    def erasures(self) -> list[dict[str, Any]]:
        with self._connection() as db:
            cursor = db.execute("SELECT at, design, scope, owner_sha256, rows FROM design_erasures ORDER BY id")
            return [dict(zip(("at", "design", "scope", "owner_sha256", "rows"), row, strict=True)) for row in cursor]

    def checkpoint(self) -> None:
        """``VACUUM`` the tables a forget deletes from (outside any transaction).

        What it guarantees: once no transaction older than the forget is still open, the deleted rows'
        versions are removed from the tables' pages and their index entries from the indexes, so neither a
        query nor a page-level reader of the live tables finds them, and their space is reused by later
        writes. What it does not: PostgreSQL does not overwrite freed space at once, so the bytes may stay
        in the data files until reused; the write-ahead log keeps them until its segments are recycled, and
        a replica, a base backup or a WAL archive keeps its own copy. (A transaction still open elsewhere
        holds the rows back from this VACUUM: the next one, or autovacuum, removes them.)"""
        with self._errors("forgot the owner, but could not vacuum"), self.pool.connection() as db:
            for table in OWNER_TABLES:
                db.execute(f"VACUUM {table}")

    # -- checking -------------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Every problem of the store's rows, one line each (what :func:`.store.check_rows` finds in a file)."""
        problems: list[str] = []
        with self.reading() as db:
            for design, most, counter in db.execute(
                    "SELECT r.design, MAX(r.id), c.next FROM design_records r "
                    "LEFT JOIN design_counters c USING (design) GROUP BY r.design, c.next"):
                if counter is None or most >= counter:
                    problems.append(f"{design}: record id {most} was never handed out (next id {counter})")
            for design, scope, owner in db.execute(
                    "SELECT DISTINCT design, scope, owner FROM design_records EXCEPT "
                    "SELECT design, scope, owner FROM design_owners"):
                problems.append(f"{design}: owner {owner!r} (scope {scope!r}) has records but no version")
            for table, row, column in (("design_records", "seq", "extra"), ("design_logs", "seq", "value"),
                                       ("design_docs", "name", "value"), ("design_shared", "name", "value")):
                for at, value in db.execute(f"SELECT {row}, {column} FROM {table} WHERE {column} IS NOT NULL"):
                    try:
                        json.loads(value)
                    except ValueError:
                        problems.append(f"{table} row {at}: {column} is not JSON")
            for seq, at in db.execute("SELECT seq, at FROM design_records"):
                try:
                    datetime.fromisoformat(at)
                except ValueError:
                    problems.append(f"design_records row {seq}: time {at[:40]!r} is not a time")
        return problems[:50]
