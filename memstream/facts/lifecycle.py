"""Forgetting as explicit writes plus read filters.

Every read goes through :func:`visible`, which says in SQL which of an owner's facts a read at a time
may see, before anything is ranked:

- ``current``: the latest version, not soft-deleted, not expired, already valid, and not decayed
  (an old, low-salience, rarely recalled episode);
- ``history``: every version ever valid up to the time (superseded and expired ones too), still not
  the soft-deleted ones;
- ``as-of``: what was current at a past time, by the validity windows (``valid_from``/``valid_to``)
  and expiry, whatever has been superseded since.

The writes: soft delete (``deleted_s`` set, reversible by :func:`restore`), the expiry sweeper
(:func:`sweep` soft-deletes what has expired, marked so, with an audit record) and :func:`touch`
(a recall counted, which keeps an episode from decaying). Supersession is in ``write``; hard delete,
which removes bytes, in ``erase``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memstream.errors import MemstreamError
from memstream.facts.profile import regenerate
from memstream.facts.store import FactStore, owner_of
from memstream.timeutil import to_epoch

View = Literal["current", "history", "as-of"]
DAY_S = 86_400.0


@dataclass(frozen=True)
class Decay:
    """Which facts a current read hides as faded: episodes older than ``older_than_days``, with salience
    below ``salience_below``, recalled fewer than ``recalls_below`` times. ``older_than_days=0`` turns it off."""

    salience_below: float = 0.3
    recalls_below: int = 2
    older_than_days: float = 90.0


def visible(view: View, at_s: float, decay: Decay | None = None, *, alias: str = "f") -> tuple[str, list[float]]:
    """The SQL condition (on facts as ``alias``) for what a ``view`` read at ``at_s`` may see, and its values."""
    f = alias
    base = f"{f}.deleted_s IS NULL AND {f}.created_s <= ? AND {f}.valid_from_s <= ?"
    if view == "history":
        return base, [at_s, at_s]
    window = f"({f}.valid_to_s IS NULL OR {f}.valid_to_s > ?) AND ({f}.expires_s IS NULL OR {f}.expires_s > ?)"
    if view == "as-of":
        return f"{base} AND {window}", [at_s, at_s, at_s, at_s]
    cond, values = f"{base} AND {f}.is_latest = 1 AND {window}", [at_s, at_s, at_s, at_s]
    d = decay or Decay()
    if d.older_than_days > 0:
        cond += (f" AND NOT ({f}.kind = 'episode' AND {f}.salience < ? AND {f}.recalls < ? AND {f}.created_s < ?)")
        values += [d.salience_below, d.recalls_below, at_s - d.older_than_days * DAY_S]
    return cond, values


def forget(store: FactStore, owner: str, ids: Sequence[int], at: datetime, *, why: str = "forgotten",
           tenant: str = "") -> int:
    """Soft-delete these facts of ``owner`` (hidden from every read, kept, reversible); how many changed."""
    owner = owner_of(owner)
    with store.writing() as db:
        mine = _mine(db, tenant, owner, ids)
        changed = db.execute(f"UPDATE facts SET deleted_s=?, deleted_why=? WHERE deleted_s IS NULL AND id IN "
                             f"({','.join('?' * len(mine))})", (to_epoch(at), why, *mine)).rowcount
        audit(db, to_epoch(at), tenant, owner, "soft-delete", {"facts": mine, "why": why})
        regenerate(db, tenant, owner, to_epoch(at))
    return changed


def restore(store: FactStore, owner: str, ids: Sequence[int], at: datetime, *, tenant: str = "") -> int:
    """Undo :func:`forget` for these facts; how many came back."""
    owner = owner_of(owner)
    with store.writing() as db:
        mine = _mine(db, tenant, owner, ids)
        changed = db.execute(f"UPDATE facts SET deleted_s=NULL, deleted_why=NULL WHERE deleted_s IS NOT NULL AND id "
                             f"IN ({','.join('?' * len(mine))})", mine).rowcount
        audit(db, to_epoch(at), tenant, owner, "restore", {"facts": mine})
        regenerate(db, tenant, owner, to_epoch(at))
    return changed


def sweep(store: FactStore, now: datetime, *, owner: str | None = None, tenant: str = "") -> int:
    """The expiry sweeper: soft-delete every fact (of ``owner`` if given, else everyone's) whose time has
    passed (``deleted_why`` 'expired'), one audit record per owner; how many. Reads already hide them;
    this makes it a recorded write."""
    at_s = to_epoch(now)
    mine, values = ("AND tenant=? AND owner=?", [tenant, owner_of(owner)]) if owner is not None else ("", [])
    with store.writing() as db:
        rows = db.execute(f"SELECT tenant, owner, id FROM facts WHERE deleted_s IS NULL AND expires_s IS NOT NULL "
                          f"AND expires_s <= ? {mine} ORDER BY id", (at_s, *values)).fetchall()
        by_owner: dict[tuple[str, str], list[int]] = {}
        for tenant, owner, fid in rows:
            by_owner.setdefault((tenant, owner), []).append(fid)
        db.executemany("UPDATE facts SET deleted_s=expires_s, deleted_why='expired' WHERE id=?",
                       [(r[2],) for r in rows])
        for (tenant, owner), ids in by_owner.items():
            audit(db, at_s, tenant, owner, "expire", {"facts": ids})
            regenerate(db, tenant, owner, at_s)
    return len(rows)


def touch(store: FactStore, ids: Sequence[int]) -> None:
    """Count a recall of these facts (a recalled episode does not decay)."""
    with store.writing() as db:
        db.executemany("UPDATE facts SET recalls = recalls + 1 WHERE id=?", [(int(i),) for i in ids])


def _mine(db: sqlite3.Connection, tenant: str, owner: str, ids: Sequence[int]) -> list[int]:
    ids = sorted({int(i) for i in ids})
    if not ids:
        raise MemstreamError("name at least one fact id")
    found = {r[0]: (r[1], r[2]) for r in db.execute(
        f"SELECT id, tenant, owner FROM facts WHERE id IN ({','.join('?' * len(ids))})", ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise MemstreamError(f"no fact {missing[0]}; list {owner!r}'s facts with `memstream facts as-of`")
    other = [i for i in ids if found[i] != (tenant, owner)]
    if other:
        raise MemstreamError(f"fact {other[0]} is not one of {owner!r}'s facts")
    return ids


def audit(db: sqlite3.Connection, at_s: float, tenant: str, owner: str, action: str, detail: dict) -> None:
    """An audit record: what was done to whose facts, by id and count (never the text it removed)."""
    db.execute("INSERT INTO audit(at_s, tenant, owner, action, detail) VALUES (?,?,?,?,?)",
               (at_s, tenant, owner, action, json.dumps(detail, sort_keys=True)))
