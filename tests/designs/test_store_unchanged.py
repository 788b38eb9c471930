"""A write that changes nothing (a consolidation with nothing to do) commits nothing: the owner's version
stays, so no other process reads the owner again for it; one bound store serves many designs in turn."""

from __future__ import annotations

from pathlib import Path

from memstream.designs import DesignStore, entry, open_design
from memstream.designs.store.store import OwnerKey
from tests.helpers import T0, hours


def test_a_consolidation_with_nothing_to_do_leaves_the_version(tmp_path: Path) -> None:
    with open_design("full", store=tmp_path / "m.db") as memory:
        memory.write("ana", [entry(text="I moved to Lisbon", at=T0)])
        store, key = memory.held.store, OwnerKey("full", "", "ana")
        assert store.version(key) == 1
        assert memory.consolidate("ana", hours(1)) == 0
        assert store.version(key) == 1 and not store.db.in_transaction
        memory.write("ana", [entry(text="I moved to Lisbon", at=T0)])  # stored already: nothing new
        assert store.version(key) == 1
        memory.write("ana", [entry(text="I adopted a cat", at=hours(2))])
        assert store.version(key) == 2


def test_an_open_store_is_bound_to_designs_in_turn_and_left_open(tmp_path: Path) -> None:
    store = DesignStore(tmp_path / "m.db")
    try:
        for name in ("full", "vector"):
            with open_design(name, store=store) as memory:
                memory.write("ana", [entry(text=f"{name}: I moved to Lisbon", at=T0)])
        assert sorted(store.designs()) == ["full", "vector"]
        with open_design("vector", store=store) as memory:
            assert [r.text for r in memory.records("ana")] == ["vector: I moved to Lisbon"]
    finally:
        store.close()
