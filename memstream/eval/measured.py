"""The design an eval writes a haystack into and asks: bound to a design store, as a user has it.

Every design the store can keep (:func:`~memstream.designs.storable`) is measured through
:func:`~memstream.designs.open_design` on the eval's store, so the figures are those of the code a user
runs: every session written is one committed write of its rows, every consolidation that changes something
another, and every context is assembled from the owner as the store holds it. Each haystack (scenario,
attack set) is a scope of its own. A design the store cannot keep yet runs alone,
in memory, as before; it moves to the store by itself once it gives its memory as rows.

The store is a file in a temporary folder, removed when the eval ends: an eval's figures include what
writing cost (calls, tokens, seconds), which a store kept from an earlier run would not pay again, so every
eval starts from an empty one. ``--state DIR`` keeps each design's state per haystack to read back instead.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memstream.designs import (
    BoundDesign,
    Context,
    DesignStore,
    Entry,
    MemoryDesign,
    make_design,
    open_design,
    storable,
)
from memstream.models import Embedder, Stage

#: The store's file name inside the eval's temporary folder.
STORE_NAME = "eval-designs.db"


@contextmanager
def eval_store() -> Iterator[DesignStore]:
    """An empty design store for one eval, open for all of it (one connection, not one per design and
    haystack), then closed and removed with its folder and WAL files."""
    with tempfile.TemporaryDirectory(prefix="memstream-eval-") as folder:
        store = DesignStore(Path(folder) / STORE_NAME)
        try:
            yield store
        finally:
            store.close()


@dataclass
class MeasuredDesign:
    """One design for one haystack: ``design`` (its name, settings, write gate, state) and, when the store
    keeps it, ``bound`` (the same design bound to the store), through which writes and contexts go."""

    design: MemoryDesign
    bound: BoundDesign | None = None

    @property
    def name(self) -> str:
        return self.design.name

    def remember_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int | None]]:
        return (self.bound or self.design).remember_stage(owner, entries)

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        return (self.bound or self.design).consolidate_stage(owner, now)

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        return (self.bound or self.design).context(owner, query, now, budget_tokens)

    def alone(self) -> MeasuredDesign:
        """The design without its store (to hold a state read back from a file instead of the store's rows)."""
        return MeasuredDesign(self.design)


@contextmanager
def measured_design(name: str, store: DesignStore, *, embedder: Embedder | None, settings: Mapping[str, Any],
                    scope: str) -> Iterator[MeasuredDesign]:
    """The design ``name`` with ``settings``, bound to ``store`` if the store can keep it, in ``scope`` (one
    per haystack or scenario: two of them naming the same owner never share memory)."""
    if not storable(name):
        yield MeasuredDesign(make_design(name, embedder=embedder, **settings))
        return
    with open_design(name, store=store, scope=scope, embedder=embedder, **settings) as bound:
        yield MeasuredDesign(bound.design, bound)
