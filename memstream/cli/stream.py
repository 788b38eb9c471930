"""Stream commands: add, import, recall, inspect, and the small stream demo."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memstream.cli.common import (
    model_flags,
    no_touch_reason,
    open_stream,
    parse_time_arg,
    parse_weights,
    positive_int,
    printable,
    refuse_run_stream,
    short,
    weight_flags,
)
from memstream.errors import MemstreamError
from memstream.stream import new_memory, rated


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this group's subcommands to ``sub``; return their handlers by name."""
    p = sub.add_parser("add", help="append one memory")
    p.add_argument("stream")
    p.add_argument("--owner", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--kind", default="observation")
    p.add_argument("--at", help="ISO time with zone (default: now, UTC)")
    p.add_argument("--importance", type=int, help="1-10 (default: rated by the chat model)")
    p.add_argument("--cites", default="", help="comma-separated ids this memory derives from")
    model_flags(p)

    p = sub.add_parser("import", help="append memories from a JSON-lines file")
    p.add_argument("stream")
    p.add_argument("file")
    model_flags(p)

    p = sub.add_parser("recall", help="retrieve an owner's top memories for a query")
    p.add_argument("stream")
    p.add_argument("--owner", required=True)
    p.add_argument("--query", required=True)
    p.add_argument("-k", type=positive_int, default=10)
    p.add_argument("--at", help="ISO time with zone (default: the owner's latest time)")
    p.add_argument("--no-touch", action="store_true", help="inspect without recording an access")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    weight_flags(p)
    model_flags(p)

    p = sub.add_parser("inspect", help="summarise a stream, or list an owner's memories")
    p.add_argument("stream")
    p.add_argument("--owner")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("check", help="verify a stream file: integrity, schema, triggers, vectors, citations")
    p.add_argument("stream")

    p = sub.add_parser("demo", help="build a small stream from the bundled example and recall")
    p.add_argument("--out", default=":memory:", help="where to write the stream (default: RAM)")
    model_flags(p)
    return {"add": cmd_add, "import": cmd_import, "recall": cmd_recall, "inspect": cmd_inspect, "check": cmd_check,
            "demo": cmd_demo}


def cmd_add(args: argparse.Namespace) -> int:
    try:
        cites = [int(c) for c in args.cites.split(",") if c.strip()]
    except ValueError:
        raise MemstreamError(f"--cites {args.cites!r} must be comma-separated ids, e.g. 3,7") from None
    at = parse_time_arg(args.at, "--at") or datetime.now(UTC)
    item = new_memory(owner=args.owner, text=args.text, kind=args.kind, created_at=at,  # checked before opening
                      importance=args.importance, cites=tuple(cites))
    refuse_run_stream(args.stream)
    with open_stream(args.stream, args, create=True, chat=args.importance is None) as (stream, chat):
        memory = stream.extend(rated(chat, [item]))[0]
    print(f"added memory {memory.id} for {memory.owner} (importance {memory.importance})")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from memstream.stream import import_items, read_jsonl

    items = read_jsonl(Path(args.file))  # the whole file is checked before the stream is touched
    refuse_run_stream(args.stream)
    with open_stream(args.stream, args, create=True, chat=True) as (stream, chat):
        done = import_items(stream, rated(chat, items))
    print(f"imported {done.written} memories into {args.stream}"
          + (f"; {done.already_there} were already there" if done.already_there else ""))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    weights = parse_weights(args)
    why = None if args.no_touch else no_touch_reason(args.stream)
    touch = not (args.no_touch or why)
    with open_stream(args.stream, args, create=False, readonly=not touch) as (stream, _):
        now = parse_time_arg(args.at, "--at") or stream.latest_time(args.owner)
        recalls = stream.retrieve(args.owner, args.query, now=now, k=args.k, weights=weights, touch=touch)
    if why:  # never a write there: recall reads only, and says so in one line
        print(f"memstream: {printable(why)}: recall records no access there (as with --no-touch)", file=sys.stderr)
    if args.json:
        print(json.dumps([r.as_row() for r in recalls], indent=2))
        return 0
    timed = weights.time > 0
    print(f"{args.owner} recalls {args.query!r} at {now.isoformat()}  "
          f"(weights rec {weights.recency:g} imp {weights.importance:g} rel {weights.relevance:g}"
          + (f" time {weights.time:g}" if timed else "") + f", decay {weights.decay:g}/h)")
    if timed:
        print(f"  span named: {_span_text(args.query, now)}")
    print(f"{'rank':>4} {'total':>6} {'recency':>7} {'import.':>7} {'relev.':>7}" + (f" {'time':>4}" if timed else "")
          + f" {'id':>6}  {'kind':<11} text")
    for r in recalls:
        print(f"{r.rank:>4} {r.score:6.3f} {r.recency:7.3f} {r.importance:7.3f} {r.relevance:7.3f}"
              + (f" {r.time:4.0f}" if timed else "")
              + f" {r.memory.id:>6}  {r.memory.kind:<11} {short(r.memory.text, 70)}")
    return 0


def _span_text(query: str, now) -> str:  # noqa: ANN001 - datetime
    from memstream.stream import time_scope

    scope = time_scope(query, now)
    if scope is None:
        return "none (the time weight changes nothing)"
    return f"{scope.start.isoformat()} .. {scope.end.isoformat()} ({scope.phrase!r})"


def cmd_inspect(args: argparse.Namespace) -> int:
    from memstream.stream import MemoryStream

    with MemoryStream(args.stream, create=False, readonly=True) as stream:
        if args.owner:
            memories = stream.memories(args.owner)
            if args.json:
                print(json.dumps([m.to_dict() for m in memories], indent=2))
                return 0
            for m in memories:
                cites = f" cites {list(m.cites)}" if m.cites else ""
                print(f"{m.id:>6} {m.created_at.isoformat()} {m.kind:<11} imp {m.importance:>2}"
                      f"{cites}  {short(m.text, 70)}")
            return 0
        summary = {
            "path": stream.path, "embedder": stream.embedder.name, "dim": stream.embedder.dim,
            "memories": stream.count(),
            "owners": {o: stream.count(o) for o in stream.owners()},
        }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{summary['path']}: {summary['memories']} memories, embedder {summary['embedder']} "
          f"({summary['dim']}-d), {len(summary['owners'])} owner(s)")
    for owner, n in summary["owners"].items():
        print(f"  {owner}: {n}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 if the stream is sound, else 1 with one line per problem (it never changes the file)."""
    from memstream.stream import check_file

    problems = check_file(args.stream)
    for problem in problems:
        print(f"{args.stream}: {problem}")
    if not problems:
        print(f"{args.stream}: ok")
    return 1 if problems else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from importlib.resources import files

    example = Path(str(files("memstream") / "examples" / "isabella.jsonl"))
    if args.out != ":memory:" and Path(args.out).exists():
        raise MemstreamError(f"{args.out} already exists; give the demo a new --out path")
    from memstream.stream import import_items, read_jsonl

    with open_stream(args.out, args, create=True, chat=True) as (stream, chat):
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
          "compare: memstream demo --out demo.db && memstream recall demo.db --owner "
          "'Isabella Rodriguez' --query 'breakfast' --weights 0.5,0.5,2 --no-touch")
    return 0

