"""A design store checked whole: SQLite's integrity, its rows, and every owner of every design read back.

:func:`check_store` refuses, in one line, a path that is no design store at all (a folder, a text file, a
stream, a store of a newer format): that is the user's slip, not a damaged store. Anything else it finds is
returned, a line per problem, so a damaged store is described rather than refused.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import memstream.sqlite as sqlite
from memstream.designs.registry import DESIGNS, make_design
from memstream.designs.store.bound import RowsDesign
from memstream.designs.store.schema import DESIGN_STORE, own_file_path
from memstream.designs.store.store import DesignStore, check
from memstream.errors import MemstreamError
from memstream.files import not_a_file
from memstream.models import Embedder

_SQLITE = b"SQLite format 3\x00"


def refuse_non_store(path: str | Path) -> None:
    """One line if ``path`` is plainly not a design store this memstream reads (a damaged store passes)."""
    path = Path(path)
    if not path.is_file():
        raise MemstreamError(not_a_file(path, DESIGN_STORE.noun))
    with path.open("rb") as f:
        head = f.read(len(_SQLITE))
    if head != _SQLITE:
        raise MemstreamError(f"{path} is not a memstream {DESIGN_STORE.noun} (not an SQLite file)")
    try:
        with closing(sqlite.connect(path, kind=DESIGN_STORE, read_only=True, create=False)):
            pass
    except MemstreamError as e:
        if "not a memstream" in str(e) or "newer memstream" in str(e) or "holds no" in str(e):
            raise
        # anything else (a damaged page, an unreadable schema) is a problem check describes


def own_file_problems(path: str | Path) -> list[str]:
    """Every problem of the files of their own kind beside the store at ``path`` (``PATH.stream``,
    ``PATH.facts``), each line naming its file, reading only."""
    problems = []
    for name, kind in DESIGNS.items():
        beside = own_file_path(path, name)
        if kind.keeps_own_file and Path(beside).exists():
            problems += [f"{beside}: {p}" for p in kind.check_own_file(beside)]
    return problems


def check_store(path: str | Path, *, embedder: Embedder | None = None) -> list[str]:
    """Every problem of the design store at ``path`` (none if it is sound), reading only: the file, its rows
    and the files of their own kind beside it, then each owner of each design kept as rows loaded as that
    design reads it (an own file's check reads each of its rows)."""
    refuse_non_store(path)
    problems = check(path) + own_file_problems(path)  # (`memstream memory check` once passed a damaged own file)
    if problems:
        return problems
    store = DesignStore(path, read_only=True)
    try:
        for name, config in store.designs().items():
            try:
                design = make_design(name, embedder=embedder, **config)
            except MemstreamError as e:
                problems.append(f"{name}: its recorded settings are not readable ({e})")
                continue
            for scope in store.scopes(name):
                rows = RowsDesign(store, design, scope=scope)
                for owner in rows.owners():
                    try:
                        rows.records(owner)
                    except MemstreamError as e:
                        problems.append(str(e))
    finally:
        store.close()
    return problems[:50]
