"""A design that says its context does not depend on the query (``reads_query = False``) gives an owner the same
context for every query: a reader of a store that does not change may then assemble it once per (owner, time,
budget), as the town's measures do (memstream.sim.memory.DesignMemory)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memstream.designs import DESIGNS
from tests.designs.test_designs import build, turns, written

#: Queries of every kind a stage or a measure asks: a fact, a name, a time span, the newest.
QUERIES = ("Valentine's Day party", "Bob", "What did Ann do yesterday?", "pottery class", "")


def test_the_query_blind_designs_are_the_ones_that_say_so() -> None:
    assert sorted(n for n, d in DESIGNS.items() if not d.reads_query) == ["buffer-summary", "full", "profile",
                                                                          "recent"]


@pytest.mark.parametrize("name", [n for n, d in DESIGNS.items() if not d.reads_query])
def test_a_query_blind_design_gives_one_context_for_every_query(name: str) -> None:
    design = build(name)
    entries = turns(40)
    written(design, entries)
    now = entries[-1].at + timedelta(hours=1)
    for budget in (40, 400, 4000):
        contexts = {design.context("ann", q, now, budget).text for q in QUERIES}
        assert len(contexts) == 1, (name, budget)
