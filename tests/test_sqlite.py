"""The SQLite helper every store opens through: each refusal is one line, read-only opens never write,
a write transaction takes the lock before it reads, and no file's bytes give a traceback."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memstream.errors import MemstreamError
from memstream.sqlite import StoreKind, check_file, connect, copy_to, create_tables, integrity, transaction

KIND = StoreKind(noun="test store", marker="memstream-test", tables=frozenset({"meta", "items"}),
                 make="make one with make()", reads="read it with read_only=True")
OTHER = StoreKind(noun="other store", marker="memstream-other", tables=frozenset({"meta", "items"}), make="")
SCHEMA = "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL); " \
         "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, text TEXT NOT NULL);"


def make(path: Path, kind: StoreKind = KIND, version: str = "1", items: int = 2) -> Path:
    with closing(connect(path, kind=kind)) as db:
        create_tables(db, SCHEMA, {"format": kind.marker or "", "schema_version": version})
        with transaction(db):
            db.executemany("INSERT INTO items(text) VALUES (?)", [(f"item {i}",) for i in range(items)])
    return path


def one_line(call: Callable[[], object]) -> str:  # any callable that should refuse
    with pytest.raises(MemstreamError) as e:
        call()
    message = str(e.value)
    assert "\n" not in message and message, message
    return message


def files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if not p.name.endswith(("-wal", "-shm"))}


# -- refusals -------------------------------------------------------------------------------------


def test_each_path_that_cannot_hold_a_store_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "junk.db").write_bytes(b"this is not an SQLite file at all " * 40)
    with closing(sqlite3.connect(tmp_path / "foreign.db")) as db:
        db.execute("CREATE TABLE notes(x)")
    make(tmp_path / "other.db", OTHER)
    make(tmp_path / "newer.db", version="7")
    make(tmp_path / "garbled.db", version="seven")
    sqlite3.connect(tmp_path / "empty.db").close()
    cases = {
        str(tmp_path): "is a directory, not a test store",
        "/dev/null": "/dev/null is not a regular file",
        str(tmp_path / "no" / "s.db"): f"no folder {tmp_path / 'no'}",
        str(tmp_path / "junk.db"): "is not a memstream test store (file is not a database)",
        str(tmp_path / "foreign.db"): "is an SQLite file but not a memstream test store (tables notes)",
        str(tmp_path / "other.db"): "not a memstream test store (format 'memstream-other')",
        str(tmp_path / "newer.db"): "was made by a newer memstream (format 7); upgrade memstream",
        str(tmp_path / "garbled.db"): "records an unreadable format version ('seven')",
    }
    before = files(tmp_path)
    for path, expected in cases.items():
        for read_only in (False, True):
            opening = lambda p=path, r=read_only: connect(p, kind=KIND, read_only=r)  # noqa: E731
            assert expected in one_line(opening), (path, read_only)
    assert "no test store at" in one_line(lambda: connect(tmp_path / "missing.db", kind=KIND, create=False))
    assert "holds no test store yet; make one" in one_line(lambda: connect(tmp_path / "empty.db", kind=KIND,
                                                                            create=False))
    assert files(tmp_path) == before, "a refused open wrote something"


def test_a_store_with_no_marker_is_known_by_its_tables(tmp_path: Path) -> None:
    """The call cache's case: no meta table ever; its tables say what it is, another store is refused."""
    cache = StoreKind(noun="call cache", marker=None, tables=frozenset({"calls"}), make="")
    with closing(sqlite3.connect(tmp_path / "calls.db")) as db:
        db.execute("CREATE TABLE calls(key TEXT PRIMARY KEY)")
    connect(tmp_path / "calls.db", kind=cache).close()
    make(tmp_path / "store.db")
    assert "(format 'memstream-test')" in one_line(lambda: connect(tmp_path / "store.db", kind=cache))
    with closing(sqlite3.connect(tmp_path / "foreign.db")) as db:
        db.execute("CREATE TABLE notes(x)")
    assert "(tables notes)" in one_line(lambda: connect(tmp_path / "foreign.db", kind=cache))


def test_a_file_that_records_no_version_opens_as_version_one(tmp_path: Path) -> None:
    """Profile files record their format and no schema_version: they open; check names the missing version."""
    with closing(sqlite3.connect(tmp_path / "old.db")) as db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO meta VALUES ('format', 'memstream-test')")
        db.commit()
    connect(tmp_path / "old.db", kind=KIND).close()
    assert check_file(tmp_path / "old.db", KIND, lambda db: []) == ["schema version None; this memstream reads 1"]


# -- read-only ------------------------------------------------------------------------------------


def test_a_read_only_open_reads_and_refuses_every_write_in_one_line(tmp_path: Path) -> None:
    make(tmp_path / "s.db")
    before = files(tmp_path)
    with closing(connect(tmp_path / "s.db", kind=KIND, read_only=True)) as db:
        assert db.read_only and not db.immutable
        assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 2
        with transaction(db, write=False):
            assert db.execute("SELECT text FROM items WHERE id=1").fetchone() == ("item 0",)
        assert "is open read-only; open it for writing" in one_line(lambda: transaction(db).__enter__())
        with pytest.raises(sqlite3.OperationalError, match="readonly"):  # SQLite itself refuses too
            db.execute("INSERT INTO items(text) VALUES ('x')")
    assert "no test store at" in one_line(lambda: connect(tmp_path / "absent.db", kind=KIND, read_only=True))
    assert files(tmp_path) == before and not (tmp_path / "absent.db").exists()


def test_read_only_media_are_read_immutable(tmp_path: Path, monkeypatch) -> None:
    make(tmp_path / "s.db")
    monkeypatch.setenv("MEMSTREAM_READ_IMMUTABLE", "1")
    with closing(connect(tmp_path / "s.db", kind=KIND, read_only=True)) as db:
        assert db.immutable and db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only files")
def test_a_read_only_file_opened_for_writing_is_refused_in_one_line(tmp_path: Path) -> None:
    make(tmp_path / "s.db").chmod(0o444)
    assert "cannot write to" in one_line(lambda: connect(tmp_path / "s.db", kind=KIND))
    connect(tmp_path / "s.db", kind=KIND, read_only=True).close()


def test_a_store_in_memory(tmp_path: Path) -> None:
    with closing(connect(":memory:", kind=KIND)) as db:
        assert db.new
        create_tables(db, SCHEMA, {"format": "memstream-test"})
        with transaction(db):
            db.execute("INSERT INTO items(text) VALUES ('kept')")
        copy_to(db, tmp_path / "copy.db")
    with closing(connect(tmp_path / "copy.db", kind=KIND)) as copy:
        assert not copy.new and copy.execute("SELECT text FROM items").fetchall() == [("kept",)]
    with closing(connect(":memory:", kind=KIND, read_only=True)) as db:
        assert "open read-only" in one_line(lambda: transaction(db).__enter__())


def test_the_settings_every_store_needs(tmp_path: Path) -> None:
    with closing(connect(make(tmp_path / "s.db"), kind=KIND)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert db.execute("PRAGMA busy_timeout").fetchone() == (60_000,)
        assert db.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL


# -- transactions ---------------------------------------------------------------------------------


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    with closing(connect(make(tmp_path / "s.db"), kind=KIND)) as db:
        with pytest.raises(ValueError), transaction(db):
            db.execute("INSERT INTO items(text) VALUES ('half')")
            raise ValueError("the caller failed mid-write")
        assert not db.in_transaction
        assert db.execute("SELECT COUNT(*) FROM items WHERE text='half'").fetchone() == (0,)
        with transaction(db), transaction(db, write=False):  # a read inside a write is part of it
            db.execute("INSERT INTO items(text) VALUES ('whole')")
        assert db.execute("SELECT COUNT(*) FROM items WHERE text='whole'").fetchone() == (1,)


def test_a_second_writer_waits_for_the_first_and_sees_its_commit(tmp_path: Path) -> None:
    """Both read the next id and write it: the second's read waits for the first's commit, so the ids differ."""
    path = make(tmp_path / "s.db", items=0)
    first, second = connect(path, kind=KIND), connect(path, kind=KIND)
    holding, waited = threading.Event(), {}

    def write_next(db: sqlite3.Connection, text: str, hold_s: float) -> None:
        with transaction(db):
            next_id = db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM items").fetchone()[0]
            holding.set()
            time.sleep(hold_s)
            db.execute("INSERT INTO items VALUES (?, ?)", (next_id, text))

    writer = threading.Thread(target=write_next, args=(first, "first", 0.5))
    writer.start()
    holding.wait()
    started = time.monotonic()
    holding.clear()
    write_next(second, "second", 0)
    waited["s"] = time.monotonic() - started
    writer.join()
    rows = second.execute("SELECT id, text FROM items ORDER BY id").fetchall()
    first.close()
    second.close()
    assert rows == [(1, "first"), (2, "second")]
    assert waited["s"] >= 0.3, "the second writer read before the first committed"


# -- checks ---------------------------------------------------------------------------------------


def test_check_file_lists_every_problem_in_lines(tmp_path: Path) -> None:
    make(tmp_path / "s.db")
    assert check_file(tmp_path / "s.db", KIND, lambda db: []) == []
    assert check_file(tmp_path / "s.db", KIND, lambda db: ["a store's own problem"]) == ["a store's own problem"]
    make(tmp_path / "other.db", OTHER)
    assert check_file(tmp_path / "other.db", KIND, lambda db: []) == [
        "format is 'memstream-other', not 'memstream-test'"]
    with closing(sqlite3.connect(tmp_path / "foreign.db")) as db:
        db.execute("CREATE TABLE notes(x)")
    assert check_file(tmp_path / "foreign.db", KIND, lambda db: []) == ["not a memstream test store (tables: notes)"]
    (tmp_path / "junk.db").write_bytes(b"not sqlite " * 100)
    assert check_file(tmp_path / "junk.db", KIND, lambda db: [])[0].endswith("cannot open (file is not a database)")
    assert check_file(tmp_path / "none.db", KIND, lambda db: []) == [f"{tmp_path / 'none.db'}: no such file"]


def test_integrity_finds_a_damaged_index(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with closing(sqlite3.connect(path)) as db:
        db.executescript("CREATE TABLE t(x); CREATE INDEX t_x ON t(x);")
        db.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(200)])
        db.commit()
        assert integrity(db) == [] and integrity(db, quick=True) == []
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name='t_x'").fetchone()[0]
        page = db.execute("PRAGMA page_size").fetchone()[0] * (root - 1)
    data = bytearray(path.read_bytes())
    data[page + 100: page + 400] = bytes(300)  # the index's page, zeroed past its header
    path.write_bytes(bytes(data))
    with closing(sqlite3.connect(path)) as db:
        try:
            problems = integrity(db)
        except sqlite3.DatabaseError:  # SQLite may call the file malformed outright
            problems = ["integrity: malformed"]
    assert problems and all(p.startswith("integrity: ") for p in problems)


# -- any bytes ------------------------------------------------------------------------------------

with tempfile.TemporaryDirectory() as _folder:
    SOUND = make(Path(_folder) / "sound.db", items=20).read_bytes()


def opens_or_refuses(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.db"
        path.write_bytes(data)
        for read_only in (True, False):
            try:
                connect(path, kind=KIND, read_only=read_only).close()
            except MemstreamError as e:
                assert "\n" not in str(e)
        assert all(isinstance(line, str) for line in check_file(path, KIND, lambda db: []))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048) | st.binary(max_size=2048).map(lambda b: b"SQLite format 3\x00" + b))
def test_random_bytes_never_give_a_traceback(data: bytes) -> None:
    opens_or_refuses(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(SOUND) - 1), st.integers(0, 255)), min_size=1, max_size=12))
@example(changes=[(4022, 128)])  # a byte of the schema made not UTF-8: SQLite's message itself would not decode
def test_a_damaged_store_never_gives_a_traceback(changes: list[tuple[int, int]]) -> None:
    data = bytearray(SOUND)
    for at, value in changes:
        data[at] = value
    opens_or_refuses(bytes(data))


def test_opening_a_file_another_connection_is_writing_waits_for_it_instead_of_failing(tmp_path: Path) -> None:
    """SQLite does not retry ``journal_mode=WAL`` on a busy file: an open while another process made the file
    once failed at once with "database is locked"."""
    path = tmp_path / "s.db"
    with closing(sqlite3.connect(path, isolation_level=None, check_same_thread=False)) as other:
        other.executescript(f"{SCHEMA} INSERT INTO meta VALUES ('format', '{KIND.marker}');")  # not yet WAL
        other.execute("BEGIN IMMEDIATE")
        timer = threading.Timer(0.5, other.execute, ["COMMIT"])
        timer.start()
        started = time.monotonic()
        with closing(connect(path, kind=KIND)) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert time.monotonic() - started >= 0.4
        timer.join()


def _open_at_once(path: str, barrier, failures) -> None:  # a process of the test below
    barrier.wait()
    try:
        with closing(connect(path, kind=KIND)) as db:
            create_tables(db, SCHEMA, {"format": KIND.marker or ""})
            with transaction(db):
                db.execute("INSERT INTO items(text) VALUES ('x')")
    except Exception as e:  # every failure is what the test counts
        failures.put(f"{type(e).__name__}: {e}")


def test_several_processes_opening_one_new_file_at_once_all_open_it(tmp_path: Path) -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    processes, rounds = 4, 12
    for r in range(rounds):
        path = str(tmp_path / f"s{r}.db")
        barrier, failures = ctx.Barrier(processes), ctx.Queue()
        workers = [ctx.Process(target=_open_at_once, args=(path, barrier, failures)) for _ in range(processes)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=120)
        assert failures.empty(), failures.get()
        with closing(connect(path, kind=KIND)) as db:
            assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == processes
