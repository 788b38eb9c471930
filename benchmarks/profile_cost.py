"""What the profile design costs per turn, beside the stream's: model calls and tokens by purpose, and what
its updates did (versions, compactions, dropped edits), over LoCoMo dev's conversations.

    python benchmarks/profile_cost.py [PATH/locomo-dev.json] [--designs profile,stream] [--llm offline] [--json]

Each conversation is written into each design session by session, as ``memstream eval --design`` does
(consolidating at session boundaries). Calls and tokens are the chat model's own usage; with the offline
rules (the default) tokens are a proxy for what a model would be sent and write, counted the same way.
Seconds are wall time on whatever machine runs it (indicative only on a shared one).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tqdm import tqdm

from memstream.designs import make_design
from memstream.eval import load_locomo
from memstream.eval.conversation import sessions
from memstream.models import HashEmbedder, make_chat_model, run_direct

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


def run(path: Path, names: list[str], llm: str) -> list[dict]:
    dataset = load_locomo(path)
    rows = []
    for name in names:
        chat = make_chat_model(llm)
        turns, started = 0, time.perf_counter()
        counters: dict[str, int] = {}
        for h in tqdm(dataset.haystacks, desc=name, unit="conversation"):
            design = make_design(name, embedder=HashEmbedder(64))
            for session in sessions(h):
                run_direct(design.write_stage(h.key, session.entries), chat)
                run_direct(design.consolidate_stage(h.key, session.entries[-1].at), chat)
                turns += len(session.entries)
            if hasattr(design, "counters"):
                for k, v in design.counters().items():
                    counters[k] = counters.get(k, 0) + v
        usage = chat.usage.by_purpose
        rows.append({
            "design": name, "model": chat.name, "turns": turns, "seconds": round(time.perf_counter() - started, 1),
            "calls_per_turn": round(sum(u.calls for u in usage.values()) / turns, 3),
            "tokens_per_turn": round(sum(u.prompt_tokens + u.completion_tokens for u in usage.values()) / turns, 1),
            "by_purpose": {p: {"calls_per_turn": round(u.calls / turns, 3),
                               "tokens_per_turn": round((u.prompt_tokens + u.completion_tokens) / turns, 1)}
                           for p, u in sorted(usage.items())},
            "counters": counters,
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--designs", default="profile,stream")
    parser.add_argument("--llm", default="offline")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run(args.path, [n.strip() for n in args.designs.split(",") if n.strip()], args.llm)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| design | turns | calls / turn | tokens / turn | by purpose (calls / turn, tokens / turn) | s |")
    print("|---|---:|---:|---:|---|---:|")
    for r in rows:
        parts = ", ".join(f"{p} {u['calls_per_turn']:g} / {u['tokens_per_turn']:,.0f}" for p, u in r["by_purpose"].items())
        print(f"| {r['design']} | {r['turns']:,} | {r['calls_per_turn']:g} | {r['tokens_per_turn']:,.0f} | {parts} | "
              f"{r['seconds']:g} |")
    for r in rows:
        if r["counters"]:
            print(f"{r['design']} counters: " + ", ".join(f"{k} {v}" for k, v in r["counters"].items()))


if __name__ == "__main__":
    main()
