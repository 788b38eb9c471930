"""What writing a conversation costs each memory design, per turn: model calls, tokens and seconds, by purpose.

    python benchmarks/write_cost.py [PATH/locomo-dev.json] [--design letta,stream,tiered,buffer-summary]
                                    [--conversations N] [--embedder hash] [--json]

Each LoCoMo dev conversation is written turn by turn into each design, consolidating at session
boundaries, as ``memstream eval --design`` writes it, with the offline rules answering the
designs' own calls (a stand-in: the counts of calls and the prompt tokens are the designs' own;
completion tokens are the rules', not a model's). For ``letta`` the agent's counters are reported
too (steps, heartbeats, tool errors, warnings, evictions, ...). Seconds are wall time on whatever
machine runs it (the offline rules take none of a model's time), so only calls and tokens carry over.
The embedder (default ``hash``) changes what the stream's reflection retrieves, not how often it asks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from tqdm import tqdm

from memstream.designs import LettaDesign, design_names, make_design
from memstream.eval import load_locomo
from memstream.eval.conversation import sessions
from memstream.models import CachedEmbedder, OfflineChatModel, make_embedder, run_direct

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


def run(path: Path, designs: list[str], conversations: int | None, embedder_name: str) -> list[dict]:
    dataset = load_locomo(path)
    haystacks = dataset.haystacks[:conversations] if conversations else dataset.haystacks
    embedder = CachedEmbedder(make_embedder(embedder_name))
    rows = []
    for name in tqdm(designs, desc="designs", unit="design"):
        chat = OfflineChatModel()
        turns, seconds, counters = 0, 0.0, Counter()
        for h in haystacks:
            design = make_design(name, embedder=embedder)
            started = time.perf_counter()
            for s in sessions(h):
                run_direct(design.write_stage(h.key, s.entries), chat)
                run_direct(design.consolidate_stage(h.key, s.entries[-1].at), chat)
                turns += len(s.entries)
            seconds += time.perf_counter() - started
            if isinstance(design, LettaDesign):
                counters.update(design.counters())
        by_purpose: dict[str, dict[str, float]] = defaultdict(dict)
        for purpose, u in chat.usage.by_purpose.items():
            by_purpose[purpose] = {"calls_per_turn": round(u.calls / turns, 3),
                                   "prompt_tokens_per_turn": round(u.prompt_tokens / turns, 1)}
        usage = chat.usage.by_purpose.values()
        rows.append({"design": name, "conversations": len(haystacks), "turns": turns,
                     "calls_per_turn": round(sum(u.calls for u in usage) / turns, 3),
                     "prompt_tokens_per_turn": round(sum(u.prompt_tokens for u in usage) / turns, 1),
                     "completion_tokens_per_turn": round(sum(u.completion_tokens for u in usage) / turns, 1),
                     "ms_per_turn": round(seconds / turns * 1000, 2), "by_purpose": dict(by_purpose),
                     "counters": {k: counters[k] for k in sorted(counters)}})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    p.add_argument("--design", default="letta,stream,tiered,buffer-summary")
    p.add_argument("--conversations", type=int, help="only the first N conversations")
    p.add_argument("--embedder", default="hash")
    p.add_argument("--json", action="store_true")
    add_results_flag(p, "write_cost")
    args = p.parse_args()
    rows = run(args.path, design_names(args.design), args.conversations, args.embedder)
    if args.results:
        record(args.results, "write_cost", __doc__.splitlines()[0], rows)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'design':16}{'turns':>7}{'calls/turn':>12}{'prompt tok/turn':>17}{'compl tok/turn':>16}{'ms/turn':>9}")
    for r in rows:
        print(f"{r['design']:16}{r['turns']:>7}{r['calls_per_turn']:>12}{r['prompt_tokens_per_turn']:>17}"
              f"{r['completion_tokens_per_turn']:>16}{r['ms_per_turn']:>9}")
    for r in rows:
        if r["counters"]:
            print(f"{r['design']} counters: " + ", ".join(f"{k}={v}" for k, v in r["counters"].items()))


if __name__ == "__main__":
    main()
