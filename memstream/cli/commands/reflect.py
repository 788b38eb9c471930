"""``memstream reflect`` and ``memstream tree``: one reflection, and the citation tree under one."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from memstream.cli.flags import agent_flag, json_flag, model_flags, parse_time_arg, positive_int
from memstream.cli.opening import open_stream, refuse_run_stream
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.cli.text import short


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("reflect", help="run one reflection and print its questions, insights and citations")
    p.add_argument("stream")
    agent_flag(p, help="the agent who reflects")
    p.add_argument("--at", help="ISO time with zone (default: the agent's latest time)")
    json_flag(p, "the questions, insights and citations")
    model_flags(p)

    p = sub.add_parser("tree", help="print the citation tree under a reflection")
    p.add_argument("stream")
    agent_flag(p, help="the agent the reflection belongs to")
    p.add_argument("--memory", type=positive_int, required=True)
    return {"reflect": cmd_reflect, "tree": cmd_tree}


def cmd_reflect(args: argparse.Namespace) -> int:
    from memstream.reflection import reflect

    json_out = check_json_output(args.json, [args.stream])
    refuse_run_stream(args.stream)  # insights written into a run's stream would be lost on its resume
    with open_stream(args.stream, args, create=False, chat=True) as (stream, chat):
        now = parse_time_arg(args.at, "--at") or stream.latest_time(args.agent)
        result = reflect(stream, args.agent, now, chat=chat)
    if json_out == STDOUT:
        write_json(json_out, result.to_dict())
        return 0
    print(f"{args.agent} reflects at {now.isoformat()}")
    for i, q in enumerate(result.questions, 1):
        print(f"Q{i}. {q}")
        for ins in (x for x in result.insights if x.question == q):
            print(f"    [{ins.memory_id}] {ins.text}  (cites {', '.join(map(str, ins.cites))}; depth {ins.depth})")
        for d in (x for x in result.dropped if x.question == q):
            print(f"    dropped: {short(d.text, 50)}  ({d.reason})")
    for reason in result.skipped:
        print(f"skipped: {reason}")
    write_json(json_out, result.to_dict())
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    from memstream.reflection import citation_tree

    with open_stream(args.stream, args, create=False, readonly=True) as (stream, _):
        print("\n".join(citation_tree(stream, args.agent, args.memory).lines()))
    return 0

