"""How far is memstream's token count from a real tokenizer? ``count_tokens`` against WordPiece, on real turns.

Context budgets, cuts and write costs are counted by ``memstream.models.count_tokens``: words and
punctuation by a regular expression, an approximation that depends on no model's vocabulary. This
measures it against the one real tokenizer that ships offline with memstream, the bundled
all-MiniLM-L6-v2 WordPiece tokenizer (``memstream/models/data/minilm-tokenizer.json``). A chat model's
own BPE tokenizer differs from both; this says how large the approximation's error is, not a model's bill.

The texts are a seeded sample of the turns of LoCoMo and LongMemEval-S (the dev halves).

    python benchmarks/token_counts.py [--data ../shared/data] [--n 400] [--seed 0] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

from tokenizers import Tokenizer

from memstream.models import count_tokens
from memstream.models.embedders import MINILM_TOKENIZER

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def turns(data: Path) -> list[str]:
    """Every turn's text of the LoCoMo and LongMemEval-S dev halves under ``data``."""
    texts: list[str] = []
    for conversation in json.loads((data / "locomo" / "locomo-dev.json").read_text(encoding="utf-8")):
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                texts += [turn["text"] for turn in session if turn.get("text")]
    for question in json.loads((data / "longmemeval" / "longmemeval-s-dev.json").read_text(encoding="utf-8")):
        for session in question["haystack_sessions"]:
            texts += [turn["content"] for turn in session if turn.get("content")]
    return texts


def measure(texts: list[str]) -> dict[str, float | int]:
    """The approximation's total and per-text error against WordPiece (no special tokens, no truncation)."""
    tokenizer = Tokenizer.from_file(str(MINILM_TOKENIZER))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    approx = [count_tokens(t) for t in texts]
    real = [len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts]
    errors = sorted(abs(a - r) / r for a, r in zip(approx, real, strict=True) if r)
    return {
        "texts": len(texts),
        "wordpiece_tokens": sum(real),
        "count_tokens": sum(approx),
        "total_error": (sum(approx) - sum(real)) / sum(real),
        "median_abs_error": statistics.median(errors),
        "p90_abs_error": errors[int(0.9 * len(errors))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    add_results_flag(parser, "token_counts")
    args = parser.parse_args()
    texts = turns(args.data)
    result = measure(random.Random(args.seed).sample(texts, min(args.n, len(texts))))
    if args.results:
        record(args.results, "token_counts", __doc__.splitlines()[0], [result])
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['texts']} turns, {result['wordpiece_tokens']:,} WordPiece tokens; count_tokens says "
          f"{result['count_tokens']:,} ({result['total_error']:+.1%} in total); per turn |error|: "
          f"median {result['median_abs_error']:.1%}, 90th percentile {result['p90_abs_error']:.1%}")


if __name__ == "__main__":
    main()
