"""``memstream plan``: a day plan from an identity file, and its decomposition."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import datetime

from memstream.cli.flags import agent_flag, json_flag, model_flags
from memstream.cli.opening import open_stream, refuse_run_stream
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.errors import MemstreamError
from memstream.timeutil import parse_time


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("plan", help="make a day plan from an identity file and print its decomposition")
    p.add_argument("stream")
    agent_flag(p, help="the agent who plans (the identity file's name)")
    p.add_argument("--identity", required=True, help="JSON: name, age, traits, lifestyle, situation, ...")
    p.add_argument("--day", required=True, help="the day with its zone, e.g. 2023-02-13+00:00 or an ISO time")
    p.add_argument("--decompose-all", action="store_true", help="decompose every waking block (default: the first)")
    json_flag(p, "the plan")
    model_flags(p)
    return {"plan": cmd_plan}


def _day(text: str) -> datetime:
    """A day with its zone: ``2023-02-13+01:00`` (midnight there) or any ISO time with a zone."""
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})([+-]\d{2}:\d{2}|Z)", text.strip())
    if m:
        return parse_time(f"{m.group(1)}T00:00:00{m.group(2)}", "--day")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        raise MemstreamError(f"--day {text} has no time zone; write e.g. {text.strip()}+00:00")
    return parse_time(text, "--day")


def cmd_plan(args: argparse.Namespace) -> int:
    from memstream.planning import SLEEPING, decompose, load_identity, plan_day

    identity = load_identity(args.identity)
    if identity.name != args.agent:
        raise MemstreamError(f"--identity {args.identity} describes {identity.name!r}, not --agent {args.agent!r}")
    day = _day(args.day)
    json_out = check_json_output(args.json, [args.stream, args.identity])
    refuse_run_stream(args.stream)  # a plan written into a run's stream would be lost on its resume
    with open_stream(args.stream, args, create=True, chat=True) as (stream, chat):
        plan = plan_day(stream, identity, day, chat=chat)
        waking = [b for b in plan.blocks if b.activity != SLEEPING]
        for block in waking if args.decompose_all else waking[:1]:
            decompose(stream, identity, plan, block.start, chat=chat)
    if json_out == STDOUT:
        write_json(json_out, plan.to_dict())
        return 0
    print(plan.summary())
    for block in plan.blocks:
        print(f"  {block.start:%H:%M}-{block.end:%H:%M}  {block.activity}  @ {block.location}")
        for a in block.actions:
            print(f"      {a.start:%H:%M} +{a.minutes:>2} min  {a.activity}  @ {a.location}")
    write_json(json_out, plan.to_dict())
    return 0

