"""One record updated or deleted alone (#42), where the design's memory is its records (``changes_records``):
every read after it (records, context, ranking, export, a fresh handle, another process) says the change and
nothing of what was there before; ``check`` stays clean; a design that builds its memory from its records
refuses in one line naming why. On both back-ends (``store_spec``), and against a model (a dict) of the
records for interleavings of adds, updates and deletes across owners and handles."""

from __future__ import annotations

import multiprocessing
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.designs import DESIGNS, NoSuchRecord
from memstream.designs.store import check, check_store
from memstream.errors import MemstreamError
from memstream.models import HashEmbedder
from tests.designs import store_worker
from tests.designs.store_worker import EMBED_DIM, START, entry_of, opened

CHANGING = [d for d, kind in DESIGNS.items() if kind.changes_records]
#: The designs a store keeps as rows that build their memory from them (those kept in a file of their own are
#: refused alike: tests/designs/test_store_own_file.py binds them).
KEEPING = [d for d, kind in DESIGNS.items() if not kind.changes_records]
QUERY = "the violin near the harbour"


def test_the_designs_whose_memory_is_their_records_are_the_ones_that_change_them() -> None:
    assert set(CHANGING) == {"full", "vector", "recent"}
    for name in KEEPING:
        assert DESIGNS[name].records_stay and "would still hold" in DESIGNS[name].records_stay, name


def _texts(memory: Any, owner: str) -> list[str]:
    return [r.text for r in memory.records(owner)]


@pytest.mark.parametrize("design", CHANGING)
def test_an_update_and_a_delete_are_what_every_read_then_says(design: str, store_spec: str) -> None:
    made = [entry_of(1, s) for s in range(4)]
    with opened(design, store_spec) as memory, opened(design, store_spec) as other:
        ids = memory.write("ana", made)
        memory.write("ben", [entry_of(2, 0)])
        other.context("ana", QUERY, START, 2000)  # another handle holds ana (and her index) as she was
        updated = memory.update("ana", ids[1], "Ana keeps a cello in the attic")
        assert (updated.id, updated.text, updated.at, updated.source) == (ids[1], "Ana keeps a cello in the attic",
                                                                          made[1].at, made[1].source)
        memory.delete("ana", ids[2])
        want = [made[0].text, "Ana keeps a cello in the attic", made[3].text]
        for handle in (memory, other):
            assert _texts(handle, "ana") == want
            assert [r.id for r in handle.records("ana")] == [ids[0], ids[1], ids[3]]
            context = handle.context("ana", "cello attic", START, 2000)
            cited = {i for b in context.blocks for i in b.ids}
            assert made[2].text not in context.text and made[1].text not in context.text
            assert ids[2] not in cited
            assert "cello" in context.text and ids[1] in cited
            if hasattr(handle.design, "ranked"):
                ranked = handle.design.ranked("ana", "Ana keeps a cello in the attic", 10)
                assert ranked[0][0] == ids[1] and ids[2] not in [i for i, _ in ranked]
            assert [e.text for e in handle.export("ana")] == want
            assert [e.id for e in handle.export("ana")] == [made[0].id, made[1].id, made[3].id]
            assert _texts(handle, "ben") == [entry_of(2, 0).text]
        with pytest.raises(NoSuchRecord, match=f"no record {ids[2]}"):
            memory.delete("ana", ids[2])
        with pytest.raises(NoSuchRecord):
            memory.update("ben", ids[0], "not ben's")  # another owner's record is not this owner's
        with pytest.raises(MemstreamError, match="empty"):
            memory.update("ana", ids[0], "  ")
        assert memory.write("ana", [made[2]]) != [ids[2]]  # the deleted entry, given again, is a new record
        assert memory.write("ana", [made[1]]) == [ids[1]]  # the updated one is still the entry it was
    assert check(store_spec) == []
    with opened(design, store_spec) as fresh:
        assert _texts(fresh, "ana") == [*want, made[2].text]
    if not store_spec.startswith("postgresql"):
        assert check_store(store_spec, embedder=HashEmbedder(EMBED_DIM)) == []
        data = b"".join(p.read_bytes() for p in Path(store_spec).parent.glob(Path(store_spec).name + "*"))
        assert made[1].text.encode() not in data  # the old text is gone from the file (its entry's key stays)


@pytest.mark.parametrize("design", CHANGING)
def test_deleting_every_record_leaves_an_owner_with_none(design: str, tmp_path: Path) -> None:
    with opened(design, str(tmp_path / "s.db")) as memory:
        ids = memory.write("ana", [entry_of(1, 0), entry_of(1, 1)])
        for i in ids:
            memory.delete("ana", i)
        assert memory.records("ana") == [] and list(memory.export("ana")) == []
        assert memory.context("ana", QUERY, START, 500).text == ""
        assert memory.owners() == ["ana"] and memory.forget("ana") > 0


@pytest.mark.parametrize("design", KEEPING)
def test_a_design_that_builds_on_its_records_refuses_with_its_reason(design: str, tmp_path: Path) -> None:
    with opened(design, str(tmp_path / "s.db")) as memory:
        ids = memory.write("ana", [entry_of(1, 0)])
        for change in (lambda: memory.update("ana", ids[0], "something else"), lambda: memory.delete("ana", ids[0])):
            with pytest.raises(MemstreamError) as refused:
                change()
            message = str(refused.value)
            assert DESIGNS[design].records_stay in message and "forget the owner" in message
            assert "\n" not in message
        assert _texts(memory, "ana") == [entry_of(1, 0).text]


# -- interleavings, against a model --------------------------------------------------------------------------

OWNERS = ("ana", "ben")
HANDLES = 2
operations = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS), st.integers(1, 3)),
    st.tuples(st.just("update"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS), st.integers(0, 50)),
    st.tuples(st.just("gone"), st.integers(0, HANDLES - 1), st.sampled_from(OWNERS)),
), min_size=1, max_size=30)


@pytest.mark.parametrize("design", ["full", "vector"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_interleaved_adds_updates_and_deletes_agree_with_a_dict(design: str, ops: list[tuple[Any, ...]]) -> None:
    """Two handles (as two processes: each its own connection and memory) take turns at random; after every
    step both read exactly what a dict of record id to text says, and at the end so does a fresh handle
    (records, export, a context with room for everything) and ``check`` is clean."""
    model: dict[str, dict[int, str]] = {o: {} for o in OWNERS}
    written = 0
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        store = str(Path(folder) / "memory.db")
        handles = [stack.enter_context(opened(design, store)) for _ in range(HANDLES)]
        for step, op in enumerate(ops):
            memory, owner, held = handles[op[1]], op[2], model[op[2]]
            if op[0] == "add":
                made = [entry_of(3, written + k) for k in range(op[3])]
                written += op[3]
                held.update(zip(memory.write(owner, made), (e.text for e in made), strict=True))
            elif op[0] in ("update", "delete") and held:
                record = sorted(held)[op[3] % len(held)]
                if op[0] == "update":
                    held[record] = f"step {step}: the record {record} now says {op[3]}"
                    assert memory.update(owner, record, held[record]).text == held[record]
                else:
                    memory.delete(owner, record)
                    del held[record]
            elif op[0] == "gone":
                with pytest.raises(NoSuchRecord):
                    memory.delete(owner, max([0, *held]) + 1000)
            for handle in handles:
                for o in OWNERS:
                    assert {r.id: r.text for r in handle.records(o)} == model[o], (step, op)
        assert check(store) == []
        with opened(design, store) as fresh:
            for o in OWNERS:
                assert [e.text for e in fresh.export(o)] == list(model[o].values())
                text = fresh.context(o, QUERY, START, 100_000).text if model[o] else ""
                assert all(t in text for t in model[o].values())


# -- another process -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("design", CHANGING)
def test_a_second_process_sees_an_update_and_a_delete_made_by_the_first(design: str, tmp_path: Path) -> None:
    """The second process holds ana's memory (its vector index built) before the first changes two records;
    its next reads are the changed records only, its index (the ranking) included."""
    store = str(tmp_path / "memory.db")
    made = [entry_of(1, s) for s in range(4)]
    with opened(design, store) as memory:
        ids = memory.write("ana", made)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["memstream.designs", "tests.designs.store_worker"])
    ready, go, results = ctx.Event(), ctx.Event(), ctx.Queue()
    watcher = ctx.Process(target=store_worker.watch_changes, args=(design, store, "ana", ready, go, results))
    watcher.start()
    try:
        assert ready.wait(timeout=60), "the second process did not start"
        with opened(design, store) as memory:
            memory.update("ana", ids[0], "Ana sold the violin near the harbour")
            memory.delete("ana", ids[1])
        go.set()
        seen = results.get(timeout=60)
    finally:
        watcher.join(timeout=60)
        if watcher.is_alive():
            watcher.kill()
    assert watcher.exitcode == 0
    assert seen["records"] == [(ids[0], "Ana sold the violin near the harbour"), (ids[2], made[2].text),
                               (ids[3], made[3].text)]
    assert made[1].text not in seen["context"] and made[0].text not in seen["context"]
    assert "Ana sold the violin" in seen["context"]
    if seen["ranked"] is not None:
        assert ids[1] not in seen["ranked"] and seen["ranked"][0] == ids[0]
