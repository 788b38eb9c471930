"""``memstream demo``: a small stream built from the bundled example, recalled and explained."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from memstream.cli.flags import model_flags, output_flag
from memstream.cli.opening import open_stream
from memstream.cli.text import short
from memstream.errors import MemstreamError
from memstream.stream import rated


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("demo", help="build a small stream from the bundled example and recall")
    output_flag(p, required=False, help="the stream file to write (default: none, the stream lives in RAM)")
    model_flags(p)
    return {"demo": cmd_demo}


def cmd_demo(args: argparse.Namespace) -> int:
    from importlib.resources import files

    example = Path(str(files("memstream") / "examples" / "isabella.jsonl"))
    out = args.output or ":memory:"
    if out != ":memory:" and Path(out).exists():
        raise MemstreamError(f"{out} already exists; give the demo a new -o/--output path")
    from memstream.stream import import_items, read_jsonl

    with open_stream(out, args, create=True, chat=True) as (stream, chat):
        n = import_items(stream, rated(chat, read_jsonl(example)), progress=False).written
        owner = stream.owners()[0]
        now = stream.latest_time(owner)
        print(f"Built a stream of {n} memories for {owner} from {example.name} "
              f"(embedder {stream.embedder.name}, chat model {chat.name}).\n")
        for query in ("Who is coming to the Valentine's Day party?", "What does Isabella do at breakfast?"):
            print(f"Query: {query}")
            for r in stream.retrieve(owner, query, now=now, k=5, touch=False):
                print(f"  {r.rank}. total {r.score:.2f} = recency {r.recency:.2f} + importance "
                      f"{r.importance:.2f} + relevance {r.relevance:.2f}   [{r.memory.kind}, imp "
                      f"{r.memory.importance}] {short(r.memory.text, 60)}")
            print()
    print("With the paper's equal weights, recent and important memories can outrank relevant ones;\n"
          "compare: memstream demo -o demo.db && memstream recall demo.db --agent "
          "'Isabella Rodriguez' --query 'breakfast' --weights rec=0.5,imp=0.5,rel=2 --no-touch")
    return 0

