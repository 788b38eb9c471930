"""A fact's versions as one chain, and the rule that keeps exactly one of them current.

A fact is a chain of versions joined by ``UPDATES`` edges (newer → older). The write path keeps the
invariant; :func:`chain_problems` proves it for ``memstream facts check``:

- every chain has exactly one head (``is_latest`` = 1), and no version updates the head;
- versions with the same scoped content hash are the same fact: taken together with the chains they
  belong to, at most one version is current (head and not soft-deleted). A file in which the same
  text was written again as a separate fact while its chain had moved on (the bug this rule closed)
  fails here.
"""

from __future__ import annotations

import sqlite3

from memstream.errors import MemstreamError
from memstream.facts.schema import UPDATES


def head(db: sqlite3.Connection, tenant: str, owner: str, fact_id: int) -> int | None:
    """The newest version of ``fact_id``'s chain (following ``UPDATES`` forward, through soft-deleted
    versions too), None if there is no such fact; a fact of another owner is refused in one line."""
    row = db.execute("SELECT tenant, owner FROM facts WHERE id=?", (int(fact_id),)).fetchone()
    if row is None:
        return None
    if tuple(row) != (tenant, owner):
        raise MemstreamError(f"fact {fact_id} is not one of {owner!r}'s facts")
    current, seen = int(fact_id), set()
    while current not in seen:
        seen.add(current)
        newer = db.execute("SELECT src FROM edges WHERE dst=? AND kind=? ORDER BY src DESC LIMIT 1",
                           (current, UPDATES)).fetchone()
        if newer is None:
            break
        current = newer[0]
    return current


def chain_problems(db: sqlite3.Connection) -> list[str]:
    """One line per fact whose chain does not have exactly one current version (named by its oldest id)."""
    rows = db.execute("SELECT id, tenant, owner, content_hash, is_latest, deleted_s IS NULL FROM facts").fetchall()
    edges = db.execute("SELECT src, dst FROM edges WHERE kind=?", (UPDATES,)).fetchall()
    chains, facts = _Sets(), _Sets()
    by_hash: dict[tuple[str, str, str], int] = {}
    for fid, tenant, owner, key, *_ in rows:
        first = by_hash.setdefault((tenant, owner, key), fid)
        facts.join(first, fid)
    for src, dst in edges:
        chains.join(src, dst)
        facts.join(src, dst)
    updated = {dst for _, dst in edges}
    latest = {r[0] for r in rows if r[4]}
    current = {r[0] for r in rows if r[4] and r[5]}
    problems: dict[int, str] = {}  # by the fact's oldest id: one line per fact
    for members in _groups(chains, [r[0] for r in rows]):
        first, heads = min(members), sorted(members & latest)
        if len(heads) != 1:
            shown = f" ({_ids(heads)})" if heads else ""
            problems[first] = (f"fact {first}: its chain ({_ids(members)}) has {len(heads) or 'no'} latest "
                               f"versions{shown}, not one")
        elif heads[0] in updated:
            problems[first] = f"fact {first}: version {heads[0]} is marked latest but a newer version updates it"
    for members in _groups(facts, [r[0] for r in rows]):
        now = members & current
        if len(now) > 1 and not problems.keys() & members:
            problems[min(members)] = (f"fact {min(members)}: {len(now)} versions are current at once ({_ids(now)}); "
                                      "the same text is in two chains")
    return [problems[i] for i in sorted(problems)]


class _Sets:
    """Disjoint sets of fact ids (union-find)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, i: int) -> int:
        self.parent.setdefault(i, i)
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def _groups(sets: _Sets, ids: list[int]) -> list[set[int]]:
    groups: dict[int, set[int]] = {}
    for i in ids:
        groups.setdefault(sets.find(i), set()).add(i)
    return list(groups.values())


def _ids(ids: set[int] | list[int]) -> str:
    shown = sorted(ids)
    return ", ".join(map(str, shown[:8])) + (f" and {len(shown) - 8} more" if len(shown) > 8 else "")
