"""The design store under attack: many processes on one file, kill -9 mid-write, bad files and bad luck.

Every test runs for every design the store can hold (:data:`memstream.designs.DESIGNS`, those whose
binding works: the others are skipped with the store's own one-line reason), so a design is covered the
moment it keeps rows. The claims (issue #39): nothing acknowledged is ever lost or doubled, each owner's
entries stay in their order, a killed process leaves the store at its last commit and ``check`` clean, and
every refusal is one line that changes nothing.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import tempfile
import time
from contextlib import ExitStack, closing
from datetime import timedelta
from pathlib import Path
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memstream.designs import DESIGNS, entry, open_design
from memstream.designs.store import check, check_store, own_file_path
from memstream.designs.store.bound import OPTIMISTIC
from memstream.errors import MemstreamError
from memstream.models import HashEmbedder, OfflineChatModel, answer_all
from memstream.stream import MemoryStream
from tests.designs import store_worker
from tests.designs.store_worker import EMBED_DIM, START, entry_of, opened


def _binding_problem(name: str) -> str | None:
    """Why ``name`` cannot be kept in a design store yet (its one-line refusal), or None if it can."""
    with tempfile.TemporaryDirectory() as folder:
        try:
            with opened(name, str(Path(folder) / "probe.db")) as memory:
                memory.write("probe", [entry_of(0, 0)])
                memory.records("probe")
        except MemstreamError as e:
            return str(e)
    return None


def _stored_designs() -> list[Any]:
    params = []
    for name in DESIGNS:
        problem = _binding_problem(name)
        params.append(pytest.param(name, id=name, marks=[pytest.mark.skip(reason=problem)] if problem else []))
    return params


STORED = _stored_designs()


def _forkserver() -> Any:
    """Processes forked from a server that imported memstream (each starts in milliseconds, not a second)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["memstream.designs", "tests.designs.store_worker"])
    return ctx


def _exported(memory: Any, owner: str) -> list[str]:
    """The ids of ``owner``'s entries, in the order the store keeps them."""
    return [e.id for e in memory.export(owner)]


def _all_record_ids(memory: Any) -> list[int]:
    return [r.id for owner in memory.owners() for r in memory.records(owner)]


def _store_files(path: Path) -> dict[str, bytes]:
    """The bytes of the store and its write-ahead log, to prove a refusal wrote nothing. Left out: the -shm
    file (SQLite's index of the log, which any reader updates) and an empty log (the same as none: SQLite
    makes both for a reader of a WAL file, whoever opens it)."""
    files = {p.name: p.read_bytes() for p in sorted(path.parent.glob(path.name + "*"))
             if p.is_file() and not p.name.endswith("-shm")}
    return {name: data for name, data in files.items() if data or not name.endswith("-wal")}


def _one_line(error: pytest.ExceptionInfo[MemstreamError]) -> str:
    message = str(error.value)
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


# -- many processes ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("design", STORED)
def test_four_processes_of_500_entries_keep_all_2000_once_in_order(design: str, tmp_path: Path) -> None:
    store = str(tmp_path / "memory.db")
    ctx, count = _forkserver(), 500
    owners = {0: "ana", 1: "ana", 2: "ben", 3: "cleo"}  # processes 0 and 1 interleave on one owner
    barrier = ctx.Barrier(len(owners))
    workers = [ctx.Process(target=store_worker.write_many, args=(design, store, owner, p, count, barrier))
               for p, owner in owners.items()]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
    assert [w.exitcode for w in workers] == [0] * len(workers)
    assert check(store) == []
    with opened(design, store) as memory:
        assert sorted(memory.owners()) == ["ana", "ben", "cleo"]
        seen: list[str] = []
        for owner in memory.owners():
            ids = _exported(memory, owner)
            seen += ids
            for p in (p for p, o in owners.items() if o == owner):
                mine = [int(i.split("-")[1]) for i in ids if i.startswith(f"p{p}-")]
                assert mine == list(range(count)), f"process {p}'s entries for {owner} out of order or missing"
            given = memory.held.entry_keys(owner)  # (a design also keeps records it made: letta's archive)
            texts = [r.text for r in memory.records(owner) if r.id in given]
            assert [t.split(":")[0] for t in texts] == [f"process {i[1]} entry {i.split('-')[1]}" for i in ids]
        ana = [i.split("-")[0] for i in _exported(memory, "ana")]
        assert sum(a != b for a, b in zip(ana, ana[1:], strict=False)) > 1, "the two writers of ana never interleaved"
        assert sorted(seen) == sorted(f"p{p}-{s}" for p in owners for s in range(count))
        record_ids = _all_record_ids(memory)  # every record, the design's own (letta's archive) too: none twice
        assert len(record_ids) == len(set(record_ids))
        assert sum(len(memory.held.entry_keys(o)) for o in memory.owners()) == len(owners) * count


OWNERS = ("ana", "ben")
HANDLES = 3

operations = st.lists(st.one_of(
    st.tuples(st.just("write"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS), st.integers(1, 4),
              st.booleans()),
    st.tuples(st.just("consolidate"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS)),
    st.tuples(st.just("context"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS)),
    st.tuples(st.just("forget"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS)),
), min_size=1, max_size=25)


@pytest.mark.slow
@pytest.mark.parametrize("design", STORED)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
@example(ops=[("write", 1, "ben", 1, False), ("forget", 0, "ben"), ("write", 0, "ben", 1, False)])  # found so
def test_handles_on_one_store_interleaved_agree_with_a_fresh_one(design: str, ops: list[tuple[Any, ...]]) -> None:
    """Several handles (each its own connection and in-memory memory) on one file, used in turn at random:
    each one's context, once it catches up, is a fresh handle's; every entry is kept once, in order. The
    example: an owner forgotten by one handle and written again came back at the version another handle
    still held, which then showed the forgotten entry as if it were still there."""
    kept: dict[str, list[str]] = {o: [] for o in OWNERS}  # what each owner must hold: entry ids in order
    first_id: dict[str, int] = {}  # each kept entry's record id (a retried write returns it again)
    written = 0
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        store = str(Path(folder) / "memory.db")
        handles = [stack.enter_context(opened(design, store)) for _ in range(HANDLES)]
        now = START + timedelta(days=1)
        for op in ops:
            memory, owner = handles[op[1]], op[2]
            if op[0] == "write":
                again = op[4] and kept[owner]
                made = ([e for e in handles[0].export(owner) if e.id == kept[owner][-1]] if again else
                        [entry_of(7, written + k) for k in range(op[3])])
                written += 0 if again else op[3]
                ids = memory.write(owner, made)
                for e, i in zip(made, ids, strict=True):
                    if e.id in kept[owner]:
                        assert i == first_id[e.id], "a retried entry is stored once, with its first id"
                    else:
                        kept[owner].append(e.id)
                        first_id[e.id] = i
            elif op[0] == "consolidate":
                memory.consolidate(owner, now)
            elif op[0] == "context":
                memory.context(owner, "the violin near the harbour", now, 400)
            else:
                memory.forget(owner)
                for i in kept[owner]:
                    first_id.pop(i)
                kept[owner] = []
        assert check(store) == []
        with opened(design, store) as fresh:
            for owner in OWNERS:
                assert _exported(fresh, owner) == kept[owner]
                want = fresh.context(owner, "the violin near the harbour", now, 400)
                for memory in handles:
                    assert memory.context(owner, "the violin near the harbour", now, 400) == want
                    assert _exported(memory, owner) == kept[owner]
            record_ids = _all_record_ids(fresh)
            assert len(record_ids) == len(set(record_ids))


# -- one handle, several owners' writes side by side (how a batched runner drives them) -----------------


class Asking:
    """A write stage of a design driven by hand, one model answer at a time (as ``concurrently`` does)."""

    def __init__(self, stage: Any) -> None:
        self.stage, self.asked, self.done, self.result = stage, None, False, None

    def step(self, answer: Any = None) -> bool:
        """Advance to the next question (answering the last one); False once the stage has ended."""
        try:
            self.asked = self.stage.send(answer)
        except StopIteration as end:
            self.done, self.result = True, end.value
        return not self.done

    def answer(self) -> Any:
        requests = self.asked if isinstance(self.asked, list) else [self.asked]
        answers = answer_all(OfflineChatModel(), requests)
        return answers if isinstance(self.asked, list) else answers[0]

    def finish(self) -> Any:
        while self.step(self.answer()):
            pass
        return self.result


def _asking_write(memory: Any, owner: str) -> tuple[Asking, list[str]]:
    """A write for ``owner`` stopped at its first question to the model (skip: the design's writes ask none)."""
    made = [entry_of(4, s) for s in range(60)]
    stage = Asking(memory.remember_stage(owner, made))
    if not stage.step():
        pytest.skip(f"the {memory.name} design writes without asking the model: no other write can run inside one")
    return stage, [e.id for e in made]


@pytest.mark.parametrize("design", STORED)
def test_a_sibling_write_failing_leaves_the_other_write_of_the_handle_whole(design: str, tmp_path: Path) -> None:
    """One handle, two owners' writes side by side: the one for a damaged owner fails in one line; the other,
    waiting for its model answer meanwhile, still stores all it wrote (it crashed on an assertion)."""
    store = tmp_path / "memory.db"
    _make(design, store, owners=("ben",))
    _damage(design, store, "time that is not a time", "ben")
    with opened(design, str(store)) as memory:
        ana, made = _asking_write(memory, "ana")
        with pytest.raises(MemstreamError) as error:
            memory.write("ben", [entry_of(2, 0)])
        assert "damaged" in _one_line(error)
        assert all(isinstance(i, int) for i in ana.finish())
    with opened(design, str(store)) as memory:
        assert _exported(memory, "ana") == made


@pytest.mark.parametrize("design", STORED)
def test_a_sibling_write_while_one_holds_the_lock_is_refused_and_harms_neither(design: str, tmp_path: Path) -> None:
    """One handle's write for ana conflicts again and again (another handle writes ana each time it waits for
    its model), so it runs holding the store's write lock; a write for ben through the same handle meanwhile
    is refused in one line naming the way out, and neither rolls back nor commits ana's half-done write."""
    store = tmp_path / "memory.db"
    _make(design, store)
    with opened(design, str(store)) as memory, opened(design, str(store)) as other:
        own = getattr(memory.held, "file", None)
        if own is not None:
            if own.commits_as_written:
                pytest.skip(f"the {design} design's file commits each entry as it is written and never tries a "
                            "write again: none of its writes holds the store's write lock while it waits")
            # an own file takes what a write adds (the stream: its ids) once the model has answered, so another
            # process conflicts with the write only after its stage and before its commit: the other handle
            # writes ana there, as often as it takes to make the write run under the lock
            stage, conflicts = memory.design.remember_stage, [0]

            def conflicted_stage(owner: str, entries: Any) -> Any:
                ids = yield from stage(owner, entries)
                if conflicts[0] < OPTIMISTIC:
                    conflicts[0] += 1
                    other.write("ana", [entry_of(6, conflicts[0])])
                return ids

            memory.design.remember_stage = conflicted_stage
        ana, made = _asking_write(memory, "ana")
        meddled = 0
        while not memory.held.store.db.in_transaction:  # until ana's write runs under the lock
            other.write("ana", [entry_of(5, meddled)])
            meddled += 1
            assert ana.step(ana.answer()), "ana's write ended before it ran under the lock"
        before = {o: _exported(other, o) for o in OWNERS}
        with pytest.raises(MemstreamError) as error:
            memory.write("ben", [entry_of(2, 0)])
        assert "lock" in _one_line(error)
        assert memory.held.store.db.in_transaction, "ben's refusal rolled back ana's write"
        assert all(isinstance(i, int) for i in ana.finish())
        assert _exported(other, "ana") == before["ana"] + made
        assert _exported(other, "ben") == before["ben"]
        memory.write("ben", [entry_of(2, 0)])  # the lock is free again
    assert check(str(store)) == []


@pytest.mark.parametrize("design", STORED)
def test_a_second_write_for_an_owner_under_way_is_refused_in_one_line(design: str, tmp_path: Path) -> None:
    """Two writes for one owner side by side through one handle would share its memory half-changed (the
    second committed the first one's records without their keys): the second is refused, the first whole."""
    store = tmp_path / "memory.db"
    with opened(design, str(store)) as memory:
        ana, made = _asking_write(memory, "ana")
        for change in (lambda: memory.write("ana", [entry_of(2, 0)]), lambda: memory.forget("ana")):
            with pytest.raises(MemstreamError) as error:
                change()
            assert "under way" in _one_line(error)
        ana.finish()
        memory.write("ana", [entry_of(2, 0)])
    with opened(design, str(store)) as memory:
        assert _exported(memory, "ana") == [*made, "p2-0"]


# -- kill -9 -------------------------------------------------------------------------------------------

#: Times each design's writer is killed (after one run that is not, to time fifty operations here).
KILLS = 6


@pytest.mark.slow
@pytest.mark.parametrize("design", STORED)
def test_kill_9_mid_write_loses_no_acknowledged_write(design: str, tmp_path: Path) -> None:
    """A process writing and consolidating is killed (SIGKILL) at a random moment of its fifty operations,
    again and again over one store: each time the store opens, passes ``check``, and holds every
    acknowledged write once, with the record ids the write returned."""
    store, acks = str(tmp_path / "memory.db"), tmp_path / "acks.jsonl"
    ctx, rng = _forkserver(), Random(f"kill-9 {design}")
    acknowledged: dict[str, tuple[str, int]] = {}
    lasted, killed = 0.0, 0
    for run in range(KILLS + 1):
        ready = ctx.Event()
        worker = ctx.Process(target=store_worker.crash_run,
                             args=(design, store, run, rng.randrange(1 << 30), str(acks), OWNERS, ready))
        worker.start()
        assert ready.wait(timeout=120), "the writer never opened the store"
        started = time.monotonic()
        if run == 0:  # how long fifty operations take on this machine, now (the process's start left out)
            worker.join(timeout=120)
            assert worker.exitcode == 0
            lasted = time.monotonic() - started
        else:
            time.sleep(rng.uniform(0.0, 1.2 * lasted))
            worker.kill()
            worker.join(timeout=60)
            killed += worker.exitcode == -signal.SIGKILL
        for line in acks.read_text().splitlines() if acks.exists() else []:
            ack = json.loads(line)
            acknowledged.update({e: (ack["owner"], r) for e, r in zip(ack["entries"], ack["records"], strict=True)})
        assert check(store) == [], f"after kill {run}"
        with opened(design, store) as memory:
            held = {o: _exported(memory, o) for o in memory.owners()}
            for owner, ids in held.items():
                assert len(ids) == len(set(ids)), f"an entry of {owner} is stored twice"
            missing = [e for e, (o, _) in acknowledged.items() if e not in held.get(o, [])]
            assert not missing, f"after kill {run}: acknowledged but lost: {missing[:5]}"
            record_of = {e.id: r.id for o in held for e, r in zip(memory.export(o), _kept_records(memory, o),
                                                                   strict=True)}
            assert all(record_of[e] == r for e, (_, r) in acknowledged.items())
            record_ids = _all_record_ids(memory)
            assert len(record_ids) == len(set(record_ids))
            for owner in held:
                memory.context(owner, "the lantern", START, 300)  # every owner loads and assembles
    assert killed >= 1, "every writer had finished before its kill: the test killed nothing mid-write"


def _kept_records(memory: Any, owner: str) -> list[Any]:
    """``owner``'s records that came from entries (what export gives, in the same order)."""
    keys = memory.held.entry_keys(owner)
    return [r for r in memory.records(owner) if r.id in keys]


# -- bad input and bad luck ----------------------------------------------------------------------------


def _make(design: str, store: Path, owners: tuple[str, ...] = OWNERS, count: int = 3) -> None:
    with opened(design, str(store)) as memory:
        for o in owners:
            memory.write(o, [entry_of(1, s) for s in range(count)])


def _not_a_store(tmp_path: Path, what: str) -> Path:
    path = tmp_path / "file.db"
    if what == "stream file":
        MemoryStream(path).close()
    elif what == "text file":
        path.write_text("remember: milk\n")
    elif what == "directory":
        path.mkdir()
    elif what == "folder that does not exist":
        path = tmp_path / "nowhere" / "file.db"
    elif what == "empty path":
        path = Path("")
    elif what == "sqlite file of another program":
        with closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE songs (title TEXT)")
            db.commit()
    return path


@pytest.mark.parametrize("design", STORED)
@pytest.mark.parametrize("what", ["stream file", "text file", "directory", "folder that does not exist",
                                  "empty path", "sqlite file of another program"])
@pytest.mark.parametrize("read_only", [False, True])
def test_a_file_that_is_not_a_design_store_is_refused_in_one_line(design: str, what: str, read_only: bool,
                                                                  tmp_path: Path) -> None:
    path = _not_a_store(tmp_path, what)
    before = _folder(tmp_path)
    with pytest.raises(MemstreamError) as error, open_design(design, store=path, read_only=read_only):
        pass
    _one_line(error)
    assert _folder(tmp_path) == before


def _folder(folder: Path) -> dict[str, bytes]:
    """What every store-like file under ``folder`` holds (as :func:`_store_files` counts it)."""
    found: dict[str, bytes] = {}
    for p in folder.rglob("*"):
        found.update({f"{p}:{name}": data for name, data in _store_files(p).items()} if p.is_file() else {str(p): b""})
    return found


@pytest.mark.parametrize("design", STORED)
def test_a_store_of_a_newer_format_is_refused_and_left_alone(design: str, tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    _make(design, store)
    with closing(sqlite3.connect(store)) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        db.commit()
    before = _store_files(store)
    for read_only in (False, True):
        with pytest.raises(MemstreamError) as error, open_design(design, store=store, read_only=read_only):
            pass
        assert "newer" in _one_line(error) and "upgrade" in str(error.value)
    assert _store_files(store) == before


def _other_settings(design: str) -> dict[str, Any]:
    """Settings of ``design`` other than its defaults (the first whole-number or number field changed)."""
    fields = DESIGNS[design].Config.model_fields
    for name, info in fields.items():
        if type(info.default) is int:
            return {name: info.default + 1}
    for name, info in fields.items():
        if type(info.default) is float:
            return {name: info.default / 2}
    pytest.skip(f"the {design} design has no number setting to change")


@pytest.mark.parametrize("design", STORED)
def test_other_settings_are_refused_unless_reconfigured_then_recorded(design: str, tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    _make(design, store)
    other = _other_settings(design)
    before = _store_files(store)
    with pytest.raises(MemstreamError) as error, open_design(design, store=store, **other):
        pass
    message = _one_line(error)
    assert next(iter(other)) in message and "reconfigure" in message
    assert _store_files(store) == before
    with open_design(design, store=store):  # no settings: the store's
        pass
    with open_design(design, store=store, reconfigure=True, **other) as memory:
        assert memory.config.model_dump()[next(iter(other))] == other[next(iter(other))]
    with closing(sqlite3.connect(store)) as db:
        (changes,) = db.execute("SELECT changes FROM design_settings WHERE design=?", (design,)).fetchone()
    (change,) = json.loads(changes)
    assert change["to"][next(iter(other))] == other[next(iter(other))]
    assert change["from"] != change["to"]
    with open_design(design, store=store, **other):  # the new settings are now the store's
        pass


@pytest.mark.parametrize("design", STORED)
def test_a_store_opened_read_only_reads_and_refuses_writes_in_one_line(design: str, tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    _make(design, store)
    with opened(design, str(store)) as memory:
        want = memory.context("ana", "the lantern", START, 300)
    before = _store_files(store)
    with open_design(design, store=store, read_only=True, embedder=HashEmbedder(EMBED_DIM)) as memory:
        assert memory.context("ana", "the lantern", START, 300) == want
        assert _exported(memory, "ana") == [f"p1-{s}" for s in range(3)]
        for write in (lambda: memory.write("ana", [entry_of(2, 0)]), lambda: memory.consolidate("ana", START),
                      lambda: memory.forget("ana")):
            with pytest.raises(MemstreamError) as error:
                write()
            assert "read-only" in _one_line(error)
    assert _store_files(store) == before


#: Who reads a read-only store when the tests run as root (whom chmod does not stop): ``nobody``.
NOBODY = 65534


@pytest.mark.slow  # a process per case (the first starts the forkserver)
@pytest.mark.parametrize("design", STORED)
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_file_or_folder_reads_and_refuses_writes_in_one_line(design: str, what: str,
                                                                         tmp_path: Path) -> None:
    """A store on a read-only file or in a read-only folder: reads work (``read_only=True``), a write is
    refused in one line, nothing changes. Run as root, the reader is a process that became ``nobody``."""
    root = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="memstream-ro-")) if root else tmp_path  # (nobody cannot enter tmp_path)
    folder = base / "store"
    folder.mkdir()
    store = folder / "memory.db"
    try:
        _make(design, store)
        with opened(design, str(store)) as memory:
            want = memory.context("ana", "the lantern", START, 300)
        before = _store_files(store)
        if root:
            base.chmod(0o755)
            for p in (folder, store):
                os.chown(p, NOBODY, NOBODY)
        (store if what == "file" else folder).chmod(0o444 if what == "file" else 0o555)
        ctx = _forkserver()
        results = ctx.Queue()
        reader = ctx.Process(target=store_worker.as_reader, args=(design, str(store), NOBODY if root else None,
                                                                  results))
        reader.start()
        seen = results.get(timeout=60)
        reader.join(timeout=60)
        assert seen.get("context") == want, seen
        assert "wrote" not in seen and "read-only" in seen["write"] and "\n" not in seen["write"], seen
        assert _store_files(store) == before
    finally:
        folder.chmod(0o755)
        store.chmod(0o644)
        if root:
            shutil.rmtree(base)


@pytest.mark.parametrize("design", STORED)
def test_a_full_disk_refuses_the_write_in_one_line_and_keeps_the_rest(design: str, tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    _make(design, store)
    with opened(design, str(store)) as memory:
        earlier = {o: _exported(memory, o) for o in OWNERS}
        own = getattr(memory.held, "file", None)  # a design kept in a file of its own writes there
        db = memory.held.store.db if own is None else own.db
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        db.execute(f"PRAGMA max_page_count={pages}")  # not one page more: the disk is full
        big = [entry(text=f"{entry_of(3, s).text} {'and more ' * 300}", at=START, id=f"big-{s}") for s in range(40)]
        with pytest.raises(MemstreamError) as error:
            memory.write("ana", big)
        message = _one_line(error)
        assert "full" in message
        kept = _exported(memory, "ana")[len(earlier["ana"]):]
        if own is None or not own.commits_as_written:
            assert kept == [], "the failed write was not half-kept"
        else:  # each entry its own transaction: the ones before the full disk, each whole, and the line says so
            assert kept == [e.id for e in big[:len(kept)]] and f"{len(kept)} of its 40" in message if kept else \
                "nothing of it was kept" in message, message
        assert _exported(memory, "ana")[:len(earlier["ana"])] == earlier["ana"]
        assert check(str(store)) == []
        db.execute("PRAGMA max_page_count=1073741823")  # space again
        ids = memory.write("ana", big[:3])
        assert all(isinstance(i, int) for i in ids)
    with opened(design, str(store)) as memory:
        assert _exported(memory, "ana") == earlier["ana"] + [e.id for e in big[:max(3, len(kept))]]
        assert _exported(memory, "ben") == earlier["ben"]
    assert check(str(store)) == []


def _said(at: str) -> str:
    """What a facts file beside a store keeps beside a turn's entry key (its time, source, kind, session)."""
    return json.dumps([at, "p1", "turn", ""])


#: The first memory of an owner in a stream file, and the first turn in a facts file.
_FIRST_MEMORY = "id = (SELECT MIN(id) FROM memories WHERE owner=:owner)"
_FIRST_SOURCE = "id = (SELECT MIN(id) FROM sources WHERE owner=:owner)"
_SET_SAID = f"UPDATE sources SET key = substr(key, 1, instr(key, char(31))) || :said WHERE {_FIRST_SOURCE}"
#: Each damage as SQL, for the store's rows and for the file of each design that keeps one: the same harm
#: where that design keeps the same thing (a stream keeps a memory's time and metadata, and per owner a
#: reflection mark; a facts file keeps what a turn says beside its text as JSON in its key, and per owner
#: a profile listing its facts). A damage missing for a design has nothing to harm there: neither file
#: keeps a per-owner log of JSON items that its design reads back (the stream's access log holds times as
#: numbers, the facts file's audit is never read by the design).
DAMAGE: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "doc that is not JSON": {
        "rows": ("INSERT OR REPLACE INTO design_docs VALUES (:design, '', :owner, 'summary', '{not json')", {}),
        "stream": ("INSERT OR REPLACE INTO meta VALUES ('reflection.through.' || :owner, 'nope')", {}),
        "facts": ("INSERT OR REPLACE INTO profiles VALUES ('', :owner, 'likes tea', '{not json', 0)", {})},
    "extra that is not JSON": {
        "rows": ("UPDATE design_records SET extra='[1,' WHERE design=:design AND owner=:owner AND seq = "
                 "(SELECT MIN(seq) FROM design_records WHERE owner=:owner)", {}),
        # (the stream file's index on the entry key in metadata refuses text that is not JSON at all)
        "stream": (f"UPDATE memories SET metadata='[1, 2]' WHERE {_FIRST_MEMORY}", {}),
        "facts": (_SET_SAID, {"said": "[1,"})},
    "log item that is not JSON": {
        "rows": ("INSERT INTO design_logs (design, scope, owner, name, value) "
                 "VALUES (:design, '', :owner, 'versions', 'nope')", {})},
    "impossible time": {
        "rows": ("UPDATE design_records SET at='2026-02-30T09:00:00+00:00' WHERE design=:design AND owner=:owner", {}),
        "stream": ("UPDATE memories SET created_at='2026-02-30T09:00:00+00:00' WHERE owner=:owner", {}),
        "facts": (_SET_SAID, {"said": _said("2026-02-30T09:00:00+00:00")})},
    "time that is not a time": {
        "rows": ("UPDATE design_records SET at='yesterday' WHERE design=:design AND owner=:owner", {}),
        "stream": ("UPDATE memories SET created_at='yesterday' WHERE owner=:owner", {}),
        "facts": (_SET_SAID, {"said": _said("yesterday")})},
    "time without a zone": {
        "rows": ("UPDATE design_records SET at='2026-03-01T09:00:00' WHERE design=:design AND owner=:owner", {}),
        "stream": ("UPDATE memories SET created_at='2026-03-01T09:00:00' WHERE owner=:owner", {}),
        "facts": (_SET_SAID, {"said": _said("2026-03-01T09:00:00")})},
}


def _kept_as(design: str) -> str:
    """Where ``design`` keeps its memory in a store: ``rows``, or the name of its own file's kind."""
    return design if DESIGNS[design].keeps_own_file else "rows"


def _damage(design: str, store: Path, damage: str, owner: str) -> None:
    """Apply ``damage`` to ``owner``'s memory where ``design`` keeps it (its append-only triggers set aside
    for the moment: this is the disk, or another program, not memstream)."""
    sql, params = DAMAGE[damage][_kept_as(design)]
    path = store if _kept_as(design) == "rows" else Path(own_file_path(store, design))
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN")
        triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger' AND name LIKE "
                              "'%append_only_update'").fetchall()
        for name, _ in triggers:
            db.execute(f"DROP TRIGGER {name}")
        assert db.execute(sql, {"design": design, "owner": owner, **params}).rowcount, "nothing was damaged"
        for _, made in triggers:
            db.execute(made)
        db.execute("COMMIT")


def _damaged_designs() -> list[Any]:
    return [pytest.param(damage, *p.values, id=f"{damage}-{p.id}", marks=p.marks) for damage in DAMAGE
            for p in STORED if _kept_as(p.values[0]) in DAMAGE[damage]]


@pytest.mark.parametrize(("damage", "design"), _damaged_designs())
def test_damaged_rows_are_listed_by_check_and_only_their_owner_fails(design: str, damage: str,
                                                                   tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    _make(design, store)
    with opened(design, str(store)) as memory:
        ben = memory.context("ben", "the lantern", START, 300)
    _damage(design, store, damage, "ana")
    problems = check(str(store))
    assert problems and all("\n" not in p for p in problems), problems
    assert check_store(str(store)) == problems[:50]  # what `memstream memory check` prints
    with opened(design, str(store)) as memory:
        with pytest.raises(MemstreamError) as error:
            memory.context("ana", "the lantern", START, 300)
        message = _one_line(error)
        assert "ana" in message and "check" in message
        assert memory.context("ben", "the lantern", START, 300) == ben
        with pytest.raises(MemstreamError):
            memory.write("ana", [entry_of(2, 0)])
        memory.write("ben", [entry_of(2, 0)])
    assert len(check(str(store))) == len(problems)


def test_batches_mix_writes_of_five_and_of_one() -> None:
    assert store_worker.batches(12) == [range(0, 5), range(5, 6), range(6, 11), range(11, 12)]
    assert [seq for cut in store_worker.batches(500) for seq in cut] == list(range(500))
