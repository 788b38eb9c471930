"""The read path: scope, then the lifecycle filter, then ranking inside what is left.

1. scope: the owner (and tenant); nothing of another owner is ever a candidate;
2. lifecycle filter (:func:`memstream.facts.lifecycle.visible`): current, history or as-of;
3. recall *inside* the filtered set: the dense cosine of every filtered fact's vector, and BM25 from
   the FTS5 index restricted to the filtered ids (never a global top-k filtered afterwards, which an
   owner with many close facts would empty);
4. bounded expansion: from the best few, one hop through ``EXTENDS`` edges and shared entities, to
   facts that pass the same filter;
5. fusion: reciprocal rank fusion (Cormack et al. 2009) of the lists, then small terms for salience
   and recency; the best ``k``.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memstream.facts.lifecycle import Decay, View, visible
from memstream.facts.records import Hit
from memstream.facts.schema import EXTENDS
from memstream.facts.store import FactStore, owner_of
from memstream.timeutil import to_epoch

#: Reciprocal rank fusion constant (Cormack et al. 2009).
RRF_K = 60
#: Words too common to search the index by.
_STOP = frozenset("a an the and or but of to in on at by for with from as is are was were be been do does did i you "
                  "he she it we they me my your his her its our their this that what which who when where why how "
                  "not no so can will would could should about any some".split())
_WORD = re.compile(r"\w+")
#: Words a lexical query searches by at most (a whole message as the query would be hundreds of ORs).
QUERY_WORDS = 24


@dataclass(frozen=True)
class ReadPolicy:
    candidates: int = 50        # per recall list
    seeds: int = 5              # the best facts expanded from
    expand: int = 5             # facts added through edges at most
    salience: float = 0.1       # weight of salience after fusion (fused scores are scaled to [0, 1])
    recency: float = 0.1        # weight of recency after fusion
    half_life_days: float = 30.0
    decay: Decay = field(default_factory=Decay)


def recall(store: FactStore, owner: str, query: str, at: datetime, *, k: int = 20, view: View = "current",
           tenant: str = "", policy: ReadPolicy | None = None) -> list[Hit]:
    """``owner``'s best ``k`` facts for ``query`` as seen at ``at`` through ``view``, best first."""
    p = policy or ReadPolicy()
    owner = owner_of(owner)
    at_s = to_epoch(at)
    cond, values = visible(view, at_s, p.decay)
    scope = (f"SELECT f.id FROM facts f WHERE f.tenant=? AND f.owner=? AND {cond}", [tenant, owner, *values])
    q = store.embedder.embed([query])[0] if query.strip() else None
    with store.snapshot() as db:
        rows = db.execute(scope[0].replace("SELECT f.id", "SELECT f.id, f.salience, f.created_s"), scope[1]).fetchall()
        if not rows:
            return []
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        sims = _similarity(store, tenant, owner, ids, q)
        lists = [_dense(ids, sims, p.candidates)] if sims is not None else []
        lists.append(_lexical(db, scope, query, p.candidates))
        fused = _fuse(lists)
        if not fused:  # no words to search by: the newest
            fused = {int(i): 0.0 for i in ids[np.argsort([-r[2] for r in rows], kind="stable")][:k]}
        via = {i: [name for name, ranked in zip(("vector", "bm25"), lists, strict=False) if i in ranked]
               for i in fused}
        for i, extra in _expand(db, fused, set(ids.tolist()), p).items():
            fused[i] = fused.get(i, 0.0) + extra
            via.setdefault(i, []).append("edge")
        meta = {r[0]: (r[1], r[2]) for r in rows}
        top = max(fused.values()) or 1.0
        half = p.half_life_days * 86_400.0
        final = {i: s / top + p.salience * meta[i][0] + p.recency * 0.5 ** (max(0.0, at_s - meta[i][1]) / half)
                 for i, s in fused.items()}
        best = sorted(final, key=lambda i: (-final[i], -i))[:k]
        facts = {f.id: f for f in store.facts(best)}
        cosine = dict(zip(ids.tolist(), sims.tolist(), strict=True)) if sims is not None else {}
    return [Hit(facts[i], round(final[i], 6), via[i], round(cosine.get(i, 0.0), 6)) for i in best if i in facts]


def _similarity(store: FactStore, tenant: str, owner: str, ids: np.ndarray, q: np.ndarray | None) -> np.ndarray | None:
    """The cosine of ``q`` with each of the filtered facts ``ids`` (their vectors are unit length)."""
    if q is None:
        return None
    every, vectors = store.matrix(tenant, owner)
    return vectors[np.searchsorted(every, ids)] @ q.astype(np.float32)


def _dense(ids: np.ndarray, sims: np.ndarray, n: int) -> list[int]:
    order = np.lexsort((-ids, -sims))[:n]  # ties toward the newer fact
    return [int(ids[i]) for i in order]


def _lexical(db: sqlite3.Connection, scope: tuple[str, list], query: str, n: int) -> list[int]:
    words = list(dict.fromkeys(w for w in _WORD.findall(query.lower()) if w not in _STOP and len(w) > 1))
    if not words:
        return []
    words = sorted(words, key=lambda w: (-len(w), words.index(w)))[:QUERY_WORDS]  # a long message: its rarest-looking
    match = " OR ".join(f'"{w}"' for w in words)
    # The match runs once (materialised), then the filter, then the cut: a rowid constraint inside the FTS
    # query would run the whole match again for each filtered id.
    rows = db.execute(f"WITH m AS MATERIALIZED (SELECT rowid AS id, bm25(facts_fts) AS s FROM facts_fts WHERE "
                      f"facts_fts MATCH ?) SELECT id FROM m WHERE id IN ({scope[0]}) ORDER BY s, id DESC LIMIT ?",
                      [match, *scope[1], n]).fetchall()
    return [r[0] for r in rows]


def _fuse(lists: list[list[int]]) -> dict[int, float]:
    fused: dict[int, float] = {}
    for ranked in lists:
        for rank, i in enumerate(ranked, start=1):
            fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank)
    return fused


def _expand(db: sqlite3.Connection, fused: dict[int, float], allowed: set[int], p: ReadPolicy) -> dict[int, float]:
    """One hop from the best ``seeds`` facts through EXTENDS edges and shared entities, only to facts the
    filter let through; each neighbour scores as a list entry one rank below its seed."""
    seeds = sorted(fused, key=lambda i: (-fused[i], -i))[:p.seeds]
    added: dict[int, float] = {}
    for rank, seed in enumerate(seeds, start=1):
        near = db.execute("SELECT dst FROM edges WHERE src=? AND kind=? UNION SELECT src FROM edges WHERE dst=? AND "
                          "kind=? UNION SELECT b.fact_id FROM entities a JOIN entities b ON a.name = b.name "
                          "WHERE a.fact_id=? AND b.fact_id != a.fact_id", (seed, EXTENDS, seed, EXTENDS, seed))
        for (i,) in near:
            if len(added) >= p.expand:
                return added
            if i in allowed and i not in added and i != seed:
                added[i] = 1.0 / (RRF_K + rank + 1)
    return added


def versions(store: FactStore, fact_id: int) -> list:
    """Every version in ``fact_id``'s chain (through ``UPDATES`` both ways), oldest first, soft-deleted ones too."""
    store.fact(fact_id)  # one line if there is no such fact
    with store.snapshot() as db:
        found, frontier = {int(fact_id)}, [int(fact_id)]
        while frontier:
            i = frontier.pop()
            for (j,) in db.execute("SELECT dst FROM edges WHERE src=? AND kind='UPDATES' UNION "
                                   "SELECT src FROM edges WHERE dst=? AND kind='UPDATES'", (i, i)):
                if j not in found:
                    found.add(j)
                    frontier.append(j)
        facts = store.facts(sorted(found))
    return sorted(facts, key=lambda f: (f.valid_from_s, f.id))
