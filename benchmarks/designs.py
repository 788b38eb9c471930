"""Memory designs over LoCoMo dev, offline: the whole pipeline's wall time, and context assembly per question.

    python benchmarks/designs.py [PATH/locomo-dev.json] [--embedder minilm] [--budget 2000] [--json] [--results [FILE]]

For every design: ingest (write the conversations turn by turn, consolidating at session
boundaries, with the offline rules for the designs' own calls), assemble a context for every
question at the budget, and answer it with the extractive stand-in. BLAS and FAISS are pinned to
one thread. ``ms/q`` is a question's assembly with its query embedded, ``cached q`` the same with the
query's vector already made (the design's own work). Assembly is set against a floor measured in the same process on the same owner:
embedding the question plus one matrix-vector product and an argpartition over the owner's
record vectors (the least a relevance-ranked context can cost). Record vectors are shared by the
designs (a cache, as ``memstream eval --design`` shares it), so the first design to embed a
conversation pays for its ingest; the questions' vectors are forgotten before each design's
questions (and the floor's), so every design pays for embedding its queries.
Targets (issue 23): all five designs over LoCoMo dev ≤ 3 minutes on 2 cores; assembly ≤ 20 ms per
question for the retrieval designs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import faiss
import numpy as np
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from memstream.designs import DESIGNS, RETRIEVAL_DESIGNS, make_design
from memstream.eval import load_locomo
from memstream.eval.conversation import sessions
from memstream.eval.prompts import ANSWER_PURPOSE, answer_messages
from memstream.models import CachedEmbedder, OfflineChatModel, make_embedder, run_direct
from memstream.models.request import Request

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


def floor_ms(embedder, vectors: np.ndarray, questions: list[str], k: int = 50) -> float:
    """Median ms to embed a question and rank the owner's vectors by cosine (argpartition of the top k)."""
    times = []
    for q in questions:
        started = time.perf_counter()
        scores = vectors @ embedder.embed([q])[0]
        np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def run(path: Path, embedder_name: str, budget: int) -> dict:
    dataset = load_locomo(path)
    embedder = CachedEmbedder(make_embedder(embedder_name))
    chat = OfflineChatModel()
    rows, started_all = [], time.perf_counter()
    floors = []
    for name in tqdm(DESIGNS, desc="designs", unit="design"):
        ingest = assemble = answer = 0.0
        per_question: list[float] = []
        warm: list[float] = []
        for h in dataset.haystacks:
            design = make_design(name, embedder=embedder)
            t = time.perf_counter()
            for s in sessions(h):
                run_direct(design.write_stage(h.key, s.entries), chat)
                run_direct(design.consolidate_stage(h.key, s.entries[-1].at), chat)
            ingest += time.perf_counter() - t
            contexts = []
            forget(embedder, [q.text for q in h.questions])
            for q in h.questions:
                t = time.perf_counter()
                contexts.append(design.context(h.key, q.text, q.asked_at, budget))
                per_question.append(time.perf_counter() - t)
            assemble += sum(per_question[-len(h.questions):])
            for q in h.questions:  # again, the query's vector now cached: the design's own work
                t = time.perf_counter()
                design.context(h.key, q.text, q.asked_at, budget)
                warm.append(time.perf_counter() - t)
            t = time.perf_counter()
            run_direct(_batch([Request(ANSWER_PURPOSE, answer_messages(c.text, q.text, q.asked_at), str)
                               for c, q in zip(contexts, h.questions, strict=True)]), chat)
            answer += time.perf_counter() - t
            if name == "vector":
                forget(embedder, [q.text for q in h.questions])
                floors.append(floor_ms(embedder, np.vstack(design.indexes[h.key]._chunks),
                                       [q.text for q in h.questions]))
        rows.append({"design": name, "ingest_s": round(ingest, 2), "assemble_s": round(assemble, 2),
                     "answer_s": round(answer, 2), "assembly_ms_median": round(statistics.median(per_question) * 1000, 2),
                     "assembly_ms_p95": round(sorted(per_question)[int(0.95 * len(per_question))] * 1000, 2),
                     "assembly_ms_query_cached": round(statistics.median(warm) * 1000, 2)})
    floor = statistics.median(floors)
    for r in rows:
        r["assembly_over_floor"] = round(r["assembly_ms_median"] / floor, 2)
    return {"dataset": str(path), "embedder": embedder.name, "budget": budget, "questions": dataset.n_questions,
            "total_s": round(time.perf_counter() - started_all, 1), "floor_ms": round(floor, 3), "designs": rows}


def forget(embedder: CachedEmbedder, texts: list[str]) -> None:
    """Drop ``texts`` from the vector cache, so the next embedding of them is paid for."""
    for text in texts:
        embedder._vectors.pop(text, None)


def _batch(requests):
    return (yield requests)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", nargs="?", default=str(DEFAULT))
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument("--json", action="store_true")
    add_results_flag(p, "designs")
    args = p.parse_args()
    faiss.omp_set_num_threads(1)
    with threadpool_limits(limits=1):
        result = run(Path(args.path), args.embedder, args.budget)
    if args.results:
        top = {k: result[k] for k in ("embedder", "budget", "questions", "total_s", "floor_ms")}
        record(args.results, "designs", "Memory designs' speed over LoCoMo dev, offline",
               [{**top, **r} for r in result["designs"]])
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['questions']} questions, embedder {result['embedder']}, budget {result['budget']}: "
          f"{result['total_s']} s in all; floor {result['floor_ms']} ms per question")
    print(f"{'design':<15}{'ingest s':>9}{'assemble s':>11}{'answer s':>9}{'ms/q':>8}{'p95':>8}{'/floor':>8}"
          f"{'cached q':>10}  target")
    for r in result["designs"]:
        target = "≤ 20 ms" if r["design"] in RETRIEVAL_DESIGNS else ""
        print(f"{r['design']:<15}{r['ingest_s']:>9}{r['assemble_s']:>11}{r['answer_s']:>9}{r['assembly_ms_median']:>8}"
              f"{r['assembly_ms_p95']:>8}{r['assembly_over_floor']:>8}{r['assembly_ms_query_cached']:>10}  {target}")


if __name__ == "__main__":
    main()
