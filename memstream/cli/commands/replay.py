"""``memstream replay`` and ``memstream places``: a run's event log as a story, and the places an agent knows."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime

from memstream.cli.flags import agent_flag, json_flag, parse_time_arg
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.errors import MemstreamError


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("replay", help="print a run's event log as a story")
    p.add_argument("run")
    agent_flag(p, required=False, help="only this agent's events")
    p.add_argument("--from", dest="from_", metavar="TIME", help="ISO time with zone")
    p.add_argument("--to", metavar="TIME", help="ISO time with zone")

    p = sub.add_parser("places", help="list the places an agent of a run knows, as a tree (areas, buildings, rooms, "
                       "objects)")
    p.add_argument("run")
    agent_flag(p, help="the agent whose spatial memory is listed")
    json_flag(p, "the tree")
    return {"replay": cmd_replay, "places": cmd_places}


def cmd_replay(args: argparse.Namespace) -> int:
    from memstream.sim import RunDir

    run = RunDir.open(args.run)
    if args.agent and args.agent not in run.agents:
        raise MemstreamError(f"unknown agent {args.agent!r} in {run.path}")
    lo, hi = parse_time_arg(args.from_, "--from"), parse_time_arg(args.to, "--to")
    for e in run.records.events():
        at = datetime.fromisoformat(e["time"])
        if (lo and at < lo) or (hi and at > hi) or (args.agent and e["agent"] != args.agent):
            continue
        who = e["agent"] or "(the world)"
        said = f': "{e["utterance"]}"' if "utterance" in e else ""
        print(f"{at:%a %H:%M:%S}  {who}: {e['action']}{said}  [{e['location']}]")
    return 0


def cmd_places(args: argparse.Namespace) -> int:
    from memstream.sim import RunDir, measures, place_lines

    run = RunDir.open(args.run)
    json_out = check_json_output(args.json, [run.path])
    known = measures.places(run, args.agent)
    if json_out != STDOUT:
        print(f"{known['agent']} knows {known['known']} places at {known['at']}"
              + (" (spatial memory ablated: every place is open to its plans)" if known["spatial_ablated"] else ""))
        print("\n".join(place_lines(known["tree"])))
    if json_out is not None:
        write_json(json_out, known)
    return 0

