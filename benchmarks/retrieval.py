"""Retrieval latency against one owner's N memories (384-d), beside a floor and a naive loop.

For each N, in the same process and with BLAS and FAISS pinned to one thread:
- memstream: ``MemoryStream.search`` (exact, flat index) for one query, and for a batch of 100;
- floor: one numpy matrix-vector product plus argpartition (no recency, importance or I/O);
- naive: a pure-Python loop over the memories computing the same score, the shape of the
  reference implementation (per-memory cosine, dict normalisation, full sort); skipped above 100k.
  ``naive_numpy_ms`` is the same loop with a numpy dot per memory, as the reference code has it;
- hnsw: the approximate index's latency and its top-10 agreement with exact retrieval.

Vectors are synthetic but clustered like sentence embeddings (1,000 centres plus noise);
queries lie near stored memories. Times are medians of repeated runs.

    python benchmarks/retrieval.py --n 1000,10000,100000 [--json] [--no-approx] [--results [FILE]]

``--results`` adds the rows to ``benchmarks/results/retrieval.json`` (or FILE), which the docs' results page shows.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import faiss
import numpy as np
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from memstream.models.base import Embedder, l2_normalise
from memstream.stream import MemoryStream, NewMemory, Weights

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

DIM = 384
K = 10
BATCH = 100
NAIVE_MAX_N = 100_000
T0 = datetime(2023, 1, 1, tzinfo=UTC)
TITLE = "Retrieval latency"
ABOUT = ("One owner's N memories, 384-d clustered synthetic vectors, k = 10, medians, BLAS and FAISS on one thread. "
         "`floor`: one numpy matrix-vector product plus argpartition; `naive`: a pure-Python loop computing the same "
         "score (`naive_numpy`: the same loop with a numpy dot per memory); `batch100`: a batch of 100 queries; "
         "`hnsw`: the approximate index and its top-10 agreement with exact retrieval.")


class FixedDim(Embedder):
    """Placeholder embedder: the benchmark passes vectors to ``search`` directly."""

    name = "benchmark-384"
    dim = DIM

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError("the benchmark embeds nothing")


def synthetic(n: int, rng: np.random.Generator) -> np.ndarray:
    centres = l2_normalise(rng.standard_normal((1000, DIM)).astype(np.float32))
    x = centres[rng.integers(0, 1000, n)] + 0.6 * rng.standard_normal((n, DIM)).astype(np.float32) / np.sqrt(DIM)
    return l2_normalise(x)


def build(vectors: np.ndarray, hours: np.ndarray, importance: np.ndarray, index: str) -> MemoryStream:
    """One owner's stream of ``len(vectors)`` memories, appended in batches as a user would."""
    n = len(vectors)
    stream = MemoryStream(":memory:", FixedDim(), index=index)  # type: ignore[arg-type]
    step = 20_000
    for start in tqdm(range(0, n, step), desc=f"build {index} n={n}", leave=False):
        stop = min(n, start + step)
        batch = vectors[start:stop]
        stream.embedder.embed = lambda texts, b=batch: b  # type: ignore[method-assign]
        stream.extend(NewMemory(owner="agent", text=f"memory {i}", created_at=T0 + timedelta(hours=float(hours[i])),
                                importance=int(importance[i])) for i in range(start, stop))
    return stream


def naive_retrieve(memories: list[dict], q: list[float], now_h: float, w: Weights, k: int,
                   dot=None) -> list[int]:
    """The reference implementation's shape: a Python loop and dicts over every memory.

    With ``dot=None`` the cosine is pure Python too; pass ``np.dot`` for the
    reference's own mix (a numpy call per memory inside a Python loop).
    """
    rec, imp, rel = {}, {}, {}
    qn = math.sqrt(sum(a * a for a in q)) if dot is None else float(np.linalg.norm(q))
    for m in memories:
        v = m["vec"]
        rec[m["id"]] = w.decay ** (now_h - m["last_h"])
        imp[m["id"]] = m["importance"]
        if dot is None:
            rel[m["id"]] = sum(a * b for a, b in zip(v, q, strict=True)) / (math.sqrt(sum(a * a for a in v)) * qn)
        else:
            rel[m["id"]] = float(dot(v, q) / (np.linalg.norm(v) * qn))

    def norm(d: dict) -> dict:
        lo, hi = min(d.values()), max(d.values())
        return {i: (v - lo) / (hi - lo) if hi > lo else 0.5 for i, v in d.items()}

    rec, imp, rel = norm(rec), norm(imp), norm(rel)
    total = {i: w.recency * rec[i] + w.importance * imp[i] + w.relevance * rel[i] for i in rec}
    return sorted(total, key=lambda i: (-total[i], -i))[:k]


def timed(fn, repeats: int) -> float:
    return timed_pair(fn, None, repeats)[0]


def timed_pair(fa, fb, repeats: int) -> tuple[float, float]:
    """Median milliseconds of ``fa`` and ``fb``, run alternately so machine drift hits both alike."""
    fa()
    if fb:
        fb()
    a, b = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        fa()
        a.append((time.perf_counter() - start) * 1000)
        if fb:
            start = time.perf_counter()
            fb()
            b.append((time.perf_counter() - start) * 1000)
    return statistics.median(a), statistics.median(b) if b else 0.0


def measure(n: int, approx: bool, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    vectors = synthetic(n, rng)
    hours = np.sort(rng.uniform(0, 24 * 30, n))
    importance = rng.integers(1, 11, n)
    stream = build(vectors, hours, importance, "flat")
    now = T0 + timedelta(days=31)
    queries = l2_normalise(vectors[rng.integers(0, n, BATCH)] + 0.3 * synthetic(BATCH, rng))
    repeats = max(5, min(200, 2_000_000 // n))
    q0 = queries[0]
    x = stream._owners["agent"].vectors()

    def floor() -> None:
        scores = x @ q0
        np.argpartition(-scores, K)[:K]

    def floor_batch() -> None:
        scores = queries @ x.T
        np.argpartition(-scores, K, axis=1)[:, :K]

    memstream_ms, floor_ms = timed_pair(
        lambda: stream.search("agent", q0, now=now, k=K, touch=False), floor, repeats)
    batch_ms, floor_batch_ms = timed_pair(
        lambda: stream.search("agent", queries, now=now, k=K, touch=False), floor_batch, max(3, repeats // 20))

    naive_ms = naive_numpy_ms = None
    if n <= NAIVE_MAX_N:
        index = stream._owners["agent"]
        memories = [{"id": int(i), "last_h": float(t) / 3600, "importance": float(im), "vec": v}
                    for i, t, im, v in zip(index.ids.values, index.last_access_s.values,
                                           index.importance.values, vectors.tolist(), strict=True)]
        now_h = now.timestamp() / 3600
        w = Weights()
        q_list = q0.tolist()
        ours = [r.memory.id for r in stream.search("agent", q0, now=now, k=K, touch=False)[0]]
        naive_ids = naive_retrieve(memories, q_list, now_h, w, K)
        assert naive_ids == ours, f"the naive loop and memstream disagree: {naive_ids} vs {ours}"
        naive_ms = timed(lambda: naive_retrieve(memories, q_list, now_h, w, K), 1 if n > 10_000 else 3)
        for m, v in zip(memories, vectors, strict=True):
            m["vec"] = v
        naive_numpy_ms = timed(lambda: naive_retrieve(memories, q0, now_h, w, K, dot=np.dot),
                               1 if n > 10_000 else 3)

    row = {"n": n, "memstream_ms": round(memstream_ms, 4), "floor_ms": round(floor_ms, 4),
           "naive_ms": None if naive_ms is None else round(naive_ms, 3),
           "ratio_to_floor": round(memstream_ms / floor_ms, 3),
           "naive_speedup": None if naive_ms is None else round(naive_ms / memstream_ms, 1),
           "naive_numpy_ms": None if naive_numpy_ms is None else round(naive_numpy_ms, 3),
           "batch100_ms": round(batch_ms, 3), "floor_batch100_ms": round(floor_batch_ms, 3),
           "batch100_ratio_to_floor": round(batch_ms / floor_batch_ms, 3)}
    if approx:
        hnsw = build(vectors, hours, importance, "hnsw")
        exact_top = [[r.memory.id for r in rs] for rs in stream.search("agent", queries, now=now, k=K, touch=False)]
        approx_top = [[r.memory.id for r in rs] for rs in hnsw.search("agent", queries, now=now, k=K, touch=False)]
        agreement = np.mean([len(set(a) & set(e)) / K for a, e in zip(approx_top, exact_top, strict=True)])
        row["hnsw_ms"] = round(timed(lambda: hnsw.search("agent", q0, now=now, k=K, touch=False), repeats), 4)
        row["hnsw_top10_agreement"] = round(float(agreement), 4)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1000,10000,100000", help="comma-separated stream sizes")
    parser.add_argument("--json", action="store_true", help="print one JSON object per N")
    parser.add_argument("--no-approx", action="store_true", help="skip the HNSW index")
    add_results_flag(parser, "retrieval")
    args = parser.parse_args()
    faiss.omp_set_num_threads(1)
    rows = []
    with threadpool_limits(limits=1):
        for n in (int(x) for x in args.n.split(",")):
            row = measure(n, approx=not args.no_approx)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.results:
        record(args.results, "retrieval", TITLE, rows, about=ABOUT)


if __name__ == "__main__":
    main()
