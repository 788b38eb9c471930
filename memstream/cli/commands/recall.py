"""``memstream recall``: an agent's top memories for a query, with each component of their score."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime

from memstream.cli.flags import agent_flag, cutoff_flag, json_flag, model_flags, parse_time_arg
from memstream.cli.opening import no_touch_reason, open_stream
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.cli.parser import warn
from memstream.cli.text import short
from memstream.cli.weights import parse_weights, weight_flags


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
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
    return {"recall": cmd_recall}


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


def _span_text(query: str, now: datetime) -> str:
    from memstream.stream import time_scope

    scope = time_scope(query, now)
    if scope is None:
        return "none (the time weight changes nothing)"
    return f"{scope.start.isoformat()} .. {scope.end.isoformat()} ({scope.phrase!r})"

