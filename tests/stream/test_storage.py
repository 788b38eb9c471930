"""Storage: read commands on read-only media, recall that never writes a run's stream, and damaged
rows that read commands skip (one warning naming memstream check) and check always finds."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.models import HashEmbedder
from memstream.stream import MemoryStream, check_file
from memstream.stream.store import Store

T = datetime.fromisoformat("2023-02-13T08:00:00+00:00")


def make_stream(path: Path) -> Path:
    with MemoryStream(path, HashEmbedder(64)) as s:
        s.add("ann", "Ann is planning a party at the cafe", at=T, importance=7)
        s.add("ann", "Ann bought flowers for the party", at=T.replace(hour=9), importance=4)
        s.add("ann", "Ann likes parties", at=T.replace(hour=10), importance=5, kind="reflection", cites=[1, 2])
        s.add("bob", "Bob reads a book", at=T, importance=2)
    return path


def digest(folder: Path) -> dict[str, str]:
    """Every file's content (SQLite's -wal and -shm beside a WAL file come and go with any reader)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.endswith(("-wal", "-shm"))}


READS = [["inspect", "{db}"], ["inspect", "{db}", "--agent", "ann"], ["inspect", "{db}", "--json"],
         ["recall", "{db}", "--agent", "ann", "--query", "party"], ["tree", "{db}", "--agent", "ann", "--memory", "3"],
         ["check", "{db}"]]


@pytest.mark.parametrize("how", ["flag", "mode=ro fails"])
def test_read_commands_work_on_read_only_media(tmp_path: Path, capsys, monkeypatch, how: str) -> None:
    """SQLite's mode=ro needs to create the WAL's -shm file, which read-only media refuse: the
    stream is then opened immutable=1. (Root ignores file permissions, so the media is simulated:
    by the flag, or by mode=ro failing as it does there.)"""
    folder = tmp_path / "media"
    folder.mkdir()
    db = make_stream(folder / "s.db")
    if how == "flag":
        monkeypatch.setenv("MEMSTREAM_READ_IMMUTABLE", "1")
    else:
        import memstream.sqlite as helper

        real = sqlite3.connect

        def connect(database: str, *args: object, **kwargs: object) -> sqlite3.Connection:
            if "mode=ro" in str(database):
                raise sqlite3.OperationalError("unable to open database file")
            return real(database, *args, **kwargs)

        monkeypatch.setattr(helper.sqlite3, "connect", connect)
        monkeypatch.setattr(helper, "read_only_media", lambda path: True)  # the name the stores and the CLI read
    for f in folder.iterdir():
        f.chmod(0o444)
    folder.chmod(0o555)
    try:
        before = digest(folder)
        store = Store(db, create=False, readonly=True)
        assert store.immutable and store.next_id() == 5
        store.close()
        for argv in READS:
            code = main([a.format(db=db) for a in argv])
            out, err = capsys.readouterr()
            assert code == 0 and out.strip(), (argv, err)
            assert "Traceback" not in err
        assert digest(folder) == before and sorted(p.name for p in folder.iterdir()) == ["s.db"]
    finally:
        folder.chmod(0o755)


@pytest.mark.slow
def test_recall_on_a_run_stream_never_writes(tmp_path: Path, capsys) -> None:
    from memstream.sim.run.launch import RunConfig, start_run

    run = tmp_path / "run"
    start_run(RunConfig(agents=2, start=datetime.fromisoformat("2023-02-13T06:00:00-08:00"), hours=0.1,
                        embedder="hash:64"), run, progress=False)
    agent = json.loads((run / "town.json").read_text())["residents"][0]["name"]
    before = digest(run)
    assert main(["recall", str(run / "streams.db"), "--agent", agent, "--query", "plans"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "is the stream of the run" in err and "no access" in err
    assert "rank" in out and digest(run) == before


# -- damaged rows ------------------------------------------------------------------------------

NAN_VECTOR = struct.pack("<64f", *([float("nan")] + [0.1] * 63))
#: One example of each class of damage the issue found, as (column, value) of memory 2.
CLASSES = {
    "an unreadable date": ("created_at", "the 13th of Feb"),
    "a date with no zone": ("created_at", "2023-02-13T09:00:00"),
    "an impossible date": ("created_at", "2023-02-30T09:00:00+00:00"),
    "an impossible hour": ("created_at", "2023-02-13T29:00:00+00:00"),
    "a time out of range": ("created_s", 1e300),
    "a NaN vector": ("embedding", NAN_VECTOR),
    "a vector of the wrong size": ("embedding", b"\x00" * 12),
    "a memory citing itself": ("cites", "[2]"),
    "unreadable citations": ("cites", '{"a": 1}'),
    "unreadable metadata": ("metadata", "[1, 2]"),
    "a negative id": ("id", -2),
    "text that is not text": ("text", b"\xff\xfe"),
}


def damage(source: Path, target: Path, column: str, value: object) -> None:
    target.write_bytes(source.read_bytes())
    with closing(sqlite3.connect(target)) as db:
        db.execute("DROP TRIGGER memories_append_only_update")
        db.execute(f"UPDATE memories SET {column} = ? WHERE id = 2", (value,))
        db.commit()


def _run_reads(db: Path, capsys, caplog, plot: bool = True) -> list[tuple[list[str], int, str, str]]:
    """Each read command on ``db``: its argv, exit code, output, and errors with the warnings logged."""
    results = []
    reads = READS[:-1] + [["recall", "{db}", "--agent", "ann", "--query", "party", "--no-touch", "--json"]]
    for argv in reads + ([["plot", "components", "{db}", "--agent", "ann", "--query", "party", "-o",
                           str(db.parent / "p.png")]] if plot else []):
        argv = [a.format(db=db) for a in argv]
        caplog.clear()
        code = main(argv)
        out, err = capsys.readouterr()
        warnings = "".join(f"WARNING {r.getMessage()}\n" for r in caplog.records if r.levelname == "WARNING")
        results.append((argv, code, out, err + warnings))
    return results


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(CLASSES))
def test_read_commands_survive_each_class_of_damaged_row_and_check_finds_it(tmp_path: Path, capsys, caplog,
                                                                           kind: str) -> None:
    good = make_stream(tmp_path / "good.db")
    db = tmp_path / "damaged.db"
    damage(good, db, *CLASSES[kind])
    for argv, code, out, err in _run_reads(db, capsys, caplog):
        assert "Traceback" not in err + out, (argv, err)
        if argv[0] == "tree" and kind == "a negative id":  # memory 3 cites a memory 2 that is not there
            assert code == 2 and "no memory 2" in err, (argv, err)
            continue
        assert code == 0, (kind, argv, err)
        assert "memstream check" in err and err.count("WARNING") == 1, (kind, argv, err)
    problems = check_file(db)
    assert any(p.startswith(("memory 2:", "memory -2:")) for p in problems), (kind, problems)
    assert main(["check", str(db)]) == 1
    capsys.readouterr()


DAMAGE = st.one_of(
    st.tuples(st.just("created_at"), st.one_of(st.text(max_size=30), st.sampled_from(
        ["2023-02-30T08:00:00+00:00", "2023-02-13T08:00:00+25:00", "0000-01-01T00:00:00+00:00",
         "2023-02-13 08:00:00Z", "2023-02-13T08:00:00.5+05:30", "9999-12-31T23:59:59-14:00"]))),
    st.tuples(st.just("created_s"), st.floats(allow_nan=False)),
    st.tuples(st.just("embedding"), st.one_of(st.binary(max_size=300), st.lists(
        st.floats(width=32), min_size=64, max_size=64).map(lambda v: struct.pack("<64f", *v)))),
    st.tuples(st.just("cites"), st.one_of(st.text(max_size=12), st.lists(st.integers(-3, 5), max_size=3).map(
        json.dumps))),
    st.tuples(st.just("metadata"), st.one_of(st.text(max_size=12), st.dictionaries(st.text(max_size=3),
                                                                                  st.integers()).map(json.dumps))),
    st.tuples(st.just("id"), st.integers(-2**63, 0)),
    st.tuples(st.just("owner"), st.one_of(st.text(max_size=5), st.binary(max_size=4), st.integers())),
)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("MEMSTREAM_FUZZ_CASES", "30")), deadline=None, suppress_health_check=list(HealthCheck))
@given(change=DAMAGE)
def test_any_damaged_value_is_skipped_by_reads_and_found_by_check(tmp_path_factory, capsys, caplog, change) -> None:
    """Whatever value a row holds, reads never trace back, and they warn exactly when check objects."""
    root = tmp_path_factory.mktemp("damage")
    good = make_stream(root / "good.db")
    db = root / "damaged.db"
    try:
        damage(good, db, *change)
    except (sqlite3.IntegrityError, OverflowError):  # a value SQLite refuses (a constraint, an integer past
        return  # 64 bits) cannot be stored at all
    problems = check_file(db)
    for argv, code, out, err in _run_reads(db, capsys, caplog, plot=False):
        assert "Traceback" not in err + out, (change, argv, err)
        assert code in (0, 2), (change, argv, err)
        if code == 2:  # refused in one line (after the warning naming the damaged row, if any)
            assert err.count("memstream: error") == 1 and err.count("\n") <= 2, (change, argv, err)
        elif "memstream check" in err:
            assert problems, (change, argv, err)
