"""Stream commands: add, import, recall, inspect, and the small stream demo."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memstream.cli.common import (
    STDOUT,
    agent_flag,
    check_json_output,
    cutoff_flag,
    json_flag,
    model_flags,
    no_touch_reason,
    open_stream,
    output_flag,
    parse_time_arg,
    parse_weights,
    refuse_run_stream,
    short,
    warn,
    weight_flags,
    write_json,
)
from memstream.errors import MemstreamError
from memstream.stream import new_memory, rated


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this group's subcommands to ``sub``; return their handlers by name."""
    p = sub.add_parser("add", help="append one memory")
    p.add_argument("stream")
    agent_flag(p, help="the agent the memory belongs to")
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

    p = sub.add_parser("recall", help="retrieve an agent's top memories for a query")
    p.add_argument("stream")
    agent_flag(p)
    p.add_argument("--query", required=True)
    cutoff_flag(p, help="memories to recall")
    p.add_argument("--at", help="ISO time with zone (default: the agent's latest time)")
    p.add_argument("--no-touch", action="store_true", help="inspect without recording an access")
    json_flag(p, "the recalled memories")
    weight_flags(p)
    model_flags(p)

    p = sub.add_parser("inspect", help="summarise a stream, or list an agent's memories")
    p.add_argument("stream")
    agent_flag(p, required=False, help="list this agent's memories (default: summarise the stream)")
    json_flag(p, "the summary or the memories")

    p = sub.add_parser("check", help="verify a stream file: integrity, schema, triggers, vectors, citations")
    p.add_argument("stream")

    p = sub.add_parser("demo", help="build a small stream from the bundled example and recall")
    output_flag(p, required=False, help="the stream file to write (default: none, the stream lives in RAM)")
    model_flags(p)
    return {"add": cmd_add, "import": cmd_import, "recall": cmd_recall, "inspect": cmd_inspect, "check": cmd_check,
            "demo": cmd_demo}


def cmd_add(args: argparse.Namespace) -> int:
    try:
        cites = [int(c) for c in args.cites.split(",") if c.strip()]
    except ValueError:
        raise MemstreamError(f"--cites {args.cites!r} must be comma-separated ids, e.g. 3,7") from None
    at = parse_time_arg(args.at, "--at") or datetime.now(UTC)
    item = new_memory(owner=args.agent, text=args.text, kind=args.kind, created_at=at,  # checked before opening
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
    json_out = check_json_output(args.json, [args.stream])
    why = None if args.no_touch else no_touch_reason(args.stream)
    touch = not (args.no_touch or why)
    with open_stream(args.stream, args, create=False, readonly=not touch) as (stream, _):
        stream.require_owner(args.agent)  # a typed name that matches no one is a typo, not an empty recall
        now = parse_time_arg(args.at, "--at") or stream.latest_time(args.agent)
        recalls = stream.retrieve(args.agent, args.query, now=now, k=args.k, weights=weights, touch=touch)
    if why:  # never a write there: recall reads only, and says so in one line
        warn(f"{why}: recall records no access there (as with --no-touch)")
    if json_out == STDOUT:
        write_json(json_out, [r.as_row() for r in recalls])
        return 0
    timed = weights.time > 0
    print(f"{args.agent} recalls {args.query!r} at {now.isoformat()}  "
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
    write_json(json_out, [r.as_row() for r in recalls])
    return 0


def _span_text(query: str, now) -> str:  # datetime
    from memstream.stream import time_scope

    scope = time_scope(query, now)
    if scope is None:
        return "none (the time weight changes nothing)"
    return f"{scope.start.isoformat()} .. {scope.end.isoformat()} ({scope.phrase!r})"


def cmd_inspect(args: argparse.Namespace) -> int:
    from memstream.stream import MemoryStream

    json_out = check_json_output(args.json, [args.stream])
    with MemoryStream(args.stream, create=False, readonly=True) as stream:
        if args.agent:
            memories = stream.memories(args.agent)
            if json_out != STDOUT:
                for m in memories:
                    cites = f" cites {list(m.cites)}" if m.cites else ""
                    print(f"{m.id:>6} {m.created_at.isoformat()} {m.kind:<11} imp {m.importance:>2}"
                          f"{cites}  {short(m.text, 70)}")
            write_json(json_out, [m.to_dict() for m in memories])
            return 0
        summary = {
            "path": stream.path, "embedder": stream.embedder.name, "dim": stream.embedder.dim,
            "memories": stream.count(),
            "owners": {o: stream.count(o) for o in stream.owners()},
        }
    if json_out == STDOUT:
        write_json(json_out, summary)
        return 0
    print(f"{summary['path']}: {summary['memories']} memories, embedder {summary['embedder']} "
          f"({summary['dim']}-d), {len(summary['owners'])} owner(s)")
    for owner, n in summary["owners"].items():
        print(f"  {owner}: {n}")
    write_json(json_out, summary)
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

