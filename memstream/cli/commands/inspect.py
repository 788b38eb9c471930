"""``memstream inspect`` and ``memstream check``: what a stream holds, and whether its file is sound."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from memstream.cli.flags import agent_flag, json_flag
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.cli.text import short


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("inspect", help="summarise a stream, or list an agent's memories")
    p.add_argument("stream")
    agent_flag(p, required=False, help="list this agent's memories (default: summarise the stream)")
    json_flag(p, "the summary or the memories")

    p = sub.add_parser("check", help="verify a stream file: integrity, schema, triggers, vectors, citations")
    p.add_argument("stream")
    return {"inspect": cmd_inspect, "check": cmd_check}


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
        owners = {o: stream.count(o) for o in stream.owners()}
        summary = {
            "path": stream.path, "embedder": stream.embedder.name, "dim": stream.embedder.dim,
            "memories": stream.count(),
            "owners": owners,
        }
    if json_out == STDOUT:
        write_json(json_out, summary)
        return 0
    print(f"{summary['path']}: {summary['memories']} memories, embedder {summary['embedder']} "
          f"({summary['dim']}-d), {len(owners)} owner(s)")
    for owner, n in owners.items():
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

