"""Which offline embedder should be the default? Relevance-only recall on LoCoMo turns, and speed.

For each LoCoMo conversation every turn (``speaker: text``, plus the image caption)
is embedded; each question of categories 1-4 ranks the turns by cosine alone, and
recall_any@k is the share of questions with at least one evidence turn in the top k.
Evidence ids are read with LoCoMo's known defects in mind (joined ids, leading zeros,
ids that do not exist); what cannot be resolved is skipped and counted. Speed is
sentences per second over the same turns, BLAS and onnxruntime on one thread.

    python benchmarks/embedders.py [PATH/locomo-dev.json] [--embedders wordllama,minilm,hash] [--json] [--results [FILE]]

``--results`` adds the rows to ``benchmarks/results/embedders.json`` (or FILE), which the docs' results page shows.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from memstream.models import make_embedder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

TITLE = "Offline embedders"
ABOUT = ("Relevance alone (cosine of question and turn) on the 760 LoCoMo dev questions of categories 1–4 "
         "(2 skipped: no resolvable evidence id), one thread. LoCoMo turns average about 42 tokens.")
DEFAULT_PATH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo-dev.json"
_ID = re.compile(r"D(\d+):(\d+)")


def turns_and_questions(conversation: dict) -> tuple[list[str], list[str], list[tuple[str, set[int]]], int]:
    conv = conversation["conversation"]
    ids, texts = [], []
    sessions = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    for s in sessions:
        for turn in conv[f"session_{s}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            ids.append(turn["dia_id"])
            texts.append(text)
    where = {d: i for i, d in enumerate(ids)}
    questions, skipped = [], 0
    for qa in conversation["qa"]:
        if qa.get("category") == 5:
            continue
        evidence = {where[f"D{int(a)}:{int(b)}"] for raw in qa.get("evidence", [])
                    for a, b in _ID.findall(str(raw)) if f"D{int(a)}:{int(b)}" in where}
        if not evidence:
            skipped += 1
            continue
        questions.append((qa["question"], evidence))
    return ids, texts, questions, skipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT_PATH))
    parser.add_argument("--embedders", default="wordllama,minilm,hash")
    parser.add_argument("-k", "--k", dest="k", default="5,10", help="cut-offs, e.g. 5,10 (-k as in memstream eval)")
    parser.add_argument("--json", action="store_true")
    add_results_flag(parser, "embedders")
    args = parser.parse_args()
    data = json.loads(Path(args.path).read_text())
    ks = [int(k) for k in args.k.split(",")]
    rows = []
    with threadpool_limits(limits=1):
        for spec in args.embedders.split(","):
            embedder = make_embedder(spec)
            if hasattr(embedder, "threads"):
                embedder.threads = 1  # pinned like BLAS, before the session is made
            hits = {k: 0 for k in ks}
            n = skipped = sentences = 0
            seconds = 0.0
            for conversation in data:
                _, texts, questions, skip = turns_and_questions(conversation)
                skipped += skip
                start = time.perf_counter()
                turns = embedder.embed(texts)
                seconds += time.perf_counter() - start
                sentences += len(texts)
                queries = embedder.embed([q for q, _ in questions])
                order = np.argsort(-(queries @ turns.T), axis=1, kind="stable")
                for (_, evidence), ranked in zip(questions, order, strict=True):
                    n += 1
                    for k in ks:
                        hits[k] += bool(evidence & set(ranked[:k].tolist()))
            row = {"embedder": embedder.name, "questions": n, "skipped_no_evidence": skipped,
                   **{f"recall_any@{k}": round(hits[k] / n, 4) for k in ks},
                   "sentences_per_s": round(sentences / seconds)}
            rows.append(row)
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.results:
        record(args.results, "embedders", TITLE, rows, about=ABOUT)


if __name__ == "__main__":
    main()
