"""Which database keeps a store: a ``postgresql://`` URL is PostgreSQL, anything else an SQLite file's path.

The one place a store spec (``--store``, ``open_design(store=...)``) becomes a back-end
(:class:`~.rows.Rows`), so every command reads the spec the same way.
"""

from __future__ import annotations

from pathlib import Path

from memstream.designs.registry import DESIGNS
from memstream.designs.store.postgres import PostgresStore, is_postgres
from memstream.designs.store.rows import Rows
from memstream.designs.store.store import DesignStore
from memstream.designs.store.store import check as check_file
from memstream.errors import MemstreamError


def open_rows(store: str | Path, *, read_only: bool = False) -> Rows:
    """The back-end ``store`` names, opened (made if missing, unless ``read_only``)."""
    if is_postgres(store):
        return PostgresStore(str(store), read_only=read_only)
    return DesignStore(store, read_only=read_only)


def refuse_own_file(design: str, store: str | Path) -> None:
    """Refuse in one line a design that keeps its own file, on a store that is not a file."""
    kind = DESIGNS.get(design)
    if kind is not None and kind.keeps_own_file and is_postgres(store):
        there = ", ".join(d for d, k in DESIGNS.items() if not k.keeps_own_file)
        raise MemstreamError(f"the {design} design keeps its memory in SQLite files of its own, so it cannot be "
                             f"kept on PostgreSQL yet; use one of {there} there, or a store file path")


def check(store: str | Path) -> list[str]:
    """Every problem of the store ``store`` names (none if it is sound), reading only."""
    if not is_postgres(store):
        return check_file(store)
    rows = PostgresStore(str(store), read_only=True)
    try:
        return rows.problems()
    finally:
        rows.close()
