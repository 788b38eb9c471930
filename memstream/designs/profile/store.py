"""Every version of every profile file, append-only in SQLite, and the lock that serialises updates.

One row per version, per owner and scope: the whole file, the edit that made it (the operations applied,
or a compaction), when (the turn's time and the wall clock) and the record ids of the turn it came from.
Rows are never updated or deleted (triggers refuse it, as the stream's do), so ``blame`` can always say
when a line disappeared and which edit removed it.

Updates of one owner and scope are serialised across processes by a lease row in the same file
(``locks``): taken in a write transaction, held while the model is asked, released after the version is
written. The row names its holder (host, pid, process start: ``holder``), so a lease whose holder on
this host is dead (``kill -9``) is taken over at once; one held by a live process is kept, and one held
on another host (whose processes this one cannot see) until it expires. An update that waits longer
than ``WAIT_S`` fails with :class:`LockTimeout` naming the holder, never silently. A version's number is
unique per owner and scope, so even a writer whose lease expired under it cannot interleave: its append
fails and is counted, and nothing committed is lost.

Why a lease row and not an OS lock (``flock`` on a lock file): the row lives in the file itself, so a
profile file stays one file (plus SQLite's own), works for every owner and scope without a file each,
and its holder can be named in the error; SQLite's own write lock cannot be held across the model calls
without blocking every other owner's update and every checkpoint.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memstream.sqlite as sqlite
from memstream.designs.profile.holder import Holder
from memstream.errors import MemstreamError

#: What a profile file is. Its marker has held the "/1" since the first profile file, which recorded no
#: ``schema_version`` (a missing one reads as 1, see memstream.sqlite).
FORMAT = "memstream-profile/1"  #: what its meta table records
PROFILE = sqlite.StoreKind(noun="profile file", marker=FORMAT, held="profile",
                           tables=frozenset({"meta", "versions", "locks"}),
                           make="a profile design writes one (its path setting)")
#: A lease outlives any one update (two model calls, three retries); one held on another host (or by an earlier
#: memstream, which did not name its process) expires after it.
LEASE_S = 300.0
#: How long an update waits for another live process's lease before it fails, naming the holder.
WAIT_S = 120.0
POLL_S = 0.05

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
  id INTEGER PRIMARY KEY, owner TEXT NOT NULL, scope TEXT NOT NULL, n INTEGER NOT NULL,
  text TEXT NOT NULL, edit TEXT NOT NULL, at TEXT NOT NULL, made_s REAL NOT NULL, turns TEXT NOT NULL,
  UNIQUE (owner, scope, n));
CREATE TABLE IF NOT EXISTS locks (
  owner TEXT NOT NULL, scope TEXT NOT NULL, holder TEXT NOT NULL, expires_s REAL NOT NULL,
  PRIMARY KEY (owner, scope));
CREATE TRIGGER IF NOT EXISTS versions_append_only_update BEFORE UPDATE ON versions
  BEGIN SELECT RAISE(ABORT, 'profile versions are append-only'); END;
"""
#: Refuses every delete but :meth:`ProfileStore.erase`'s (which drops it for its transaction).
_NO_DELETE = """CREATE TRIGGER IF NOT EXISTS versions_append_only_delete BEFORE DELETE ON versions
  BEGIN SELECT RAISE(ABORT, 'profile versions are append-only'); END;"""
_COLUMNS = "n, text, edit, at, made_s, turns"


@dataclass(frozen=True)
class Version:
    """One version of a file: its number (1 is the first), its text, the edit that made it, when, and
    the record ids of the turn it came from."""

    n: int
    text: str
    edit: dict[str, Any]
    at: str
    made_s: float
    turns: tuple[int, ...]

    @classmethod
    def of_row(cls, row: tuple[Any, ...]) -> Version:
        return cls(int(row[0]), row[1], json.loads(row[2]), row[3], float(row[4]), tuple(json.loads(row[5])))

    def to_dict(self) -> dict[str, Any]:
        """The version as ``memstream profile ... --json`` prints it."""
        return {"n": self.n, "text": self.text, "edit": self.edit, "at": self.at, "made_s": self.made_s,
                "turns": list(self.turns)}


class Conflict(MemstreamError):
    """Another writer appended this version number first (a lease that expired under a slow update)."""


class LockTimeout(MemstreamError):
    """Another live process held the file's lease for longer than an update waits (the message names it)."""


class ProfileStore:
    """The SQLite file of profile versions (``:memory:`` for one process's own)."""

    def __init__(self, path: str | Path = ":memory:", *, readonly: bool = False) -> None:
        self.path = str(path)
        self.readonly = readonly
        #: What a caller derived from each file's versions so far, by owner and scope (versions are only
        #: appended, so it goes on from there; :meth:`erase` forgets an owner's).
        self.derived: dict[tuple[str, str], Any] = {}
        self.db = sqlite.connect(self.path, kind=PROFILE, read_only=readonly, create=not readonly)
        if not readonly:
            sqlite.create_tables(self.db, _SCHEMA + _NO_DELETE + "\n", {"format": FORMAT})

    def close(self) -> None:
        self.db.close()

    # -- reading --------------------------------------------------------------------------------

    def latest(self, owner: str, scope: str) -> Version | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM versions WHERE owner=? AND scope=? ORDER BY n DESC LIMIT 1",
                              (owner, scope)).fetchone()
        return Version.of_row(row) if row else None

    def versions(self, owner: str, scope: str) -> list[Version]:
        rows = self.db.execute(f"SELECT {_COLUMNS} FROM versions WHERE owner=? AND scope=? ORDER BY n",
                               (owner, scope))
        return [Version.of_row(r) for r in rows]

    def versions_after(self, owner: str, scope: str, n: int) -> list[Version]:
        """The versions numbered after ``n``, in order."""
        rows = self.db.execute(f"SELECT {_COLUMNS} FROM versions WHERE owner=? AND scope=? AND n>? ORDER BY n",
                               (owner, scope, n))
        return [Version.of_row(r) for r in rows]

    def files(self) -> list[tuple[str, str]]:
        """Every (owner, scope) with a version."""
        return [(o, s) for o, s in self.db.execute("SELECT DISTINCT owner, scope FROM versions ORDER BY owner, scope")]

    # -- writing --------------------------------------------------------------------------------

    def append(self, owner: str, scope: str, base: int, text: str, edit: dict[str, Any], at: str,
               turns: Sequence[int]) -> Version:
        """Write version ``base + 1``; :class:`Conflict` if another writer wrote it first."""
        version = Version(base + 1, text, edit, at, time.time(), tuple(turns))
        try:
            self.db.execute("INSERT INTO versions (owner, scope, n, text, edit, at, made_s, turns) "
                            "VALUES (?,?,?,?,?,?,?,?)", (owner, scope, version.n, text, json.dumps(edit), at,
                                                         version.made_s, json.dumps(list(turns))))
        except sqlite3.IntegrityError:
            raise Conflict(f"version {version.n} of {owner}/{scope} was written by another process first") from None
        return version

    @contextmanager
    def lock(self, owner: str, scope: str, *, wait_s: float = WAIT_S, lease_s: float = LEASE_S) -> Iterator[None]:
        """Hold ``owner``/``scope``'s lease for the block: other processes updating it wait (a dead holder's
        lease is taken over at once); :class:`LockTimeout`, naming the holder, after ``wait_s``."""
        holder = Holder.me().dump()
        deadline = time.monotonic() + wait_s
        while (other := self._take(owner, scope, holder, lease_s)) is not None:
            if time.monotonic() > deadline:
                raise LockTimeout(f"{owner}/{scope} in {self.path} is held by {other}; waited {wait_s:g} s, the "
                                  "update was not made")
            time.sleep(POLL_S)
        try:
            yield
        finally:
            self.db.execute("DELETE FROM locks WHERE owner=? AND scope=? AND holder=?", (owner, scope, holder))

    def _take(self, owner: str, scope: str, holder: str, lease_s: float) -> str | None:
        """Take the lease unless another holder keeps it; who that is, if one does."""
        now = time.time()
        with sqlite.transaction(self.db):
            row = self.db.execute("SELECT holder, expires_s FROM locks WHERE owner=? AND scope=?",
                                  (owner, scope)).fetchone()
            kept = _kept_by(row[0], row[1], now) if row is not None else None
            if kept is None:
                self.db.execute("INSERT OR REPLACE INTO locks VALUES (?,?,?,?)", (owner, scope, holder, now + lease_s))
        return kept

    def erase(self, owner: str) -> None:
        """Delete every version of ``owner``'s files, in one transaction: the one exception to append-only,
        for an owner forgotten (or dropped from a design's memory, to be read again from its store)."""
        for key in [k for k in self.derived if k[0] == owner]:
            del self.derived[key]
        with sqlite.transaction(self.db):
            self.db.execute("DROP TRIGGER IF EXISTS versions_append_only_delete")
            self.db.execute("DELETE FROM versions WHERE owner=?", (owner,))
            self.db.execute("DELETE FROM locks WHERE owner=?", (owner,))
            self.db.execute(_NO_DELETE)

    # -- one owner's versions, in the order written (a design store's log) -----------------------

    def count(self, owner: str) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM versions WHERE owner=?", (owner,)).fetchone()[0])

    def written_from(self, owner: str, start: int) -> list[tuple[str, Version]]:
        """``owner``'s versions (every scope, with it) in the order written, from the ``start``-th (their ids are
        found in the index, only the versions asked for are read)."""
        ids = [i for (i,) in self.db.execute("SELECT id FROM versions WHERE owner=? ORDER BY id", (owner,))][start:]
        rows: list[Any] = []
        for at in range(0, len(ids), 500):
            chunk = ids[at:at + 500]
            marks = ",".join("?" * len(chunk))
            rows += self.db.execute(f"SELECT scope, {_COLUMNS} FROM versions WHERE id IN ({marks}) ORDER BY id",
                                    chunk).fetchall()
        return [(r[0], Version.of_row(r[1:])) for r in rows]

    # -- state (a design's state file) ----------------------------------------------------------

    def everything(self) -> list[tuple[str, str, Version]]:
        """Every version of every file, with its owner and scope (by owner, scope and number)."""
        return [(o, s, v) for o, s in self.files() for v in self.versions(o, s)]

    def restore(self, versions: Iterable[tuple[str, str, Version]]) -> None:
        """Write ``versions`` (owner, scope, version) as they were, in one transaction."""
        with sqlite.transaction(self.db):
            for owner, scope, v in versions:
                self.db.execute("INSERT INTO versions (owner, scope, n, text, edit, at, made_s, turns) "
                                "VALUES (?,?,?,?,?,?,?,?)", (owner, scope, v.n, v.text, json.dumps(v.edit), v.at,
                                                             v.made_s, json.dumps(list(v.turns))))


def _kept_by(holder: str, expires_s: float, now: float) -> str | None:
    """Who keeps a lease row (a live holder on this host; one on another host, or an earlier memstream's,
    until its term ends), or None if it can be taken (its holder is dead, or its term is over)."""
    other = Holder.load(holder)
    if other is not None and other.dead():
        return None
    if other is not None and other.host == socket.gethostname():
        return f"live {other.describe()}"
    if expires_s < now:
        return None
    who = other.describe() if other is not None else f"a process of an earlier memstream ({holder[:40]})"
    return f"{who} until {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(expires_s))}"
