"""A design state file (``save_state``, ``memstream eval --state``) brought into a design store, in one step.

Two ways, because a state holds more than its entries (a summary, blocks the agent edited):

- **rows** (the default): every owner's memory as the design holds it after :func:`load_state`, written as the
  store's rows (:meth:`~memstream.designs.MemoryDesign.owner_rows`) in one transaction, with no model call:
  the store then holds exactly what the file held. This needs the file's record ids to be ids the store never
  handed out, and its owners to be new in the store; otherwise nothing is written and the message says to
  replay instead.
- **replay**: every owner's entries written again through the design (``write``, de-duplicated by their
  keys): what the design derives from them (summaries) is made again by the chat model given.

Which records are entries is read from the records themselves: a record whose fields make an
:class:`~memstream.designs.entries.Entry` (a turn, an observation, a tool result, a pinned note) is one; a
record the design made (a reflection) is not, and travels only with the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memstream.designs.base import MemoryDesign
from memstream.designs.entries import Entry, Record
from memstream.designs.persist import KEY, load_state
from memstream.designs.registry import make_design
from memstream.designs.store.bound import BoundDesign
from memstream.designs.store.store import Held, OwnerKey, dumps
from memstream.errors import MemstreamError
from memstream.files import read_json
from memstream.models import Embedder


@dataclass(frozen=True)
class ImportedState:
    """What a state file brought: its design, and each owner with the records now held for it."""

    design: str
    owners: dict[str, int] = field(default_factory=dict)
    replayed: bool = False


def state_design(path: str | Path) -> tuple[str, dict[str, Any]]:
    """The design a state file names and the settings it was written with (one line if it is no state file)."""
    data = read_json(path, "design state file")
    if not isinstance(data, dict) or not isinstance(data.get(KEY), str) or not isinstance(data.get("config"), dict):
        raise MemstreamError(f"{path} is not a memstream design state file (save_state or memstream eval --state "
                             "writes them)")
    return data[KEY], data["config"]


def loaded_state(path: str | Path, *, embedder: Embedder | None = None) -> MemoryDesign[Any]:
    """A fresh design holding the state in ``path``, made with the settings the file was written with."""
    name, config = state_design(path)
    design = make_design(name, embedder=embedder, **config)
    load_state(design, path)
    return design


def state_owners(design: MemoryDesign[Any]) -> list[str]:
    """The owners a loaded design's state holds (every design's state keeps them under ``owners``)."""
    owners = getattr(design.get_state(), "owners", None)
    if not isinstance(owners, dict):
        raise MemstreamError(f"the {design.name} design's state does not keep its memory per owner; "
                             "it cannot be imported into a design store")
    return list(owners)


def entries_of(records: Sequence[Record]) -> list[tuple[Record, Entry]]:
    """The records that are entries (see the module's docstring), each with its entry."""
    found = []
    for r in records:
        try:
            found.append((r, Entry(text=r.text, at=r.at, source=r.source, kind=r.kind,  # type: ignore[arg-type]
                                   session=r.session)))
        except ValidationError:
            continue
    return found


def import_state(path: str | Path, memory: BoundDesign, *, replay: bool = False) -> ImportedState:
    """Bring the state in ``path`` into ``memory`` (the same design, bound to its store with the file's
    settings): as rows, or with ``replay`` by writing every owner's entries again (see the module's docstring)."""
    loaded = loaded_state(path, embedder=getattr(memory.design, "embedder", None))
    if loaded.name != memory.name:
        raise MemstreamError(f"{path} holds the state of the {loaded.name!r} design, not {memory.name!r}; "
                             f"import it with --design {loaded.name}")
    owners = state_owners(loaded)
    if replay:
        for owner in owners:
            memory.import_entries(owner, [e for _, e in entries_of(loaded.owner_rows(owner).records)])
        return ImportedState(memory.name, {o: len(memory.records(o)) for o in owners}, replayed=True)
    _copy_rows(path, loaded, memory, owners)
    return ImportedState(memory.name, {o: len(loaded.owner_rows(o).records) for o in owners})


def _copy_rows(path: str | Path, loaded: MemoryDesign[Any], memory: BoundDesign, owners: list[str]) -> None:
    """Every owner's rows written in one transaction, or nothing if an id or an owner is taken already."""
    held = memory.held
    store, name, scope = held.store, memory.name, held.scope
    if store.read_only:
        raise MemstreamError(f"{store.path} is read-only here; memory can be read, not written")
    rows = {owner: loaded.owner_rows(owner) for owner in owners}
    ids = [r.id for owner_rows in rows.values() for r in owner_rows.records]
    store.begin()
    try:
        first = store.reserve_ids(name, 0)  # the next id the store would hand out (nothing reserved)
        if ids and min(ids) < first:
            raise MemstreamError(f"{path}: its record ids (from {min(ids)}) are taken in the {name} design of "
                                 f"{store.path} (by memory written there, or another state); add --replay to write its "
                                 "entries again instead, or import it into a new store")
        taken = [o for o in owners if store.version(OwnerKey(name, scope, o))]
        if taken:
            raise MemstreamError(f"{path}: {taken[0]!r} already has {name} memory in {store.path}; add --replay to "
                                 "add the file's entries to it (those already there are skipped)")
        if ids and max(ids) >= first:
            store.reserve_ids(name, max(ids) + 1 - first)
        for owner, owner_rows in rows.items():
            keys: dict[int, str] = {}
            for record, given in entries_of(owner_rows.records):
                if given.key not in keys.values():  # a second identical entry is kept, known by its first
                    keys[record.id] = given.key
            store.write_owner(OwnerKey(name, scope, owner), owner_rows, Held(), keys)
        _copy_shared(path, loaded, memory)
        store.commit()
    except BaseException:
        store.rollback()
        raise


def _copy_shared(path: str | Path, loaded: MemoryDesign[Any], memory: BoundDesign) -> None:
    """The documents the state shares across owners, written if the store has none of them yet (or the same)."""
    store, scope = memory.held.store, memory.held.scope
    now = store.read_shared(memory.name, scope)
    new = {}
    for doc, value in loaded.shared_rows().items():
        if doc not in now:
            new[doc] = (0, value)
        elif dumps(now[doc][1]) != dumps(value):
            raise MemstreamError(f"{path}: the shared {doc!r} of the {memory.name} design differs from the one in "
                                 f"{store.path}; add --replay, or import it into a new store")
    if new:
        store.write_shared(memory.name, scope, new)
