"""Designs kept in a store: every design's memory in one SQLite file (or one PostgreSQL schema, named by a
``postgresql://`` URL: :mod:`.postgres`), per owner, shared by processes.

>>> with open_design("tiered", store="memory.db") as memory:           # doctest: +SKIP
...     memory.write("ana", [entry(text="I moved to Lisbon", at=now)])
...     memory.context("ana", "where does Ana live?", now, 500)

:func:`open_design` opens (or makes) the store, records the design's settings the first time and refuses
other settings after that unless ``reconfigure=True`` (then the change is recorded). See :mod:`.bound`
for how writes of many processes stay whole, and :mod:`.schema` for the rows. A design that keeps its memory
in a file of its own kind (``stream``, ``facts``: ``keeps_own_file``) is bound through :mod:`.own_file`
instead, its file beside the store (``PATH.stream``, ``PATH.facts``: :func:`~.schema.own_file_path`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstream.designs.base import MemoryDesign
from memstream.designs.registry import DESIGNS, make_design
from memstream.designs.store.backends import check as check_rows
from memstream.designs.store.backends import open_rows, refuse_own_file
from memstream.designs.store.bound import BoundDesign, RowsDesign
from memstream.designs.store.checking import check_store, own_file_problems, refuse_non_store
from memstream.designs.store.own_file import OwnFileDesign
from memstream.designs.store.postgres import PostgresStore, is_postgres
from memstream.designs.store.rows import Rows
from memstream.designs.store.schema import own_file_path
from memstream.designs.store.state_import import ImportedState, import_state, state_design
from memstream.designs.store.store import DesignStore
from memstream.errors import MemstreamError
from memstream.models import ChatModel, Embedder
from memstream.stream import HIDDEN


@contextmanager
def open_design(name: str, *, store: str | Path | DesignStore, scope: str = "", embedder: Embedder | None = None,
                chat: ChatModel | None = None, reconfigure: bool = False, read_only: bool = False,
                **config: Any) -> Iterator[BoundDesign]:
    """The design ``name`` bound to the store at ``store`` (made if missing, unless ``read_only``), in
    ``scope`` (a tenant or workspace; "" for none), with ``config`` (its settings; the store's if none are
    given). ``chat`` answers the design's model calls in :meth:`~.bound.BoundDesign.write` and
    :meth:`~.bound.BoundDesign.consolidate`.

    ``store`` may also be a store already open (``read_only`` is then its own), left open at the end: a
    caller binding many designs in turn (the evaluation harness, a design per haystack) opens the file once
    rather than paying a connection and a WAL checkpoint per design."""
    scope = _scope(scope)  # checked before the store is touched: a bad scope writes nothing
    _refuse_unkept(name)  # before its settings are recorded
    where = store.path if isinstance(store, (DesignStore, PostgresStore)) else store
    refuse_own_file(name, where)
    kind = DESIGNS.get(name)
    if kind is not None and (theirs := sorted(kind.store_settings & set(config))):
        raise MemstreamError(f"in a design store the {name} design's {', '.join(theirs)} is the store's (its file "
                             f"is {own_file_path(where, name)}, its scope is scope=); drop {', '.join(theirs)}")
    held: Rows = store if isinstance(store, (DesignStore, PostgresStore)) else open_rows(store, read_only=read_only)
    own: OwnFileDesign | None = None
    try:
        design = make_design(name, embedder=embedder, **_settings(held, name, config, reconfigure))
        if design.keeps_own_file:
            assert isinstance(held, DesignStore), "refuse_own_file keeps own-file designs off other back-ends"
            own = OwnFileDesign(held, design, scope=scope)
            yield BoundDesign(own, chat=chat)
        else:
            rows = RowsDesign(held, design, scope=scope)
            try:
                yield BoundDesign(rows, chat=chat)
            finally:
                rows.close()
    finally:
        try:
            if own is not None:
                own.close()
        finally:
            if held is not store:
                held.close()


def storable(name: str) -> bool:
    """Whether :func:`open_design` keeps the design ``name`` as rows: it gives its memory as rows and takes it
    back, owner by owner (:meth:`~memstream.designs.MemoryDesign.owner_rows`, ``load_owner``, ``drop_owner``).
    A caller that also runs designs alone (the evaluation harness) asks this rather than naming designs, so a
    design joins the store the day it implements the rows. (A design that keeps its own file beside the store,
    :attr:`~memstream.designs.MemoryDesign.keeps_own_file`, is kept too, but not as rows: see kept_designs.)"""
    kind = DESIGNS.get(name)
    return kind is not None and all(getattr(kind, m) is not getattr(MemoryDesign, m)
                                    for m in ("owner_rows", "load_owner", "drop_owner"))


def check(path: str | Path) -> list[str]:
    """Every problem of the design store at ``path`` and of the files of their own kind beside it (each line
    naming its file), reading only; none if all are sound."""
    problems = check_rows(path)
    return problems if is_postgres(path) else problems + own_file_problems(path)


def _settings(store: Rows, name: str, config: dict[str, Any], reconfigure: bool) -> dict[str, Any]:
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


def kept_designs() -> list[str]:
    """The designs that can be kept in a design store (those that say how their memory is rows)."""
    return [n for n, kind in DESIGNS.items() if kind.keeps_own_file or kind.owner_rows is not MemoryDesign.owner_rows]


def _refuse_unkept(name: str) -> None:
    kind = DESIGNS.get(name)
    if kind is not None and name not in kept_designs():
        raise MemstreamError(f"the {name} design cannot be kept in a design store yet; use one of "
                             f"{', '.join(kept_designs())}")


def _scope(scope: str) -> str:
    """A scope as stored: "" for none, else plain text (no control, invisible or surrogate character: the
    same rule as an owner's name, since a scope names whose memory it is just as an owner does)."""
    if (not isinstance(scope, str) or len(scope) > 200
            or any(unicodedata.category(c) in HIDDEN for c in scope)):
        shown = scope.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(scope, str) else scope
        raise MemstreamError(f"a scope is plain text of at most 200 characters, got {shown!r:.40}")
    return unicodedata.normalize("NFC", scope).strip()


__all__ = ["BoundDesign", "DesignStore", "ImportedState", "OwnFileDesign", "PostgresStore", "Rows", "check",
           "check_store", "import_state", "kept_designs", "open_design", "own_file_path", "refuse_non_store",
           "state_design", "storable"]
