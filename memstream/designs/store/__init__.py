"""Designs kept in a store: every design's memory in one SQLite file, per owner, shared by processes.

>>> with open_design("tiered", store="memory.db") as memory:           # doctest: +SKIP
...     memory.write("ana", [entry(text="I moved to Lisbon", at=now)])
...     memory.context("ana", "where does Ana live?", now, 500)

:func:`open_design` opens (or makes) the store, records the design's settings the first time and refuses
other settings after that unless ``reconfigure=True`` (then the change is recorded). See :mod:`.bound`
for how writes of many processes stay whole, and :mod:`.schema` for the rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstream.designs.registry import make_design
from memstream.designs.store.bound import BoundDesign, RowsDesign
from memstream.designs.store.store import DesignStore, check
from memstream.errors import MemstreamError
from memstream.models import ChatModel, Embedder


@contextmanager
def open_design(name: str, *, store: str | Path, scope: str = "", embedder: Embedder | None = None,
                chat: ChatModel | None = None, reconfigure: bool = False, read_only: bool = False,
                **config: Any) -> Iterator[BoundDesign]:
    """The design ``name`` bound to the store at ``store`` (made if missing, unless ``read_only``), in
    ``scope`` (a tenant or workspace; "" for none), with ``config`` (its settings; the store's if none are
    given). ``chat`` answers the design's model calls in :meth:`~.bound.BoundDesign.write` and
    :meth:`~.bound.BoundDesign.consolidate`."""
    held = DesignStore(store, read_only=read_only)
    try:
        design = make_design(name, embedder=embedder, **_settings(held, name, config, reconfigure))
        rows = RowsDesign(held, design, scope=_scope(scope))
        try:
            yield BoundDesign(rows, chat=chat)
        finally:
            rows.close()
    finally:
        held.close()


def _settings(store: DesignStore, name: str, config: dict[str, Any], reconfigure: bool) -> dict[str, Any]:
    """The settings to make the design with: the store's, the given ones if they are the store's or the
    design is new there (then recorded), or the given ones recorded as a change (``reconfigure``)."""
    recorded = store.designs().get(name)
    made = make_design(name, **config) if recorded is None or config else None
    wanted = made.config.model_dump(mode="json") if made is not None else recorded
    assert wanted is not None
    if recorded is None or (wanted != recorded and reconfigure):
        if not store.read_only:
            store.record_settings(name, wanted, change=recorded is not None)
    elif wanted != recorded:
        differ = sorted(k for k in {*wanted, *recorded} if wanted.get(k) != recorded.get(k))
        raise MemstreamError(f"{store.path} holds the {name} design with other settings ({', '.join(differ)}); "
                             "open it without settings to use the store's, or pass reconfigure=True "
                             "(--reconfigure) to change them")
    return wanted


def _scope(scope: str) -> str:
    if not isinstance(scope, str) or any(ord(c) < 32 or ord(c) == 127 for c in scope) or len(scope) > 200:
        raise MemstreamError(f"a scope is plain text of at most 200 characters, got {scope!r:.40}")
    return scope.strip()


__all__ = ["BoundDesign", "DesignStore", "check", "open_design"]
