"""One owner's memories as numpy columns beside a FAISS index: what retrieval reads.

Exact mode (the default) scores every memory, as the paper's min-max
normalisation over all of an owner's memories requires: relevance is one BLAS
product over the vectors held in the FAISS flat index (read in place, no copy),
then recency and importance are elementwise columns and the top k come from a
partition. Approximate mode (HNSW) asks FAISS for the nearest candidates and
unions them with the best candidates by recency + importance; relevance is then
normalised over that candidate set. Its agreement with exact retrieval is
measured in benchmarks/retrieval.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import faiss
import numpy as np

from memstream.stream.memory import Weights
from memstream.stream.scoring import minmax, recency, top_k

IndexKind = Literal["flat", "hnsw"]
INDEX_KINDS: tuple[str, ...] = ("flat", "hnsw")
HNSW_NEIGHBOURS = 32
#: Approximate mode scores at least this many candidates from each side.
MIN_CANDIDATES = 100


class _Column:
    """A numpy array that grows by doubling, so appends are amortised O(1)."""

    def __init__(self, dtype: type) -> None:
        self._data = np.zeros(16, dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self._data):
            grown = np.zeros(max(need, 2 * len(self._data)), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = values
        self.size = need

    @property
    def values(self) -> np.ndarray:
        return self._data[: self.size]


@dataclass
class Scored:
    """The top k of one query: positions in the owner's columns and every component."""

    positions: np.ndarray
    score: np.ndarray
    recency: np.ndarray
    importance: np.ndarray
    relevance: np.ndarray
    raw_recency: np.ndarray
    raw_importance: np.ndarray
    raw_relevance: np.ndarray


class OwnerIndex:
    """The retrieval state of one owner: ids, times, importance and vectors, by position."""

    def __init__(self, dim: int, kind: IndexKind = "flat") -> None:
        self.dim = dim
        self.kind = kind
        if kind == "flat":
            self.index: faiss.Index = faiss.IndexFlatIP(dim)
        elif kind == "hnsw":
            self.index = faiss.IndexHNSWFlat(dim, HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
        else:
            raise ValueError(f"unknown index kind {kind!r}; use one of {INDEX_KINDS}")
        self.ids = _Column(np.int64)
        self.created_s = _Column(np.float64)
        self.last_access_s = _Column(np.float64)
        self.importance = _Column(np.float64)
        self._importance_norm: np.ndarray | None = None

    def __len__(self) -> int:
        return self.ids.size

    def add(self, ids: np.ndarray, vectors: np.ndarray, created_s: np.ndarray,
            importance: np.ndarray, last_access_s: np.ndarray | None = None) -> None:
        self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self.ids.extend(ids)
        self.created_s.extend(created_s)
        self.last_access_s.extend(created_s if last_access_s is None else last_access_s)
        self.importance.extend(importance)
        self._importance_norm = None

    def positions_of(self, ids: np.ndarray) -> np.ndarray:
        """Positions of ``ids`` (ids grow with position, so a binary search finds them)."""
        return np.searchsorted(self.ids.values, ids)

    def touch(self, positions: np.ndarray, at_s: float) -> None:
        col = self.last_access_s.values
        col[positions] = np.maximum(col[positions], at_s)

    def vectors(self) -> np.ndarray:
        """The stored vectors, read in place from FAISS (valid until the next add)."""
        flat = self.index if self.kind == "flat" else faiss.downcast_index(self.index.storage)
        n = len(self)
        return faiss.rev_swig_ptr(flat.get_xb(), n * self.dim).reshape(n, self.dim)

    def _normalised_importance(self) -> np.ndarray:
        if self._importance_norm is None:
            self._importance_norm = minmax(self.importance.values)
        return self._importance_norm

    def score(self, queries: np.ndarray, now_s: float, weights: Weights, k: int) -> list[Scored]:
        """Score every query in ``queries`` (b, dim) against this owner's memories."""
        raw_rec = recency(self.last_access_s.values, now_s, weights.decay)
        rec = minmax(raw_rec)
        imp = self._normalised_importance()
        static = weights.recency * rec + weights.importance * imp
        if self.kind == "flat":
            return self._score_exact(queries, static, raw_rec, rec, imp, weights, k)
        return self._score_approximate(queries, static, raw_rec, rec, imp, weights, k)

    def _score_exact(self, queries: np.ndarray, static: np.ndarray, raw_rec: np.ndarray,
                     rec: np.ndarray, imp: np.ndarray, weights: Weights, k: int) -> list[Scored]:
        x = self.vectors()
        raw_rel = x @ queries[0] if len(queries) == 1 else queries @ x.T
        raw_rel = raw_rel.reshape(len(queries), -1)
        rel = minmax(raw_rel)
        out = []
        for i in range(len(queries)):
            total = static + weights.relevance * rel[i]
            pos = top_k(total, k)
            out.append(Scored(pos, total[pos], rec[pos], imp[pos], rel[i, pos],
                              raw_rec[pos], self.importance.values[pos], raw_rel[i, pos]))
        return out

    def _score_approximate(self, queries: np.ndarray, static: np.ndarray, raw_rec: np.ndarray,
                           rec: np.ndarray, imp: np.ndarray, weights: Weights,
                           k: int) -> list[Scored]:
        n_cand = min(len(self), max(4 * k, MIN_CANDIDATES))
        self.index.hnsw.efSearch = max(n_cand, 64)
        _, nearest = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), n_cand)
        by_static = top_k(static, n_cand)
        x = self.vectors()
        out = []
        for i, q in enumerate(queries):
            cand = np.union1d(nearest[i][nearest[i] >= 0], by_static)
            raw_rel = x[cand] @ q
            rel = minmax(raw_rel)
            total = static[cand] + weights.relevance * rel
            best = top_k(total, k)
            # top_k breaks ties by position within ``cand``, which is sorted, so newer ids win.
            pos = cand[best]
            out.append(Scored(pos, total[best], rec[pos], imp[pos], rel[best],
                              raw_rec[pos], self.importance.values[pos], raw_rel[best]))
        return out
