"""``memstream add`` and ``memstream import``: memories written into a stream, rated first where unrated."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memstream.cli.flags import agent_flag, model_flags, parse_time_arg
from memstream.cli.opening import open_stream, refuse_run_stream
from memstream.errors import MemstreamError
from memstream.stream import new_memory, rated


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
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
    return {"add": cmd_add, "import": cmd_import}


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

