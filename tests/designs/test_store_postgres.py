"""The design store on PostgreSQL: the same memory as on an SQLite file, owners' writes serialised by
advisory locks, concurrent processes losing nothing, forget deleting the rows and logging the erasure.

Each test that takes ``store_spec`` runs on both back-ends (see conftest.py: the PostgreSQL cases skip,
saying so, where no test server is set)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.designs import Entry, entry, open_design
from memstream.designs.base import OwnerRows
from memstream.designs.entries import Record
from memstream.designs.store import check
from memstream.designs.store.backends import open_rows
from memstream.designs.store.postgres import OWNER_TABLES
from memstream.designs.store.rows import Held, OwnerKey
from memstream.errors import MemstreamError, MissingExtraError
from memstream.models import HashEmbedder, OfflineChatModel

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 3, 1, 9, tzinfo=UTC)
LATER = T0 + timedelta(days=30)
#: Each design kept as rows, with settings small enough that a few entries reach its summary.
DESIGNS: dict[str, dict[str, Any]] = {"full": {}, "vector": {}, "buffer-summary": {"turns": 3, "batch": 2}}
texts = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40)
                 .filter(str.strip), min_size=1, max_size=8)


def entries(said: list[str], tag: str = "") -> list[Entry]:
    return [entry(text=f"{tag}{text}", at=T0 + timedelta(minutes=i)) for i, text in enumerate(said)]


def opened(name: str, spec: str, **kwargs: Any) -> Any:
    return open_design(name, store=spec, embedder=HashEmbedder(64), chat=OfflineChatModel(),
                       **{**DESIGNS[name], **kwargs})


def memory_of(name: str, spec: str, owner: str) -> tuple[list[tuple[int, str]], str]:
    """An owner's records and context, as a fresh open of the store gives them."""
    with open_design(name, store=spec, embedder=HashEmbedder(64), chat=OfflineChatModel()) as memory:
        return ([(r.id, r.text) for r in memory.records(owner)],
                memory.context(owner, "what happened?", LATER, 400).text)


@pytest.fixture
def both(tmp_path: Path, postgres_spec: str) -> tuple[str, str]:
    return str(tmp_path / "s.db"), postgres_spec


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DESIGNS))
def test_memory_written_to_either_back_end_reads_back_the_same(both: tuple[str, str], name: str) -> None:
    with opened(name, both[0]) as on_sqlite, opened(name, both[1]) as on_postgres:

        @settings(max_examples=6, deadline=None)
        @given(said=texts, more=texts)
        def write_both(said: list[str], more: list[str]) -> None:
            owner = f"o{time.monotonic_ns()}"  # a fresh owner per example, in the test's two stores
            for memory in (on_sqlite, on_postgres):
                memory.write(owner, entries(said))
                memory.consolidate(owner, LATER)
                memory.write(owner, entries(more, "then "))
            sqlite, postgres = (memory_of(name, spec, owner) for spec in both)  # as a fresh open reads them
            assert postgres == sqlite
            assert len(postgres[0]) >= len(set(said))  # nothing lost on the way

        write_both()


@pytest.mark.parametrize("name", list(DESIGNS))
def test_a_retried_write_is_stored_once(store_spec: str, name: str) -> None:
    given_ids = [entry(text=f"fact {i}", at=T0 + timedelta(minutes=i), id=f"e{i}") for i in range(4)]
    with opened(name, store_spec) as memory:
        first = memory.write("ana", given_ids)
        again = memory.write("ana", given_ids[1:] + [entry(text="fact 0, said otherwise", at=T0, id="e0")])
        assert again == [*first[1:], first[0]]
        assert [e.id for e in memory.export("ana")] == ["e0", "e1", "e2", "e3"]
    with opened(name, store_spec) as memory:  # another process retrying after a lost acknowledgement
        assert memory.write("ana", given_ids) == first
    assert check(store_spec) == []


def test_a_write_over_a_version_another_connection_moved_is_refused(store_spec: str) -> None:
    first, second = open_rows(store_spec), open_rows(store_spec)
    key = OwnerKey("full", "", "ana")
    try:
        held, _ = first.read_owner(key)
        base = second.reserve_ids("full", 2)
        theirs = Record(base, "ana", "written by the second", T0, "user", "turn", "")
        second.begin(key)
        assert second.write_owner(key, OwnerRows([theirs]), held, {}) is not None
        second.commit()
        mine = Record(base + 1, "ana", "written by the first", T0, "user", "turn", "")
        first.begin(key)
        assert first.write_owner(key, OwnerRows([mine]), held, {}) is None  # it read version 0; now 1
        first.rollback()
        now, rows = first.read_owner(key)
        assert now.version == 1 and [r.text for r in rows.records] == ["written by the second"]
        first.begin(key)
        assert first.write_owner(key, OwnerRows([*rows.records, mine]), now, {}) == Held(2, 2, {}, {})
        first.commit()
        assert [r.text for r in second.read_owner(key)[1].records] == ["written by the second", "written by the first"]
    finally:
        first.close()
        second.close()


def test_two_connections_taking_turns_on_one_owner_each_see_the_others_writes(store_spec: str) -> None:
    with opened("vector", store_spec) as a, opened("vector", store_spec) as b:

        @settings(max_examples=6, deadline=None)
        @given(turns=st.lists(st.sampled_from("ab"), min_size=1, max_size=8))
        def take_turns(turns: list[str]) -> None:
            owner, memories = f"o{time.monotonic_ns()}", {"a": a, "b": b}
            for i, who in enumerate(turns):
                memories[who].write(owner, [entry(text=f"{who} said {i}", at=T0 + timedelta(minutes=i))])
                other = memories["b" if who == "a" else "a"]
                assert [r.text for r in other.records(owner)] == [f"{w} said {j}"
                                                                  for j, w in enumerate(turns[:i + 1])]

        take_turns()
    assert check(store_spec) == []


def test_an_owners_lock_holds_back_that_owner_only(postgres_spec: str) -> None:
    holder, other = open_rows(postgres_spec), open_rows(postgres_spec)
    ana, bob = OwnerKey("full", "", "ana"), OwnerKey("full", "", "bob")
    try:
        holder.begin(ana)
        other.begin(bob)  # another owner: not held up
        other.commit()
        waited = threading.Event()

        def wait_for_ana() -> None:
            other.begin(ana)
            waited.set()
            other.rollback()

        thread = threading.Thread(target=wait_for_ana)
        thread.start()
        assert not waited.wait(0.3)  # the same owner waits for the holder
        holder.commit()
        assert waited.wait(5)
        thread.join()
    finally:
        holder.close()
        other.close()


def test_forget_deletes_the_owners_rows_and_logs_the_erasure(store_spec: str) -> None:
    with opened("buffer-summary", store_spec) as memory:
        memory.write("ana", entries(["ana's secret is the blue door", "she hides a key", "and a map", "far away"]))
        memory.write("bob", entries(["bob plays the cello"]))
        assert memory.design.owner_rows("ana").docs  # her summary: a document, forgotten too
        before = memory.context("bob", "music", LATER, 300).text
        gone = memory.forget("ana")
    assert gone >= 6
    rows = open_rows(store_spec)
    try:
        held, kept = rows.read_owner(OwnerKey("buffer-summary", "", "ana"))
        assert held == Held() and kept == OwnerRows([], {}, {}, {})
        assert rows.entry_keys(OwnerKey("buffer-summary", "", "ana")) == {}
        assert rows.owners("buffer-summary", "") == ["bob"]
        [erased] = rows.erasures()
        assert erased["rows"] == gone and "ana" not in str(erased)
        assert erased["owner_sha256"] == __import__("hashlib").sha256(b"ana").hexdigest()
    finally:
        rows.close()
    assert memory_of("buffer-summary", store_spec, "bob")[1] == before
    assert check(store_spec) == []


def test_forget_on_postgres_leaves_the_text_in_no_table(postgres_spec: str) -> None:
    import psycopg

    with opened("full", postgres_spec) as memory:
        memory.write("ana", entries(["the zebra-lantern recipe"]))
        forgot = datetime.now(UTC)
        memory.forget("ana")
    schema = postgres_spec.rsplit("schema=", 1)[1]
    with psycopg.connect(postgres_spec.rsplit("?", 1)[0]) as db:
        tables = [t for (t,) in db.execute("SELECT tablename FROM pg_tables WHERE schemaname=%s", (schema,))]
        found = [t for t in tables if db.execute(
            f"SELECT count(*) FROM {schema}.{t} t WHERE t::text LIKE '%%zebra-lantern%%'").fetchone() != (0,)]
        assert found == []
        # VACUUM ran on every table the forget deleted from, after it (and on no other).
        vacuumed = dict(db.execute("SELECT relname, last_vacuum FROM pg_stat_user_tables WHERE schemaname=%s "
                                   "AND last_vacuum IS NOT NULL", (schema,)).fetchall())
        assert set(vacuumed) == set(OWNER_TABLES) and min(vacuumed.values()) >= forgot - timedelta(seconds=1)


WRITER = textwrap.dedent("""
    import sys
    from datetime import UTC, datetime, timedelta
    import memstream.designs.store.bound as bound
    from memstream.designs import entry, open_design
    spec, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    bound.OPTIMISTIC = int(sys.argv[4])  # 0: every write holds the owner's lock from its start
    t = datetime(2025, 1, 1, tzinfo=UTC)
    with open_design("full", store=spec) as memory:
        for i in range(n):
            [made] = memory.write("ana", [entry(text=f"{tag} {i}", at=t + timedelta(seconds=i))])
            print(made, flush=True)
""")


def writer(spec: str, tag: str, n: int, optimistic: int = 3) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, spec, tag, str(n), str(optimistic)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
@pytest.mark.parametrize("optimistic", [3, 0], ids=["optimistic-then-locked", "locked"])
def test_two_processes_writing_one_owner_keep_every_entry_once_in_order(postgres_spec: str, optimistic: int) -> None:
    n = 100
    procs = [writer(postgres_spec, tag, n, optimistic) for tag in ("left", "right")]
    acked = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        acked += [int(line) for line in out.split()]
    records = memory_of("full", postgres_spec, "ana")[0]
    texts_ = [text for _, text in records]
    assert sorted(i for i, _ in records) == sorted(acked) and len(set(acked)) == 2 * n
    for tag in ("left", "right"):
        assert [t for t in texts_ if t.startswith(tag)] == [f"{tag} {i}" for i in range(n)]
    assert check(postgres_spec) == []


@pytest.mark.slow
def test_kill_9_mid_write_on_postgres_keeps_every_acknowledged_write(postgres_spec: str) -> None:
    acked: list[int] = []
    for round_ in range(3):
        p = writer(postgres_spec, f"round{round_}", 10_000)
        assert p.stdout is not None
        for _ in range(5 + 7 * round_):
            acked.append(int(p.stdout.readline()))
        p.kill()
        p.wait()
        acked += [int(line) for line in p.stdout.read().split()]  # acknowledged before the kill landed
    assert check(postgres_spec) == []
    kept = {i for i, _ in memory_of("full", postgres_spec, "ana")[0]}
    assert set(acked) <= kept


def test_the_missing_driver_names_the_extra_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtraError) as raised, open_design("full", store="postgresql://u@127.0.0.1/db"):
        pass
    assert str(raised.value) == ("a PostgreSQL design store needs memstream[postgres]: "
                                 "pip install 'memstream[postgres]'")


@pytest.mark.parametrize("name", ["stream", "facts"])
def test_a_design_with_its_own_file_is_refused_on_postgres_naming_those_that_work(name: str) -> None:
    with pytest.raises(MemstreamError) as raised, open_design(name, store="postgresql://u@127.0.0.1/db"):
        pass
    message = str(raised.value)
    assert "\n" not in message and f"the {name} design" in message and "full" in message
    assert "stream," not in message and "facts," not in message


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    start = time.monotonic()
    with pytest.raises(MemstreamError) as raised, open_design("full", store="postgresql://me:hunter2@127.0.0.1:1/db"):
        pass
    message = str(raised.value)
    assert message.startswith("postgresql://me@127.0.0.1:1/db?schema=memstream: cannot connect (")
    assert "hunter2" not in message and "\n" not in message
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("schema", ["Bad-Name", "x;drop", "a" * 64, ""])
def test_a_schema_that_is_not_a_plain_name_is_refused(schema: str) -> None:
    with pytest.raises(MemstreamError, match="is not a plain name"), \
            open_design("full", store=f"postgresql://u@127.0.0.1/db?schema={schema}"):
        pass


def test_a_schema_of_other_tables_is_refused_and_left_alone(postgres_spec: str) -> None:
    import psycopg

    schema = postgres_spec.rsplit("schema=", 1)[1]
    with psycopg.connect(postgres_spec.rsplit("?", 1)[0], autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
        db.execute(f"CREATE TABLE {schema}.invoices (n INT)")
    with pytest.raises(MemstreamError, match="not a memstream design store; name another schema"), \
            open_design("full", store=postgres_spec):
        pass
    with psycopg.connect(postgres_spec.rsplit("?", 1)[0]) as db:
        assert [t for (t,) in db.execute("SELECT tablename FROM pg_tables WHERE schemaname=%s", (schema,))] == [
            "invoices"]


def test_read_only_on_postgres_reads_and_refuses_writes(postgres_spec: str) -> None:
    with pytest.raises(MemstreamError, match="holds no memory yet"), \
            open_design("full", store=postgres_spec, read_only=True):
        pass
    with opened("full", postgres_spec) as memory:
        memory.write("ana", entries(["kept"]))
    with open_design("full", store=postgres_spec, read_only=True) as memory:
        assert [r.text for r in memory.records("ana")] == ["kept"]
        with pytest.raises(MemstreamError, match="read-only"):
            memory.write("ana", entries(["refused"]))


def test_check_on_postgres_finds_a_record_whose_id_was_never_handed_out(postgres_spec: str) -> None:
    import psycopg

    with opened("full", postgres_spec) as memory:
        memory.write("ana", entries(["one", "two"]))
    assert check(postgres_spec) == []
    schema = postgres_spec.rsplit("schema=", 1)[1]
    with psycopg.connect(postgres_spec.rsplit("?", 1)[0], autocommit=True) as db:
        db.execute(f"UPDATE {schema}.design_records SET id = 99999 WHERE text = 'two'")
    problems = check(postgres_spec)
    assert len(problems) == 1 and problems[0].startswith("full: record id 99999 was never handed out (next id ")
