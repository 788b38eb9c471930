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

``--vectors float32,fp16,int8`` measures instead how exact compact vectors are, and what a memory costs
in memory (``benchmarks/results/retrieval_vectors.json``); see :func:`measure_vectors`::

    python benchmarks/retrieval.py --vectors float32,fp16,int8 --n 10000,100000 --embedders synthetic,hash,minilm
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import math
import statistics
import sys
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import faiss
import numpy as np
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from memstream.models import HashEmbedder, MiniLMEmbedder
from memstream.models.base import Embedder, l2_normalise
from memstream.stream import MemoryStream, NewMemory, Weights
from memstream.stream.index import RELEVANCE_TOLERANCE, OwnerIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, path_for, record  # benchmarks/ is not a package

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

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim
        self.name = f"benchmark-{dim}"

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError("the benchmark embeds nothing")


def synthetic(n: int, rng: np.random.Generator) -> np.ndarray:
    centres = l2_normalise(rng.standard_normal((1000, DIM)).astype(np.float32))
    x = centres[rng.integers(0, 1000, n)] + 0.6 * rng.standard_normal((n, DIM)).astype(np.float32) / np.sqrt(DIM)
    return l2_normalise(x)


def build(vectors: np.ndarray, hours: np.ndarray, importance: np.ndarray, index: str,
          kind: str = "float32") -> MemoryStream:
    """One owner's stream of ``len(vectors)`` memories, appended in batches as a user would."""
    n = len(vectors)
    stream = MemoryStream(":memory:", FixedDim(vectors.shape[1]), index=index, vectors=kind)  # type: ignore[arg-type]
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


# -- compact vectors: how exact, and what a memory costs in memory --------------------------------------------

VECTORS_NAME = "retrieval_vectors"
VECTORS_TITLE = "Compact vectors: exactness against float32, and bytes per memory"
VECTORS_ABOUT = (
    "One owner's N memories (created over 30 days, importance 1–10), 100 queries, k = 10, the paper's weights. "
    "`final_top10`: mean overlap of each query's top 10 with float32's, by the full score (recency + importance "
    "+ relevance, min-max normalised); `final_same_order`: the share of queries whose top 10 is float32's, in "
    "order; `relevance_top10`: the same overlap by relevance alone (FAISS's own search), and `relevance_top10_ties` counting a memory whose float32 cosine ties float32's 10th (within 1e-6, float32 rounding) as agreeing (the hash embedder's cosines tie often); `max_relevance_diff`: "
    "the largest difference of a raw cosine from float32's, over every memory and query; `max_score_diff`: of a "
    "final score (out of 3), over the memories in both top 10s. `fp16` is the stream's `vectors=\"fp16\"`; "
    "`int8` is FAISS's QT_8bit trained on the owner's own vectors (its best case; not a stream setting), "
    "ranked as a float32 stream of its decoded vectors. Embedders: `synthetic` (clustered 384-d vectors), "
    "`hash-384` and `minilm-l6-int8` over simulation-like observations. Bytes: `vector_bytes` per memory "
    "(FAISS's codes); `index_bytes` per memory as malloc counts it (glibc mallinfo2: FAISS's storage and the "
    "numpy columns, growth slack included) for an owner index filled 10 memories at a time, as a simulation's steps fill it; "
    "`python_bytes`: what tracemalloc sees of the stream after filling it and answering the queries, less "
    "its numpy columns, per memory (the bounded caches of recalled memories included); neither for int8.")
NAMES = ["Isabella", "Klaus", "Maria", "Ayesha", "Wolfgang", "Mei", "John", "Eddy", "Tom", "Jennifer", "Yuriko",
         "Carmen", "Tamara", "Arthur", "Sam", "Latoya", "Rajiv", "Abigail", "Francisco", "Hailey", "Giorgio",
         "Ryan", "Carlos", "Adam", "Jane"]
DOING = ["cooking breakfast", "reading a book", "painting a portrait", "writing a research paper", "sleeping",
         "brewing coffee", "planning a Valentine's Day party", "studying for an exam", "playing the guitar",
         "talking about the election", "cleaning the kitchen", "walking in the park", "taking a nap",
         "serving customers", "decorating the cafe", "eating lunch", "composing music", "watering the garden",
         "shopping for groceries", "chatting with a friend", "working on a poem", "fixing a leaky faucet",
         "teaching a class", "jogging", "baking bread", "reviewing notes", "organising the library shelves",
         "discussing philosophy", "preparing dinner", "inviting neighbours to a party"]
PLACES = ["Hobbs Cafe", "the Oak Hill College library", "The Willows Market", "Johnson Park", "the Rose and Crown Pub",
          "Harvey Oak Supply Store", "the kitchen", "the bedroom", "the common room", "the town hall",
          "Giorgio's apartment", "the pharmacy", "the dorm", "the garden", "the bakery"]
THINGS = ["the stove is heating", "the bed is being used", "the coffee machine is brewing", "the desk is cluttered",
          "the piano is idle", "the shelf is full of books", "the refrigerator is empty", "the easel is in use"]


def observations(n: int, rng: np.random.Generator) -> list[str]:
    """Generative Agents' kind of memories: what an agent sees people and things doing, where, and with whom."""
    out = []
    for _ in range(n):
        a, b = rng.choice(len(NAMES), 2, replace=False)
        doing, place = DOING[rng.integers(len(DOING))], PLACES[rng.integers(len(PLACES))]
        pick = rng.integers(4)
        if pick == 0:
            out.append(f"{THINGS[rng.integers(len(THINGS))]} in {place}")
        elif pick == 1:
            out.append(f"{NAMES[a]} is {doing} at {place} with {NAMES[b]}")
        elif pick == 2:
            out.append(f"{NAMES[a]} said to {NAMES[b]} that they are {doing} at {place}")
        else:
            out.append(f"{NAMES[a]} is {doing} at {place}")
    return out


def questions(n: int, rng: np.random.Generator) -> list[str]:
    """What the agents ask their memories: about a person, a place, an activity."""
    out = []
    for _ in range(n):
        name, doing, place = NAMES[rng.integers(len(NAMES))], DOING[rng.integers(len(DOING))], PLACES[rng.integers(len(PLACES))]
        out.append([f"What is {name} doing?", f"Who is {doing}?", f"What happens at {place}?",
                    f"{name} and {doing}", f"Is anyone {doing} at {place}?"][rng.integers(5)])
    return out


def malloc_bytes() -> int:
    """Bytes glibc's malloc has handed out and not had back (arena and mmapped), not RSS."""
    class MallInfo2(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                   "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return int(info.uordblks + info.hblkhd)


def _columns_bytes(index: OwnerIndex) -> int:
    columns = (index.ids, index.created_s, index.last_access_s, index.importance, index._key_owner, index._key_start)
    return sum(c._data.nbytes for c in columns if c is not None)


def index_bytes(vectors: np.ndarray, hours: np.ndarray, importance: np.ndarray, kind: str, step: int = 10) -> int:
    """What malloc holds for one owner's index of these memories, filled ``step`` at a time."""
    gc.collect()
    before = malloc_bytes()
    index = OwnerIndex(vectors.shape[1], "flat", kind)  # type: ignore[arg-type]
    ids = np.arange(1, len(vectors) + 1)
    seconds = hours * 3600
    for start in range(0, len(vectors), step):
        stop = start + step
        index.add(ids[start:stop], vectors[start:stop], seconds[start:stop], importance[start:stop].astype(np.float64))
    held = malloc_bytes() - before
    del index
    return held


def _int8(vectors: np.ndarray) -> tuple[faiss.Index, np.ndarray]:
    """FAISS's 8-bit scalar quantizer trained on ``vectors`` themselves, and the vectors as it decodes them."""
    sq = faiss.IndexScalarQuantizer(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    sq.train(vectors)
    sq.add(vectors)
    return sq, sq.sa_decode(sq.sa_encode(vectors))


def _fp16(vectors: np.ndarray) -> tuple[faiss.Index, np.ndarray]:
    sq = faiss.IndexScalarQuantizer(vectors.shape[1], faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
    sq.add(vectors)
    return sq, sq.sa_decode(sq.sa_encode(vectors))


def _top(stream: MemoryStream, queries: np.ndarray, now: datetime) -> list[list[tuple[int, float]]]:
    rows = stream.search("agent", queries, now=now, k=K, touch=False)
    return [[(r.memory.id, r.score) for r in row] for row in rows]


def measure_vectors(embedder: str, vectors: np.ndarray, queries: np.ndarray, kinds: list[str],
                    seed: int = 0) -> list[dict]:
    """Each kind of vectors against float32 on the same memories and queries."""
    rng = np.random.default_rng(seed)
    n = len(vectors)
    hours = np.sort(rng.uniform(0, 24 * 30, n))
    importance = rng.integers(1, 11, n)
    now = T0 + timedelta(days=31)
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    _, rel_ref = flat.search(queries, K)
    reference = _top(build(vectors, hours, importance, "flat"), queries, now)
    raw_ref = queries @ vectors.T
    rows = []
    for kind in kinds:
        if kind == "float32":
            index, decoded, stream_kind = flat, vectors, "float32"
        elif kind == "fp16":
            (index, decoded), stream_kind = _fp16(vectors), "fp16"
        elif kind == "int8":
            (index, decoded), stream_kind = _int8(vectors), "float32"  # a float32 stream of the decoded vectors
        else:
            raise SystemExit(f"unknown vectors {kind!r}; use float32, fp16 or int8")
        tracemalloc.start()
        stream = build(decoded if kind == "int8" else vectors, hours, importance, "flat", stream_kind)
        got = _top(stream, queries, now)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        python = traced - _columns_bytes(stream._owners["agent"])
        del stream
        _, rel_got = index.search(queries, K)
        diffs = [abs(a - b) for top, ref in zip(got, reference, strict=True)
                 for mid, a in top for rid, b in ref if mid == rid]
        rows.append({
            "embedder": embedder, "n": n, "vectors": kind,
            "final_top10": round(float(np.mean([len({m for m, _ in a} & {m for m, _ in b}) / K
                                                for a, b in zip(got, reference, strict=True)])), 4),
            "final_same_order": round(float(np.mean([[m for m, _ in a] == [m for m, _ in b]
                                                     for a, b in zip(got, reference, strict=True)])), 3),
            "relevance_top10": round(float(np.mean([len(set(a) & set(b)) / K
                                                    for a, b in zip(rel_got, rel_ref, strict=True)])), 4),
            "relevance_top10_ties": round(float(np.mean([  # a memory tied with float32's 10th counts as agreeing
                np.mean(raw_ref[i, a] >= np.sort(raw_ref[i])[-K] - RELEVANCE_TOLERANCE) for i, a in enumerate(rel_got)])), 4),
            "max_relevance_diff": float(f"{np.abs(queries @ decoded.T - raw_ref).max():.3g}"),
            "max_score_diff": float(f"{max(diffs):.3g}"),
            "vector_bytes": int(index.sa_code_size()),
            # int8 is no stream setting: what a stream holds for it is not measured
            "index_bytes": None if kind == "int8" else round(index_bytes(vectors, hours, importance, kind) / n, 1),
            "python_bytes": None if kind == "int8" else round(python / n, 1),
        })
    return rows


def embedded(name: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` memories' vectors and ``BATCH`` queries' from the embedder ``name``."""
    if name == "synthetic":
        vectors = synthetic(n, rng)
        return vectors, l2_normalise(vectors[rng.integers(0, n, BATCH)] + 0.3 * synthetic(BATCH, rng))
    model: Embedder = HashEmbedder(DIM) if name == "hash" else MiniLMEmbedder()
    texts = observations(n, rng)
    chunks = [model.embed(texts[i:i + 2000]) for i in tqdm(range(0, n, 2000), desc=f"embed {name}", leave=False)]
    return np.vstack(chunks), model.embed(questions(BATCH, rng))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1000,10000,100000", help="comma-separated stream sizes")
    parser.add_argument("--json", action="store_true", help="print one JSON object per N")
    parser.add_argument("--no-approx", action="store_true", help="skip the HNSW index")
    parser.add_argument("--vectors", help="instead: exactness and bytes of these vectors (float32,fp16,int8)")
    parser.add_argument("--embedders", default="synthetic,hash",
                        help="with --vectors: synthetic, hash and/or minilm (comma-separated)")
    add_results_flag(parser, "retrieval")
    args = parser.parse_args()
    faiss.omp_set_num_threads(1)
    if args.vectors:
        vectors_main(args)
        return
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


def vectors_main(args: argparse.Namespace) -> None:
    kinds = args.vectors.split(",")
    rows = []
    with threadpool_limits(limits=1):
        for name in args.embedders.split(","):
            sizes = sorted(int(x) for x in args.n.split(","))
            vectors, queries = embedded(name, sizes[-1], np.random.default_rng(1))
            for n in sizes:  # the smaller sizes are the first memories of the largest
                for row in measure_vectors(name if name == "synthetic" else f"{name}-384" if name == "hash"
                                           else MiniLMEmbedder.name, vectors[:n], queries, kinds):
                    rows.append(row)
                    print(json.dumps(row) if args.json else " ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.results:
        target = path_for(VECTORS_NAME) if Path(args.results) == path_for("retrieval") else Path(args.results)
        record(target, VECTORS_NAME, VECTORS_TITLE, rows, about=VECTORS_ABOUT)


if __name__ == "__main__":
    main()
