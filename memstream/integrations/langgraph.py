"""Any design kept in a design store as a LangGraph agent's store: ``StateGraph(...).compile(store=MemstreamStore(d))``.

The mapping (docs/service.md, "LangGraph"):

- **namespace → owner**: the labels joined by ``/`` (``("users", "ana")`` is the owner ``users/ana``); the
  scope is the bound design's (give :func:`memstream.designs.open_design` a ``scope``). A label holding ``/`` is
  refused (it would make two namespaces one owner).
- **item → entry**: ``put(ns, key, value)`` writes one entry whose id is ``key`` and whose text is the value as
  canonical JSON (keys sorted), so ``get`` returns the value exactly and the design retrieves over what it says.
  ``created_at``/``updated_at`` are the entry's time (when it was put).
- **put of an existing key**: the same value again is a no-op (the entry id makes the write idempotent). Another
  value updates the item's record in place (its id and ``created_at`` kept) where the design's memory is its
  records (``full``, ``vector``, ``recent``: :attr:`~memstream.designs.MemoryDesign.changes_records`), and
  ``delete`` (a ``put`` of None) deletes it; a design that builds its memory from its records (a summary would
  still hold the old value) refuses both with its reason (forget the owner instead, :meth:`MemstreamStore.forget`).
  A delete of a missing key is a no-op, as LangGraph's stores do.
- **search**: with a query, a design that ranks (``vector``) gives each item its score, best first; one that
  does not gives the items its context for the query cites, in reading order, score None. Without a query,
  items oldest first. ``filter`` matches value fields exactly or with ``$eq $ne $gt $gte $lt $lte``.
- **list_namespaces**: the owners, split back into labels.

A bound design is used by one thread at a time, so every batch holds a lock; ``abatch`` runs it in a thread.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memstream.designs import BoundDesign, Record, entry
from memstream.errors import MemstreamError

#: How namespace labels join into an owner's name.
SEPARATOR = "/"
#: The context budget a design that does not rank is asked for when searched (its context decides what is found).
SEARCH_BUDGET = 4000
#: What a value's ``put`` is written as (the entry's source), so the store's items are told from other entries.
SOURCE = "langgraph"


def owner_of(namespace: tuple[str, ...]) -> str:
    """The owner a namespace names: its labels joined by :data:`SEPARATOR`."""
    if not namespace:
        raise InvalidNamespaceError("a namespace needs at least one label, e.g. ('users', 'ana')")
    for label in namespace:
        if not isinstance(label, str) or not label or SEPARATOR in label:
            raise InvalidNamespaceError(f"namespace label {label!r}: write non-empty text without {SEPARATOR!r} "
                                        f"(labels are joined by it into the owner's name)")
    return SEPARATOR.join(namespace)


def namespace_of(owner: str) -> tuple[str, ...]:
    return tuple(owner.split(SEPARATOR))


def value_text(value: Mapping[str, Any]) -> str:
    """A value as the text an entry keeps: canonical JSON, so the same value is the same text."""
    try:
        return json.dumps(dict(value), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise MemstreamError(f"a stored value must be JSON ({e}); keep to dicts, lists, text, numbers") from None


class MemstreamStore(BaseStore):
    """``bound`` (a design bound to its store, :func:`memstream.designs.open_design`) as a LangGraph store."""

    def __init__(self, bound: BoundDesign) -> None:
        self.bound = bound
        self._lock = threading.Lock()

    # -- BaseStore -----------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        with self._lock:
            return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def forget(self, namespace: tuple[str, ...]) -> int:
        """Erase every item (and every trace) of ``namespace``'s owner: the rows removed."""
        with self._lock:
            return self.bound.forget(owner_of(namespace))

    # -- one operation -------------------------------------------------------------------------

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._items(owner_of(op.namespace)).get(op.key)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise MemstreamError(f"{type(op).__name__} is not an operation of a LangGraph store")

    def _keyed(self, owner: str) -> list[tuple[Record, str]]:
        """The owner's records that came from a keyed entry, oldest first, with the key."""
        if not self.bound.knows(owner):
            return []
        keys = self.bound.held.entry_keys(owner)
        return [(r, keys[r.id][3:]) for r in self.bound.records(owner) if keys.get(r.id, "").startswith("id:")]

    def _items(self, owner: str) -> dict[str, Item]:
        return {key: _item(owner, key, r) for r, key in self._keyed(owner)}

    def _put(self, op: PutOp) -> None:
        owner = owner_of(op.namespace)
        if op.index not in (None, False) and op.value is not None:
            raise MemstreamError("a memstream store indexes an item's whole value as its text; put it without "
                                 "index=[...]")
        held = {key: r for r, key in self._keyed(owner)}.get(op.key)
        if op.value is None:
            if held is not None:
                self._change(op, held, None)
            return
        text = value_text(op.value)
        if held is not None:
            if held.text != text:
                self._change(op, held, text)
            return
        ids = self.bound.write(owner, [entry(text=text, at=datetime.now(UTC), source=SOURCE, id=op.key)])
        if ids[0] is None:
            raise MemstreamError(f"the {self.bound.name} design's write gate kept the item {op.key!r} out")

    def _change(self, op: PutOp, record: Record, text: str | None) -> None:
        """The item's record given the new value's text, or deleted (None), where the design allows it."""
        design = self.bound.design
        if not design.changes_records:
            what = "give the item" if text is not None else "delete the item"
            raise MemstreamError(f"the {design.name} design cannot {what} {op.key!r} alone"
                                 f"{' another value' if text is not None else ''}: {design.records_stay}; forget "
                                 f"the namespace {op.namespace} to erase all of it, then put again what should stay")
        if text is None:
            self.bound.delete(record.owner, record.id)
        else:
            self.bound.update(record.owner, record.id, text)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        found: list[SearchItem] = []
        prefix = tuple(op.namespace_prefix)
        for owner in self.bound.owners():
            if namespace_of(owner)[:len(prefix)] != prefix:
                continue
            keyed = self._keyed(owner)
            for record, key, score in self._ranked(owner, keyed, op.query):
                item = _item(owner, key, record)
                if _matches(item.value, op.filter or {}):
                    found.append(SearchItem(item.namespace, key, item.value, item.created_at, item.updated_at,
                                            score))
        if op.query and any(i.score is not None for i in found):
            found.sort(key=lambda i: -(i.score or 0.0))
        return found[op.offset:op.offset + op.limit]

    def _ranked(self, owner: str, keyed: list[tuple[Record, str]], query: str | None) -> list[
            tuple[Record, str, float | None]]:
        if not query:
            return [(r, k, None) for r, k in keyed]
        by_id = {r.id: (r, k) for r, k in keyed}
        ranks = getattr(self.bound.design, "ranked", None)
        if callable(ranks):
            return [(*by_id[i], float(s)) for i, s in ranks(owner, query, len(by_id) or 1) if i in by_id]
        context = self.bound.context(owner, query, datetime.now(UTC), SEARCH_BUDGET)
        cited = dict.fromkeys(i for b in context.blocks for i in b.ids if i in by_id)
        return [(*by_id[i], None) for i in cited]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces: dict[tuple[str, ...], None] = {}
        for owner in self.bound.owners():
            ns = namespace_of(owner)
            if all(_condition(ns, c) for c in op.match_conditions or ()):
                spaces[ns[:op.max_depth] if op.max_depth is not None else ns] = None
        return sorted(spaces)[op.offset:op.offset + op.limit]


def _item(owner: str, key: str, record: Record) -> Item:
    try:
        value = json.loads(record.text)
    except json.JSONDecodeError:
        value = None
    return Item(value=value if isinstance(value, dict) else {"text": record.text}, key=key,
                namespace=namespace_of(owner), created_at=record.at, updated_at=record.at)


def _condition(ns: tuple[str, ...], c: MatchCondition) -> bool:
    path = tuple(c.path)
    if len(path) > len(ns):
        return False
    part = ns[:len(path)] if c.match_type == "prefix" else ns[len(ns) - len(path):]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


_COMPARE = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: a > b,
            "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    for field, condition in wanted.items():
        have = value.get(field)
        tests = condition if isinstance(condition, dict) and condition and all(
            k.startswith("$") for k in condition) else {"$eq": condition}
        for operator, target in tests.items():
            if operator not in _COMPARE:
                raise MemstreamError(f"filter {field}: {operator} is not an operator; use one of {', '.join(_COMPARE)}")
            try:
                if not _COMPARE[operator](have, target):
                    return False
            except TypeError:
                return False
    return True


__all__ = ["SEPARATOR", "MemstreamStore", "namespace_of", "owner_of", "value_text"]
