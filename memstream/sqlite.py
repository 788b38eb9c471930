"""memstream's SQLite files (stream, facts, profile, call cache) opened, changed and checked one way.

Why: each store wrote its own path check, settings, transaction and integrity check, and they drifted
apart (one opened any file and added its table to it, one committed a failed lease, two read read-only
files two ways). A store says what it is in its ``meta`` table: ``format`` (:attr:`StoreKind.marker`)
and ``schema_version`` (none recorded, as in profile files, opens as 1; :func:`check_file` reports it
missing); a store that records no marker (the call cache) is known by its tables.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from memstream.errors import MemstreamError
from memstream.files import not_a_file

log = logging.getLogger(__name__)

#: How long a write waits for another process's write to finish before it gives up.
BUSY_TIMEOUT_S = 60.0
#: Set to 1 to read every file with ``immutable=1`` (read-only media SQLite cannot tell apart).
#: What reading a damaged file raises: SQLite's errors, and a text (or SQLite's own message quoting a damaged
#: schema) that is no longer UTF-8.
DAMAGED = (sqlite3.Error, UnicodeDecodeError)
IMMUTABLE_ENV = "MEMSTREAM_READ_IMMUTABLE"


@dataclass(frozen=True)
class StoreKind:
    """What a store file is, in the words its messages use."""

    noun: str  #: "not a memstream {noun}", "no {noun} at ..."
    marker: str | None  #: the ``format`` its ``meta`` table records; None: it records none (its tables say)
    tables: frozenset[str]  #: the tables every file of the kind holds
    make: str  #: how a user makes one
    reads: str = "use a read-only command"  #: how to read it without writing (said when it cannot be written)
    held: str = ""  #: "holds no {held} yet" (the noun if empty)
    version: int = 1  #: the newest format this code reads


class Connection(sqlite3.Connection):
    """A connection that knows its file: path, kind, whether it only reads (``immutable``: a file nothing
    can change, read without locks) and whether the store was new (no tables) when it opened."""

    path: str
    kind: StoreKind
    read_only = immutable = new = False


def read_only_media(path: Path) -> bool:
    """Whether this process cannot write the file or its folder (so nothing else does), or the user said so."""
    return os.environ.get(IMMUTABLE_ENV) == "1" or not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def reason(error: BaseException) -> str:
    """SQLite's message for ``error``: its first line, short enough for a one-line error."""
    return str(error).splitlines()[0][:80] if str(error) else type(error).__name__


def connect(path: str | Path, *, kind: StoreKind, read_only: bool = False, create: bool = True) -> Connection:
    """Open the store of ``kind`` at ``path`` (``":memory:"``: in RAM) with WAL where it writes, the busy
    timeout and foreign keys, or refuse it in one line. ``create``: a missing or empty file is a new store
    (:attr:`Connection.new`, its tables the caller's to make). ``read_only``: it writes nothing at all."""
    path, in_memory = str(path), str(path) == ":memory:"
    if not in_memory:
        _check_path(Path(path), kind, create=create and not read_only, write=not read_only)
    try:
        db = _open_read(Path(path), kind) if read_only and not in_memory else _open(path, kind)
    except DAMAGED as e:
        raise MemstreamError(f"{path} is not a memstream {kind.noun} ({reason(e)})") from None
    db.read_only = read_only
    try:
        db.new = verify(db)
        if db.new and not create:
            raise MemstreamError(f"{path} holds no {kind.held or kind.noun} yet; {kind.make}")
        db.execute("PRAGMA foreign_keys=ON")
        with _writes(db):
            if not read_only and not in_memory:
                _wal(db)
            if not read_only:
                db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash may lose the last commits, never the file
    except BaseException:
        db.close()
        raise
    return db


def _wal(db: Connection) -> None:
    """Put the file in WAL mode (nothing to do if it is already), waiting for another process's write as any
    write waits. Why: SQLite does not retry ``journal_mode=WAL`` on a busy file (it holds a read lock when it
    asks for the write lock, so the busy handler is not called): a process opening a new file while another
    was making it failed at once with "database is locked"."""
    deadline, pause = time.monotonic() + BUSY_TIMEOUT_S, 0.002
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if not _busy(e) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


def _busy(error: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds a lock (not a read-only or broken file)."""
    code = getattr(error, "sqlite_errorcode", None)
    return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) if code is not None else "locked" in str(error)


def verify(db: Connection) -> bool:
    """Refuse in one line a file that is not a store of the connection's kind that this code reads;
    whether it is a new store (no tables)."""
    kind, meta = db.kind, {}
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" in tables:
            meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('format', 'schema_version')"))
    except DAMAGED as e:
        raise MemstreamError(f"{db.path} is not a memstream {kind.noun} ({reason(e)})") from None
    if tables and (meta.get("format") != kind.marker or (kind.marker is None and not kind.tables <= tables)):
        what = f"format {meta['format']!r}" if "format" in meta else f"tables {', '.join(sorted(tables)[:4])}"
        raise MemstreamError(f"{db.path} is an SQLite file but not a memstream {kind.noun} ({what}); "
                             "use another file name")
    version = str(meta.get("schema_version", "1"))
    if not (version.isdecimal() and len(version) < 10):
        raise MemstreamError(f"{db.path} records an unreadable format version ({version[:20]!r}); it is damaged")
    if int(version) > kind.version:
        raise MemstreamError(f"{db.path} was made by a newer memstream (format {version}); upgrade memstream")
    return not tables


def create_tables(db: Connection, script: str, meta: dict[str, str]) -> None:
    """Make the store's missing tables (``script``: ``CREATE ... IF NOT EXISTS``) and, in a new store,
    record what it is (``meta``), in one transaction: two processes making one file make it once."""
    with _writes(db):
        db.executescript(f"BEGIN {'IMMEDIATE' if db.new else 'DEFERRED'};{script}")  # (executescript commits first)
        if db.new and meta:
            db.executemany("INSERT OR IGNORE INTO meta VALUES (?,?)", meta.items())
        db.execute("COMMIT")


@contextmanager
def transaction(db: Connection, *, write: bool = True) -> Iterator[Connection]:
    """One transaction, committed at the end, rolled back on any exception. A write takes the write lock
    from its start (``BEGIN IMMEDIATE``): what it reads (the next id, whether a version is the latest) stays
    true until it commits, and another process writing meanwhile waits up to the busy timeout. A read
    sees one committed state (inside a write, that write's)."""
    if not write and db.in_transaction:
        yield db
        return
    if write and db.read_only:
        raise MemstreamError(f"{db.path} is open read-only; open it for writing to change it")
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield db
    except BaseException:
        if db.in_transaction:  # SQLite rolls some failures (a full disk) back itself
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def integrity(db: sqlite3.Connection, *, quick: bool = False, limit: int = 20) -> list[str]:
    """SQLite's own check of the file (``quick``: indexes not matched to tables), a line per problem."""
    rows = db.execute(f"PRAGMA {'quick_check' if quick else 'integrity_check'}({int(limit)})")
    return [f"integrity: {row[0]}" for row in rows if row[0] != "ok"]


def check_file(path: str | Path, kind: StoreKind, deeper: Callable[[Connection], list[str]]) -> list[str]:
    """Every problem of the store file at ``path``, one line each (none if it is sound), reading only:
    SQLite's integrity, the kind's tables, format and version, then ``deeper``'s (the store's own)."""
    path = Path(path)
    if not path.is_file():
        return [not_a_file(path, kind.noun) if path.exists() or path.is_symlink() else f"{path}: no such file"]
    try:
        db = _open_read(path, kind)
    except DAMAGED as e:
        return [f"{path}: cannot open ({reason(e)})"]
    with closing(db):
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            problems = integrity(db)
            if problems or not kind.tables <= tables:
                return problems or [f"not a memstream {kind.noun} (tables: {', '.join(sorted(tables)) or 'none'})"]
            meta = dict(db.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
            if meta.get("format") != kind.marker:
                problems.append(f"format is {meta.get('format')!r}, not {kind.marker!r}")
            if kind.marker is not None and meta.get("schema_version") != str(kind.version):
                problems.append(f"schema version {meta.get('schema_version')!r}; this memstream reads {kind.version}")
            return problems + deeper(db)
        except DAMAGED as e:
            return [f"{path}: damaged ({reason(e)})"]


def copy_to(db: sqlite3.Connection, path: str | Path) -> None:
    """Write a copy of the whole store to ``path`` (SQLite's online backup: one consistent state)."""
    with closing(sqlite3.connect(str(path))) as copy:
        db.backup(copy)


def _check_path(path: Path, kind: StoreKind, *, create: bool, write: bool) -> None:
    if path.is_dir():
        raise MemstreamError(f"{path} is a directory, not a {kind.noun}")
    if path.exists() and not path.is_file():
        raise MemstreamError(f"{path} is not a regular file (a device, a pipe or a socket); choose a file")
    if not path.parent.is_dir():
        raise MemstreamError(f"no folder {path.parent}; create it first, or choose another path")
    if not path.exists():
        if not create:
            raise MemstreamError(f"no {kind.noun} at {path}; {kind.make}")
        if not os.access(path.parent, os.W_OK):
            raise MemstreamError(f"cannot create {path}: the folder {path.parent} is not writable")
    elif not os.access(path, os.R_OK):
        raise MemstreamError(f"cannot read {path}: permission denied")
    elif write and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        raise MemstreamError(f"cannot write to {path} (it or its folder is read-only); check its permissions, "
                             f"or {kind.reads}")


@contextmanager
def _writes(db: Connection) -> Iterator[None]:
    """A write SQLite refuses (a read-only file or folder, a full disk) as one line, nothing half-done."""
    try:
        yield
    except sqlite3.OperationalError as e:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise MemstreamError(f"cannot write to {db.path} ({reason(e)}); check its permissions, "
                             f"or {db.kind.reads}") from None


def _open(path: str, kind: StoreKind, query: str = "") -> Connection:
    """A connection to ``path`` (with ``query``: to its ``file:`` URI with these parameters)."""
    target = f"{Path(path).resolve().as_uri()}?{query}" if query else path
    db = sqlite3.connect(target, uri=bool(query), isolation_level=None, check_same_thread=False,
                         timeout=BUSY_TIMEOUT_S, factory=Connection)
    assert isinstance(db, Connection)
    db.path, db.kind, db.read_only, db.immutable = path, kind, bool(query), query == "immutable=1"
    return db


def _open_read(path: Path, kind: StoreKind) -> Connection:
    """A read-only connection; ``immutable=1`` where ``mode=ro`` cannot read and nothing can be written
    (``mode=ro`` makes a WAL file's ``-shm``, which read-only media refuse: every read once called such
    an intact file "not a memstream stream"), warning that a ``-wal`` goes unread there."""
    if os.environ.get(IMMUTABLE_ENV) != "1":
        db = None
        try:
            db = _open(str(path), kind, "mode=ro")
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except DAMAGED as e:
            if db is not None:
                db.close()
            if not isinstance(e, sqlite3.OperationalError) or not read_only_media(path):
                raise
    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        log.warning("%s is read as it stood at its last checkpoint: its -wal file (%d bytes, written by a "
                    "process that did not close it) cannot be read on read-only media", path, wal.stat().st_size)
    return _open(str(path), kind, "immutable=1")
