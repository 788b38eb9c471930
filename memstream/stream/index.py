"""One owner's memories as numpy columns beside a FAISS index: what retrieval reads.

Exact mode (the default) scores every memory, as the paper's min-max
normalisation over all of an owner's memories requires: relevance is one BLAS
product over the vectors held in the FAISS flat index (read in place, no copy),
then recency and importance are elementwise columns and the top k come from a
partition. Approximate mode (HNSW) asks FAISS for the nearest candidates and
unions them with the best candidates by recency + importance; relevance is then
normalised over that candidate set. Its agreement with exact retrieval is
measured in benchmarks/retrieval.py.

Vectors are held as float32 (the default) or as float16 (``vectors="fp16"``): FAISS's
scalar quantizer keeps half the bytes and scores them with its own SIMD kernels, over every
memory alike (a search for all of them, put back in position order). Its agreement with
float32, in top-10 and in the largest score difference, is measured in
benchmarks/retrieval.py ``--vectors``; the store keeps float32 either way.

A memory may have several keys (a long text embedded window by window); FAISS
holds one row per key and a memory's relevance is its best key. When every memory
has one key, as in a simulation, rows and memories coincide and nothing extra is paid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

import faiss
import numpy as np

from memstream.stream.memory import Memory, Recall, Weights
from memstream.stream.scoring import minmax, recency, recency_one, take_rows, top_k, top_k_rows
from memstream.stream.timescope import TimeScope

IndexKind = Literal["flat", "hnsw"]
INDEX_KINDS: tuple[str, ...] = ("flat", "hnsw")
VectorKind = Literal["float32", "fp16"]
VECTOR_KINDS: tuple[str, ...] = ("float32", "fp16")
HNSW_NEIGHBOURS = 32
#: Cosines are float32: a spread of relevance below this is rounding noise, which
#: min-max normalisation would blow up to the full [0, 1] range; it counts as constant.
RELEVANCE_TOLERANCE = 1e-6
#: Float16 relevance asks FAISS for at most this many scores at once (a batch is split by queries).
PRODUCTS_PER_SEARCH = 2_000_000
#: Approximate mode scores at least this many candidates from each side.
MIN_CANDIDATES = 100


#: How much FAISS's flat storage and the columns grow when full: appends stay amortised O(1), and at most a
#: quarter of what is held is room to grow (std::vector, left to itself, doubles: up to half of it is).
GROWTH = 1.25


class _Column:
    """A numpy array that grows by ``GROWTH``, so appends are amortised O(1)."""

    def __init__(self, dtype: type) -> None:
        self._data: np.ndarray = np.zeros(16, dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self._data):
            grown = np.zeros(max(need, int(GROWTH * len(self._data))), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = values
        self.size = need

    @property
    def values(self) -> np.ndarray:
        return self._data[: self.size]


#: Gives the memories with these ids, each as last accessed at the time given (epoch seconds).
Reader = Callable[[dict[int, float]], dict[int, Memory]]


class OwnerIndex:
    """The retrieval state of one owner: ids, times, importance and vectors, by position."""

    def __init__(self, dim: int, kind: IndexKind = "flat", vectors: VectorKind = "float32") -> None:
        self.dim = dim
        self.kind = kind
        self.vector_kind = vectors
        self.index: faiss.Index = _make_index(dim, kind, vectors)
        self.ids = _Column(np.int64)
        self.created_s = _Column(np.float64)
        self.last_access_s = _Column(np.float64)
        self.importance = _Column(np.float64)
        # FAISS row -> memory position, and memory position -> its first FAISS row: None while every memory
        # has one key (as in a simulation), when both are the positions themselves and nothing is held
        self._key_owner: _Column | None = None
        self._key_start: _Column | None = None
        self._n_keys = 0
        self._importance_norm: np.ndarray | None = None
        self._last_max = -np.inf
        self._vectors: np.ndarray | None = None  # a view of FAISS's storage, renewed after an add
        self._capacity = 0  # bytes of FAISS's flat storage allocated (see _reserve)
        self.created_max = -np.inf  # the newest creation time: a query before it must leave some out
        self._version = 0  # bumped by every add and touch
        self._static_key: tuple | None = None
        self._static: tuple[np.ndarray, np.ndarray, _Affine] | None = None

    def __len__(self) -> int:
        return self.ids.size

    @property
    def n_keys(self) -> int:
        return self._n_keys

    def key_start(self) -> np.ndarray:
        """Each memory's first FAISS row."""
        return np.arange(len(self)) if self._key_start is None else self._key_start.values

    def key_owner(self, rows: np.ndarray) -> np.ndarray:
        """The memory positions of these FAISS rows."""
        return rows if self._key_owner is None else self._key_owner.values[rows]

    def add(self, ids: np.ndarray, vectors: np.ndarray, created_s: np.ndarray,
            importance: np.ndarray, last_access_s: np.ndarray | None = None,
            keys: np.ndarray | None = None) -> None:
        """Append memories; ``keys[i]`` of the rows of ``vectors`` belong to memory i (default 1 each)."""
        keys = np.ones(len(ids), dtype=np.int64) if keys is None else np.asarray(keys, dtype=np.int64)
        if len(vectors) != int(keys.sum()) or (keys < 1).any():
            raise ValueError(f"{len(vectors)} vectors for {len(ids)} memories with key counts {keys.tolist()}")
        first = len(self)
        if self._key_start is None and (keys > 1).any():  # the first memory with several keys
            self._key_start, self._key_owner = _Column(np.int64), _Column(np.int64)
            self._key_start.extend(np.arange(first))
            self._key_owner.extend(np.arange(first))
        if self._key_start is not None and self._key_owner is not None:
            self._key_start.extend(self.n_keys + _offsets(keys))
            self._key_owner.extend(np.repeat(np.arange(first, first + len(ids)), keys))
        self._n_keys += len(vectors)
        self._reserve(len(vectors))
        self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self._vectors = None  # FAISS may have moved its storage
        self.ids.extend(ids)
        self.created_s.extend(created_s)
        self.last_access_s.extend(created_s if last_access_s is None else last_access_s)
        self.importance.extend(importance)
        self._importance_norm = None
        self._last_max = max(self._last_max, float(self.last_access_s.values[-len(ids):].max()))
        self.created_max = max(self.created_max, float(np.max(created_s)))
        self._version += 1

    def _reserve(self, rows: int) -> None:
        """Room in FAISS's flat storage for ``rows`` more keys, grown by ``GROWTH``.

        FAISS appends by ``std::vector::resize``, which doubles the capacity when it is full; a vector made
        to the capacity chosen here, cut back to the codes held (a cut keeps the capacity) and swapped in,
        leaves FAISS's resize nothing to reallocate. An HNSW graph keeps its own growing arrays: left as is.
        """
        if self.kind != "flat":
            return
        flat = self._storage()
        codes, size = flat.codes, flat.code_size
        used, need = flat.ntotal * size, (flat.ntotal + rows) * size
        if need <= self._capacity:
            return
        capacity = max(need, int(GROWTH * self._capacity) // size * size)
        fresh = faiss.UInt8Vector()
        fresh.resize(capacity)
        if used:
            faiss.rev_swig_ptr(fresh.data(), used)[:] = faiss.rev_swig_ptr(codes.data(), used)
        fresh.resize(used)
        getattr(codes, "owned_data", codes).swap(fresh)  # FAISS 1.10 on wraps its vector (the stub has the old type)
        codes.resize(used)  # FAISS's own pointer to its codes, renewed
        self._capacity = capacity

    def existing_at(self, now_s: float) -> OwnerIndex:
        """This index as it would have been at ``now_s``: only the memories created by then (a copy,
        exact; for looking back in time, so the future never leaks into a past query)."""
        if self.created_max <= now_s:
            return self
        positions = np.flatnonzero(self.created_s.values <= now_s)
        return self._subset(positions, self.last_access_s.values[positions])

    def as_of(self, now_s: float, ids_through: int | None, ids: np.ndarray, last_s: np.ndarray) -> OwnerIndex:
        """This index as it stood at ``now_s`` (a copy, exact): the memories made by then (and through id
        ``ids_through`` if given), each last accessed as the access log stood then: ``ids`` accessed by then,
        ``last_s`` each one's latest access up to then; a memory accessed only later is as it was made. What a
        look back at ``now_s`` scores recency with, so an access after ``now_s`` never counts."""
        made = self.created_s.values <= now_s
        if ids_through is not None:
            made &= self.ids.values <= ids_through
        positions = np.flatnonzero(made)
        last = self.created_s.values[positions].copy()
        ids, last_s = np.asarray(ids, dtype=np.int64), np.asarray(last_s, dtype=np.float64)
        kept = self.ids.values[positions]
        if len(kept) and len(ids):
            at = np.minimum(np.searchsorted(kept, ids), len(kept) - 1)
            here = kept[at] == ids
            last[at[here]] = np.maximum(last[at[here]], last_s[here])
        return self._subset(positions, last)

    def _subset(self, positions: np.ndarray, last_access_s: np.ndarray) -> OwnerIndex:
        """A flat copy of the memories at ``positions``, last accessed at ``last_access_s``."""
        if self._key_start is None:
            counts, rows = np.ones(len(positions), dtype=np.int64), positions
        else:
            starts = self._key_start.values
            counts = np.diff(np.append(starts, self.n_keys))[positions]
            rows = np.concatenate([np.arange(s, s + c) for s, c in zip(starts[positions], counts, strict=True)]
                                  or [np.zeros(0, np.int64)])
        past = OwnerIndex(self.dim, "flat", self.vector_kind)  # float16 values re-encode exactly
        if len(positions):
            past.add(self.ids.values[positions], self.vectors()[rows], self.created_s.values[positions],
                     self.importance.values[positions], last_access_s, counts)
        return past

    def positions_of(self, ids: np.ndarray) -> np.ndarray:
        """Positions of ``ids`` (ids grow with position, so a binary search finds them)."""
        return np.searchsorted(self.ids.values, ids)

    def touch(self, positions: np.ndarray, at_s: float) -> None:
        col = self.last_access_s.values
        col[positions] = np.maximum(col[positions], at_s)
        self._last_max = max(self._last_max, at_s)
        self._version += 1

    def vectors(self) -> np.ndarray:
        """The stored key vectors, one row per key, read in place from FAISS (valid until the next add):
        float32, or float16 for ``vectors="fp16"`` (FAISS's codes are IEEE half floats)."""
        if self._vectors is None or len(self._vectors) != self.n_keys:
            flat = self._storage()
            n = self.n_keys
            if isinstance(flat, faiss.IndexFlat):
                self._vectors = faiss.rev_swig_ptr(flat.get_xb(), n * self.dim).reshape(n, self.dim)
            else:
                codes = faiss.rev_swig_ptr(flat.codes.data(), n * flat.code_size)
                self._vectors = codes.view(np.float16).reshape(n, self.dim)
        return self._vectors

    def _storage(self) -> faiss.IndexFlat | faiss.IndexScalarQuantizer:
        """Where FAISS holds the vectors: the flat index, or the one an HNSW graph was made with."""
        index = self.index
        if isinstance(index, faiss.IndexHNSW):
            index = faiss.downcast_index(index.storage)
        assert isinstance(index, faiss.IndexFlat | faiss.IndexScalarQuantizer)
        return index

    def _products(self, queries: np.ndarray) -> np.ndarray:
        """Every query's inner product with every key, (b, n_keys). Float32: one BLAS product over
        FAISS's storage. Float16: FAISS scores its own codes (SIMD, no float32 copy of them),
        returned sorted, and the scores are put back in key order."""
        x = self.vectors()
        if x.dtype == np.float32:
            return (x @ queries[0])[None] if len(queries) == 1 else queries @ x.T
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        n = self.n_keys
        flat = self._storage()
        out = np.empty((len(queries), n), dtype=np.float32)
        step = max(1, PRODUCTS_PER_SEARCH // n)  # FAISS's answer holds 12 bytes a score: a few queries at a time
        for start in range(0, len(queries), step):
            sims, rows = flat.search(queries[start:start + step], n)
            np.put_along_axis(out[start:start + step], rows, sims, axis=1)
        return out

    def _best_key(self, sims: np.ndarray) -> np.ndarray:
        """Per-key similarities (..., n_keys) to per-memory ones: each memory's best key."""
        if self.n_keys == len(self):
            return sims
        return np.maximum.reduceat(sims, self.key_start(), axis=-1)

    def _relevance_of(self, x: np.ndarray, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Best-key similarity of the memories at ``positions`` (sorted) to query ``q``."""
        if self.n_keys == len(self):
            return x[positions].astype(np.float32, copy=False) @ q
        starts = self.key_start()[positions]
        ends = np.append(self.key_start(), self.n_keys)[positions + 1]
        counts = ends - starts
        offsets = _offsets(counts)
        rows = np.repeat(starts - offsets, counts) + np.arange(counts.sum())
        return np.maximum.reduceat(x[rows].astype(np.float32, copy=False) @ q, offsets)

    def _normalised_importance(self) -> np.ndarray:
        if self._importance_norm is None:
            self._importance_norm = minmax(self.importance.values)
        return self._importance_norm

    def score(self, queries: np.ndarray, now_s: float, weights: Weights, k: int,
              scopes: Sequence[TimeScope | None] | None, read: Reader) -> list[list[Recall]]:
        """The top k of this owner's memories for every query in ``queries`` (b, dim), best first.

        ``scopes[i]`` is the span of time query i names, if any: memories created
        inside it get ``weights.time`` more. ``read`` gives the memories chosen, by id, each
        as last accessed at the time given.
        """
        static, ref_rec, rec = self._recency_importance(now_s, weights)
        parts = _Parts(static, ref_rec, rec, self._normalised_importance(), now_s, weights)
        in_span: list[np.ndarray | None] = ([None] * len(queries) if not scopes or not weights.time
                   else [None if scope is None else scope.contains(self.created_s.values) for scope in scopes])
        if self.kind == "flat":
            return self._score_exact(queries, parts, k, in_span, read)
        return self._score_approximate(queries, parts, k, in_span, read)

    def _recency_importance(self, now_s: float, weights: Weights) -> tuple[np.ndarray, np.ndarray, _Affine]:
        """The query-independent part of the score, in ranking form, and recency's normaliser.

        Two facts keep this cheap. Min-max normalisation is affine, ``(v - lo) *
        scale``, and the ``-lo * scale`` offset shifts every memory alike, so
        ranking needs only ``v * scale``; the offset is restored for the k
        returned. And recency is ``decay ** (now - last)``: a factor
        ``decay ** now`` common to all memories, which min-max normalisation
        cancels. So once ``now`` is past every access, normalised recency does
        not depend on ``now`` at all, and this part is cached until the next
        add or access.
        """
        ref_s = min(now_s, self._last_max)
        key = (self._version, ref_s, weights.decay, weights.recency, weights.importance)
        if key != self._static_key or self._static is None:
            ref_rec = recency(self.last_access_s.values, ref_s, weights.decay)
            rec = _Affine.of(ref_rec)
            static = ref_rec * (weights.recency * rec.scale)
            if weights.importance:
                static += weights.importance * self._normalised_importance()
            self._static_key, self._static = key, (static, ref_rec, rec)
        return self._static

    def _recalls(self, pos: np.ndarray, parts: _Parts, raw_rel: np.ndarray, ranges: list[_Affine],
                 in_span: list[np.ndarray | None], read: Reader) -> list[list[Recall]]:
        """The k chosen memories of each query (``pos``: (b, k), best first) as recalls, every
        component in its true normalised form; ``ranges``: each query's relevance normaliser.

        Plain Python over the b x k chosen: each numpy call costs about as much as scoring a
        hundred memories, and these are few numbers, so one conversion per column is cheapest.
        """
        w, now_s = parts.weights, parts.now_s
        w_rec, w_imp, w_rel, w_time = w.recency, w.importance, w.relevance, w.time
        rec_lo, rec_span = parts.rec.lo, parts.rec.hi - parts.rec.lo
        log_decay = math.log(w.decay)
        clip = self.kind != "flat"  # approximate mode estimates relevance's range
        new = tuple.__new__  # the fastest way to make a named tuple from its fields
        ids, last = self.ids.values[pos].tolist(), self.last_access_s.values[pos].tolist()
        memory = read({mid: at for row_ids, row_last in zip(ids, last, strict=True)
                       for mid, at in zip(row_ids, row_last, strict=True)})  # each memory once
        out = []
        for row, (row_ids, row_last, rel_raw, rec_raw, imp_n, imp_raw, rel, span) in enumerate(zip(
                ids, last, raw_rel.tolist(), parts.ref_rec[pos].tolist(), parts.imp[pos].tolist(),
                self.importance.values[pos].tolist(), ranges, in_span, strict=True)):
            rel_lo, rel_span = rel.lo, rel.hi - rel.lo
            times = [0.0] * len(row_ids) if span is None else span[pos[row]].tolist()
            recalls = []
            for rank, (mid, at, raw, r, imp, raw_imp, tm) in enumerate(zip(  # all k long, by construction
                    row_ids, row_last, rel_raw, rec_raw, imp_n, imp_raw, times, strict=False), 1):
                rec_n = (r - rec_lo) / rec_span if rec_span > 0 else 0.5
                rel_n = (raw - rel_lo) / rel_span if rel_span > 0 else 0.5
                if clip:
                    rel_n = min(1.0, max(0.0, rel_n))
                total = w_rec * rec_n + w_imp * imp + w_rel * rel_n + w_time * tm
                raw_rec = recency_one(at, now_s, log_decay)
                recalls.append(new(Recall, (memory[mid], rank, total, rec_n, imp, rel_n, raw_rec, raw_imp, raw, w,
                                            tm)))
            out.append(recalls)
        return out

    def _score_exact(self, queries: np.ndarray, parts: _Parts, k: int, in_span: list[np.ndarray | None],
                     read: Reader) -> list[list[Recall]]:
        """Every query at once: one BLAS product, one partition per row, one gather."""
        raw_rel = self._best_key(self._products(queries))
        ranges = [_Affine.of(row, RELEVANCE_TOLERANCE) for row in raw_rel]
        if len(ranges) == 1:  # one query: a scalar scale, fewer numpy calls
            total = raw_rel * np.float32(parts.weights.relevance * ranges[0].scale) + parts.static
        else:
            scale = np.array([[parts.weights.relevance * r.scale] for r in ranges], dtype=np.float32)
            total = raw_rel * scale + parts.static
        for row, span in enumerate(in_span):
            if span is not None:
                total[row] += parts.weights.time * span
        pos = top_k_rows(total, k)
        return self._recalls(pos, parts, take_rows(raw_rel, pos), ranges, in_span, read)

    def _score_approximate(self, queries: np.ndarray, parts: _Parts, k: int, in_span: list[np.ndarray | None],
                           read: Reader) -> list[list[Recall]]:
        """HNSW candidates by relevance, unioned with the best by recency + importance.

        The relevance range comes from two searches (q finds the maximum, -q
        the minimum). Candidates double until the k-th best candidate beats
        the bound on every memory left out (Fagin's threshold algorithm), so
        the result is exact whenever HNSW finds the true nearest neighbours.
        (With several keys per memory, -q finds the worst key, a lower bound of
        the worst memory's best key: unless every memory is a candidate, relevance
        is then normalised over a slightly wider range than exact mode's.)
        """
        graph = self.index
        assert isinstance(graph, faiss.IndexHNSW)  # scored approximately only when the kind is hnsw
        x = self.vectors()
        n = len(self)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        chosen, chosen_rel, ranges = [], [], []
        for q, span in zip(queries, in_span, strict=True):
            static = parts.static if span is None else parts.static + parts.weights.time * span
            n_cand = min(n, max(4 * k, MIN_CANDIDATES))
            while True:
                n_search = min(self.n_keys, n_cand)
                graph.hnsw.efSearch = max(n_search, 64)
                sims, nearest = graph.search(np.vstack([q, -q]), n_search)
                found_keys = nearest[0][nearest[0] >= 0]
                found = self.key_owner(found_keys)
                rel = _Affine.of(np.array([-sims[1][0], sims[0][0]]), RELEVANCE_TOLERANCE)
                by_static = top_k(static, n_cand)
                cand = np.union1d(found, by_static)
                raw_rel = self._relevance_of(x, q, cand)
                if len(cand) == n:  # every memory is a candidate: take the exact range
                    rel = _Affine.of(raw_rel, RELEVANCE_TOLERANCE)
                total = static[cand] + parts.weights.relevance * rel.scale * raw_rel
                best = top_k(total, k)  # cand is sorted, so ties still go to newer ids
                bound = (static[by_static[-1]]
                         + parts.weights.relevance * rel.scale * float(sims[0][len(found_keys) - 1]))
                if n_cand >= n or total[best[-1]] >= bound:
                    break
                n_cand = min(n, 2 * n_cand)
            chosen.append(cand[best])
            chosen_rel.append(raw_rel[best])
            ranges.append(rel)
        return self._recalls(np.array(chosen), parts, np.array(chosen_rel), ranges, in_span, read)


def _make_index(dim: int, kind: IndexKind, vectors: VectorKind) -> faiss.Index:
    if kind not in INDEX_KINDS:
        raise ValueError(f"unknown index kind {kind!r}; use one of {INDEX_KINDS}")
    if vectors not in VECTOR_KINDS:
        raise ValueError(f"unknown vectors {vectors!r}; use one of {VECTOR_KINDS}")
    ip = faiss.METRIC_INNER_PRODUCT
    if vectors == "float32":
        return faiss.IndexFlatIP(dim) if kind == "flat" else faiss.IndexHNSWFlat(dim, HNSW_NEIGHBOURS, ip)
    fp16 = faiss.ScalarQuantizer.QT_fp16  # needs no training
    if kind == "flat":
        return faiss.IndexScalarQuantizer(dim, fp16, ip)
    return faiss.IndexHNSWSQ(dim, fp16, HNSW_NEIGHBOURS, ip)  # type: ignore[arg-type]  # the stub has it wrong


def _offsets(counts: np.ndarray) -> np.ndarray:
    """Where each of consecutive runs of ``counts`` rows starts."""
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


class _Affine(NamedTuple):
    """Min-max normalisation as ``(v - lo) * scale``; a constant component maps to 0.5."""

    lo: float
    hi: float

    @classmethod
    def of(cls, values: np.ndarray, tolerance: float = 0.0) -> _Affine:
        """The normaliser of ``values``; a spread within ``tolerance`` counts as constant."""
        lo, hi = float(values.min()), float(values.max())
        return cls(lo, hi if hi - lo > tolerance else lo)

    @property
    def scale(self) -> float:
        return 1.0 / (self.hi - self.lo) if self.hi > self.lo else 0.0


class _Parts(NamedTuple):
    """What every query of one call shares: the static score and its pieces."""

    static: np.ndarray
    ref_rec: np.ndarray
    rec: _Affine
    imp: np.ndarray
    now_s: float
    weights: Weights
