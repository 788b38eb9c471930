"""The stream on disk: one SQLite file (WAL), append-only by construction.

Memories are rows that SQLite triggers forbid to update or delete; accesses
are rows of their own log, and the latest one per memory is its last access.
Embeddings are stored with their memories, so the FAISS index can be rebuilt
exactly on open. ``":memory:"`` keeps everything in RAM.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import memstream.sqlite as sqlite
from memstream.errors import MemstreamError
from memstream.stream import damage

log = logging.getLogger(__name__)

#: What a stream file is: how it says so in its meta table, and the words its messages use.
FORMAT = "memstream-stream"  #: what its meta table records
STREAM = sqlite.StoreKind(noun="stream", marker=FORMAT, tables=frozenset({"meta", "memories", "accesses"}),
                          make="create one with `memstream add` or `import`",
                          reads="read it with a read-only command (inspect, recall --no-touch)")
SCHEMA_VERSION = STREAM.version

#: The triggers that refuse deletes: dropped and made again only inside the transaction of :meth:`Store.rewind`
#: or :meth:`Store.forget` (the two sanctioned exceptions to append-only).
_DELETE_TRIGGERS = {
    "memories_append_only_delete": "CREATE TRIGGER IF NOT EXISTS memories_append_only_delete BEFORE DELETE ON "
                                   "memories BEGIN SELECT RAISE(ABORT, 'memories are append-only'); END;",
    "accesses_append_only_delete": "CREATE TRIGGER IF NOT EXISTS accesses_append_only_delete BEFORE DELETE ON "
                                   "accesses BEGIN SELECT RAISE(ABORT, 'the access log is append-only'); END;",
}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories(
  id INTEGER PRIMARY KEY,
  owner TEXT NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_s REAL NOT NULL,
  importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 10),
  cites TEXT NOT NULL,
  metadata TEXT NOT NULL,
  embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS memories_by_owner ON memories(owner, id);
CREATE TABLE IF NOT EXISTS accesses(
  memory_id INTEGER NOT NULL REFERENCES memories(id),
  accessed_at TEXT NOT NULL,
  accessed_s REAL NOT NULL);
CREATE INDEX IF NOT EXISTS accesses_by_memory ON accesses(memory_id, accessed_s);
CREATE TRIGGER IF NOT EXISTS memories_append_only_update BEFORE UPDATE ON memories
  BEGIN SELECT RAISE(ABORT, 'memories are append-only'); END;
{memories_delete}
CREATE TRIGGER IF NOT EXISTS accesses_append_only_update BEFORE UPDATE ON accesses
  BEGIN SELECT RAISE(ABORT, 'the access log is append-only'); END;
{accesses_delete}
CREATE TRIGGER IF NOT EXISTS memories_append_only_replace BEFORE INSERT ON memories
  WHEN EXISTS (SELECT 1 FROM memories WHERE id = NEW.id)
  BEGIN SELECT RAISE(ABORT, 'memories are append-only'); END;
CREATE TRIGGER IF NOT EXISTS accesses_append_only_replace BEFORE INSERT ON accesses
  WHEN NEW.rowid > 0 AND EXISTS (SELECT 1 FROM accesses WHERE rowid = NEW.rowid)
  BEGIN SELECT RAISE(ABORT, 'the access log is append-only'); END;
""".format(memories_delete=_DELETE_TRIGGERS["memories_append_only_delete"],
           accesses_delete=_DELETE_TRIGGERS["accesses_append_only_delete"])
#: The triggers every stream file holds: what `memstream check` looks for.
TRIGGERS = ("memories_append_only_update", "memories_append_only_delete", "memories_append_only_replace",
            "accesses_append_only_update", "accesses_append_only_delete", "accesses_append_only_replace")

#: Meta keys a forget leaves: the newest id ever handed out, and how many owners were forgotten.
IDS_THROUGH = "ids.through"
ERASURES = "erasures"

MEMORY_COLUMNS = "id, owner, kind, text, created_at, created_s, importance, cites, metadata"
Row = tuple[Any, ...]


#: Ids per ``IN (...)`` query at most (and never more than this SQLite takes parameters a statement).
IDS_PER_QUERY = 30_000


@dataclass(frozen=True)
class StreamMark:
    """How far a stream file had been written: what a checkpoint records instead of a copy of the file."""

    memories_through: int
    accesses_through: int
    meta: dict[str, str]

    def as_dict(self) -> dict[str, object]:
        return {"memories_through": self.memories_through, "accesses_through": self.accesses_through,
                "meta": self.meta}

    @classmethod
    def from_dict(cls, data: object) -> StreamMark:
        """A mark read back from a checkpoint; ValueError if it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
            raise ValueError("no stream mark")
        through, accesses = data.get("memories_through"), data.get("accesses_through")
        if not isinstance(through, int) or not isinstance(accesses, int) or through < 0 or accesses < 0:
            raise ValueError("a stream mark that is not two counts")
        return cls(through, accesses, {str(k): str(v) for k, v in data["meta"].items()})


class Store:
    """Reads and appends the SQLite file behind a :class:`~memstream.stream.MemoryStream`."""

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False) -> None:
        """Open the stream at ``path``.

        ``create``: make the file if it does not exist (or is empty). ``readonly``: never write to
        the file (what `inspect`, `recall --no-touch` and `check` do). Either way, a file that is
        not a memstream stream is refused, never converted.
        """
        self.path = str(path)
        self.readonly = readonly
        self.damaged: dict[int, str] = {}  # id -> why: rows every read skips (see memstream.stream.damage)
        self._screened = False
        self.in_memory = self.path == ":memory:"
        self.db = sqlite.connect(self.path, kind=STREAM, read_only=readonly, create=create)
        self.immutable = self.db.immutable  # read-only media: see memstream.sqlite
        self.db.execute("PRAGMA recursive_triggers=ON")  # REPLACE's implicit deletes meet the triggers too
        if not readonly:
            sqlite.create_tables(self.db, _SCHEMA, {"format": FORMAT, "schema_version": str(SCHEMA_VERSION)})

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, values: dict[str, str]) -> None:
        with sqlite.transaction(self.db):
            self.put_meta(values)

    def put_meta(self, values: dict[str, str]) -> None:
        """Set meta values inside :meth:`writing` (with the memories they go with)."""
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?,?)", values.items())

    def next_id(self) -> int:
        """The id the next memory takes: past every memory there is and every one forgotten (an id is never
        used twice, so whatever a process keeps by id, its lines or its cached memories, never goes stale)."""
        newest = self.db.execute("SELECT MAX(id) FROM memories").fetchone()[0] or 0
        return max(newest, int(self.get_meta(IDS_THROUGH) or 0)) + 1

    def erasures(self) -> int:
        """How many owners were ever forgotten here: another process that sees it change rebuilds its indexes."""
        return int(self.get_meta(ERASURES) or 0)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """One write transaction that holds the file's write lock from its start (BEGIN IMMEDIATE):
        what is read inside it (the next id, say) stays true until it commits. Another process
        writing at the same time waits (up to the busy timeout) instead of failing."""
        with sqlite.transaction(self.db):
            yield

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see one state of the file (a read transaction; inside a write, that write's):
        memories and accesses another process commits in between are seen by the next snapshot."""
        with sqlite.transaction(self.db, write=False):
            yield

    def data_version(self) -> int:
        """Changes when another connection (another process) commits to the file. No other connection
        can reach a private in-memory database, so asking (a third of a small retrieval) is skipped."""
        if self.in_memory:
            return 0
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def insert(self, rows: Sequence[Row], vectors: Sequence[np.ndarray]) -> None:
        """Write memories, inside :meth:`writing`.

        ``vectors[i]`` is memory i's key vectors, ``(dim,)`` or ``(keys, dim)``; the blob
        holds them back to back, so its length says how many keys a memory has.
        """
        blobs = [np.ascontiguousarray(v, dtype=np.float32).tobytes() for v in vectors]
        self.db.executemany(f"INSERT INTO memories({MEMORY_COLUMNS}, embedding) VALUES (?,?,?,?,?,?,?,?,?,?)",
                            [(*row, blob) for row, blob in zip(rows, blobs, strict=True)])

    def insert_accesses(self, ids: Iterable[int], at_iso: str, at_s: float) -> int:
        """Log accesses, inside :meth:`writing`; the rowid of the last one."""
        self.db.executemany("INSERT INTO accesses VALUES (?,?,?)", [(int(i), at_iso, at_s) for i in ids])
        return self.last_access_rowid()

    def last_access_rowid(self) -> int:
        return self.db.execute("SELECT COALESCE(MAX(rowid), 0) FROM accesses").fetchone()[0]

    def accesses_after(self, rowid: int) -> list[tuple[int, int, float]]:
        """``(rowid, memory_id, accessed_s)`` of the accesses logged after ``rowid``."""
        rows = self.db.execute("SELECT rowid, memory_id, accessed_s FROM accesses WHERE rowid > ? AND memory_id IN "
                               "(SELECT id FROM memories WHERE id > 0) ORDER BY rowid", (rowid,)).fetchall()
        return [r for r in rows if r[1] not in self.damaged] if self.damaged else rows

    def last_accesses(self, owner: str, at_s: float, through: int) -> tuple[np.ndarray, np.ndarray]:
        """``owner``'s memories accessed by ``at_s`` (in the log through rowid ``through``), by id, and each one's
        latest access up to ``at_s``: the access log read as it stood then."""
        rows = self.db.execute("SELECT a.memory_id, MAX(a.accessed_s) FROM accesses a JOIN memories m ON m.id = "
                               "a.memory_id WHERE m.owner=? AND a.accessed_s <= ? AND a.rowid <= ? GROUP BY "
                               "a.memory_id ORDER BY a.memory_id", (owner, at_s, through)).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.float64)

    def owners_of(self, ids: Sequence[int]) -> dict[int, str]:
        return {r[0]: r[1] for r in self._by_ids("id, owner", ids)}

    def rows(self, ids: Sequence[int]) -> dict[int, Row]:
        return {r[0]: r for r in self._by_ids(MEMORY_COLUMNS, ids)}

    def _by_ids(self, columns: str, ids: Sequence[int]) -> list[tuple]:
        """The memories with these ids, in chunks: SQLite takes at most 32,766 parameters a statement (a
        large run's access log named more memories than that, and its stream could not be reopened)."""
        ids = [int(i) for i in ids]
        per_query = min(IDS_PER_QUERY, self.db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
        out: list[tuple] = []
        for at in range(0, len(ids), per_query):
            chunk = ids[at:at + per_query]
            marks = ",".join("?" * len(chunk))
            out += self.db.execute(f"SELECT {columns} FROM memories WHERE id IN ({marks})", chunk).fetchall()
        return self._sound(out)

    def index_metadata_key(self, name: str) -> None:
        """Index the memories by owner and ``metadata[name]`` (made once; a writer that looks memories up by
        such a key, :meth:`by_metadata_key`, asks for it, so the look-up costs the same at 10,000 memories)."""
        if not name.isidentifier():
            raise ValueError(f"a metadata key to index is a plain name, not {name!r}")
        with sqlite.transaction(self.db):
            self.db.execute(f"CREATE INDEX IF NOT EXISTS memories_by_{name} ON memories(owner, "
                            f"json_extract(metadata, '$.{name}'))")

    def by_metadata_key(self, owner: str, name: str, values: Sequence[str]) -> dict[str, int]:
        """Which of ``values`` ``owner``'s memories carry as ``metadata[name]``, each with the first such id."""
        found: dict[str, int] = {}
        for at in range(0, len(values), 500):
            chunk = list(values[at:at + 500])
            for value, mid in self.db.execute(
                    f"SELECT json_extract(metadata, '$.{name}'), MIN(id) FROM memories WHERE owner=? AND "
                    f"json_extract(metadata, '$.{name}') IN ({','.join('?' * len(chunk))}) GROUP BY 1",
                    (owner, *chunk)):
                found[value] = mid
        return found

    def owners_in_order(self) -> list[str]:
        """Every owner with memories, in the order each was first written for."""
        return [o for (o,) in self.db.execute("SELECT owner FROM memories GROUP BY owner ORDER BY MIN(id)")]

    def owner_rows(self, owner: str) -> list[Row]:
        cur = self.db.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE owner=? AND id > 0 ORDER BY id", (owner,))
        return self._sound(cur.fetchall())

    def recent_rows(self, owner: str, n: int) -> list[Row]:
        """The owner's ``n`` newest memories, oldest first."""
        cur = self.db.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE owner=? AND id > 0 ORDER BY id DESC "
                              "LIMIT ?", (owner, n + len(self.damaged)))
        return self._sound(cur.fetchall())[:n][::-1]

    def _sound(self, rows: list[tuple]) -> list[tuple]:
        """``rows`` without the damaged ones (found when the rows were loaded)."""
        return [r for r in rows if r[0] not in self.damaged] if self.damaged else rows

    def importance_since(self, owner: str, kinds: tuple[str, ...], after_id: int) -> int:
        marks = ",".join("?" * len(kinds))
        row = self.db.execute(
            f"SELECT COALESCE(SUM(importance), 0) FROM memories WHERE owner=? AND id>? AND kind IN ({marks})",
            (owner, after_id, *kinds)).fetchone()
        return int(row[0])

    def last_id(self, owner: str) -> int:
        row = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM memories WHERE owner=?", (owner,))
        return row.fetchone()[0]

    def load_after(self, after_id: int) -> list[tuple[int, str, float, int, bytes]]:
        """The retrieval columns of the sound memories after ``after_id``, in id order (for the indexes).

        Damaged rows (:mod:`memstream.stream.damage`) are left out, remembered in ``damaged`` so
        every other read leaves them out too, and named in one warning."""
        found = damage.screen(self.db, int(self.get_meta("dim") or 0), after_id if self._screened else None)
        self._screened = True
        rows = self.db.execute("SELECT id, owner, created_s, importance, embedding FROM memories WHERE id > ? "
                               "ORDER BY id", (after_id,)).fetchall()
        rows = [r for r in rows if r[0] not in found and r[0] not in self.damaged]
        found.update({mid: damage.NON_FINITE for mid in damage.non_finite((r[0], r[4]) for r in rows)})
        fresh = {mid: why for mid, why in found.items() if mid not in self.damaged}
        if fresh:
            self.damaged.update(fresh)
            log.warning("%s", damage.describe(self.path, fresh))
            rows = [r for r in rows if r[0] not in fresh]
        return rows

    def access_log(self, owner: str) -> list[tuple[int, str]]:
        cur = self.db.execute(
            "SELECT a.memory_id, a.accessed_at FROM accesses a JOIN memories m ON m.id = a.memory_id"
            " WHERE m.owner=? ORDER BY a.rowid", (owner,))
        return cur.fetchall()

    def backup(self, path: str | Path) -> None:
        sqlite.copy_to(self.db, path)

    def mark(self) -> StreamMark:
        """How far the file has been written: its last memory, its last access and its meta values."""
        with self.snapshot():
            last = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM memories").fetchone()[0]
            meta = dict(self.db.execute("SELECT key, value FROM meta ORDER BY key"))
            return StreamMark(memories_through=last, accesses_through=self.last_access_rowid(), meta=meta)

    def rewind(self, mark: StreamMark) -> None:
        """Put the file back as it stood at ``mark``: every memory and access appended after it removed, its
        meta values as they were, in one transaction (a crash leaves it as it was, its triggers whole).

        The one sanctioned exception to append-only: a run resumed from its checkpoint takes back what its
        own stream was given after that checkpoint (what a run that was never stopped did not write yet).
        A mark the file never reached is refused: it is another file's."""
        with sqlite.transaction(self.db):
            now = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM memories").fetchone()[0]
            if now < mark.memories_through or self.last_access_rowid() < mark.accesses_through:
                raise ValueError(f"the stream holds memories through {now}, not the checkpoint's "
                                 f"{mark.memories_through}")
            for name in _DELETE_TRIGGERS:
                self.db.execute(f"DROP TRIGGER {name}")
            self.db.execute("DELETE FROM accesses WHERE rowid > ?", (mark.accesses_through,))
            self.db.execute("DELETE FROM memories WHERE id > ?", (mark.memories_through,))
            self.db.execute("DELETE FROM meta")
            self.db.executemany("INSERT INTO meta VALUES (?,?)", sorted(mark.meta.items()))
            for sql in _DELETE_TRIGGERS.values():
                self.db.execute(sql)

    def forget(self, owner: str) -> int:
        """Delete every memory of ``owner``, their accesses and its reflection mark, in one transaction; the
        rows deleted. The other sanctioned exception to append-only (beside :meth:`rewind`): a user's
        explicit "forget me". The delete triggers are dropped and made again inside the transaction (a crash
        leaves the file as it was, triggers whole); deleted rows are overwritten (``secure_delete``) and the
        write-ahead log emptied afterwards, so the owner's text is gone from the file's bytes. What stays: that
        ids up to the newest were handed out (:data:`IDS_THROUGH`), and how many owners were forgotten
        (:data:`ERASURES`, the signal other processes rebuild their indexes on) - never who or what."""
        self.db.execute("PRAGMA secure_delete=ON")
        try:
            return self._forget(owner)
        except sqlite3.Error as e:
            raise MemstreamError(f"{self.path}: {owner!r} was not forgotten ({sqlite.reason(e)}); nothing of it "
                                 "was changed") from None

    def _forget(self, owner: str) -> int:
        with sqlite.transaction(self.db):
            through = self.next_id() - 1
            for name in _DELETE_TRIGGERS:
                self.db.execute(f"DROP TRIGGER {name}")
            gone = self.db.execute("DELETE FROM accesses WHERE memory_id IN (SELECT id FROM memories WHERE owner=?)",
                                   (owner,)).rowcount
            gone += self.db.execute("DELETE FROM memories WHERE owner=?", (owner,)).rowcount
            gone += self.db.execute("DELETE FROM meta WHERE key=?", (reflected_key(owner),)).rowcount
            self.put_meta({IDS_THROUGH: str(through), ERASURES: str(self.erasures() + 1)})
            for sql in _DELETE_TRIGGERS.values():
                self.db.execute(sql)
        if not self.in_memory:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    def close(self) -> None:
        self.db.close()


def reflected_key(owner: str) -> str:
    """The meta key of the id through which ``owner`` last reflected."""
    return f"reflection.through.{owner}"


def encode_json(value: Any) -> str:
    """Strict JSON (NaN and infinity refused: they are not JSON, and would break every later read)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def check_file(path: str | Path) -> list[str]:
    """Every problem of the stream file at ``path``, one line each (empty if it is sound).

    Reads only. Checks SQLite's integrity, the format and schema version, the append-only
    triggers, every memory's vectors (present, of the stream's dimension) and its citations
    (to earlier memories of the same owner).
    """
    return sqlite.check_file(path, STREAM, _problems)


def _problems(db: sqlite3.Connection) -> list[str]:
    """The stream's own problems, in a file SQLite and the format check found sound."""
    triggers = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
    problems = [f"append-only trigger {t} is missing" for t in TRIGGERS if t not in triggers]
    meta = dict(db.execute("SELECT key, value FROM meta"))
    dim = int(meta.get("dim", "0") or 0)
    damaged = damage.screen(db, dim)
    problems += [f"meta {k}: {str(v)[:20]!r} is not a memory id" for k, v in sorted(meta.items())
                 if k.startswith(reflected_key("")) and not str(v).isdigit()]
    problems += [f"memory {mid}: {why}" for mid, why in sorted(damaged.items())]
    owners: dict[int, str] = {}
    for mid, owner, cites, blob, created_at in db.execute(
            "SELECT id, owner, cites, embedding, created_at FROM memories ORDER BY id"):
        owners[mid] = owner
        if mid not in damaged and damage.non_finite([(mid, blob)]):
            problems.append(f"memory {mid}: {damage.NON_FINITE}")
        elif mid not in damaged and damage.unreadable_time(created_at):
            problems.append(f"memory {mid}: its creation time is unreadable")
        try:
            cited = json.loads(cites)
        except (TypeError, ValueError):
            continue  # reported by the screen
        for c in cited if isinstance(cited, list) else []:
            if not isinstance(c, int) or not isinstance(mid, int) or c >= mid:
                continue  # reported by the screen
            if c not in owners:
                problems.append(f"memory {mid}: cites {c}, which is not an earlier memory")
            elif owners[c] != owner:
                problems.append(f"memory {mid} of {owner!r} cites {c} of another owner, {owners[c]!r}")
    orphans = db.execute("SELECT COUNT(*) FROM accesses WHERE memory_id NOT IN (SELECT id FROM memories)").fetchone()
    if orphans[0]:
        problems.append(f"{orphans[0]} accesses name memories that do not exist")
    return problems


def rewind_stream(path: str | Path, mark: StreamMark) -> None:
    """Rewind the stream file at ``path`` to ``mark`` (:meth:`Store.rewind`); no stream may have it open."""
    store = Store(path, create=False)
    try:
        store.rewind(mark)
    finally:
        store.close()


def copy_stream(source: str | Path, target: str | Path) -> None:
    """A consistent copy of the stream file ``source`` at ``target`` (SQLite's online backup: a run writing
    ``source`` meanwhile is seen at one commit), read without writing to ``source``."""
    store = Store(source, create=False, readonly=True)
    try:
        store.backup(target)
    finally:
        store.close()
