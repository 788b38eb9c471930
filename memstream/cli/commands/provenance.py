"""``memstream provenance``: where a memory of a run came from, and everything downstream of it."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from memstream.cli.flags import agent_flag, json_flag, positive_int
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.cli.text import printable, short


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("provenance", help="where a memory of a run came from, and everything downstream of it")
    p.add_argument("run", help="a run directory")
    agent_flag(p, help="the agent whose memory it is")
    p.add_argument("--memory", type=positive_int, required=True, help="the memory's id")
    p.add_argument("--fact", help="follow this phrase through conversations from agent to agent (without it, only "
                   "the conversations the agent had afterwards are listed, as what may have carried it)")
    json_flag(p, "the memory, its sources and everything downstream")
    return {"provenance": cmd_provenance}


def cmd_provenance(args: argparse.Namespace) -> int:
    from memstream.sim import RunDir, provenance

    json_out = check_json_output(args.json, [args.run])
    with RunDir.open(args.run) as run:
        traced = provenance(run.stream, args.agent, args.memory, args.fact)
    found = {"run": str(run.path), **traced}
    if json_out == STDOUT:
        write_json(json_out, found)
        return 0
    m = traced["memory"]
    print(f"{m['owner']} #{m['id']} ({m['kind']}, {m['created_at'][:16]}): {printable(short(m['text'], 100))}")
    print(f"  came from: {m['source']}")
    for u in traced["upstream"]:
        print(f"  cites #{u['id']} ({u['kind']}): {printable(short(u['text'], 80))}  [{u['source']}]")
    downstream = traced["downstream"]
    print(f"downstream: {len(downstream)} memor{'y' if len(downstream) == 1 else 'ies'}"
          + (f" (following {traced['fact']!r})" if traced["fact"] else ""))
    for d in downstream:
        mark = " (possibly)" if d["possibly"] else ""
        print(f"  {d['owner']} #{d['id']} ({d['kind']}, {d['created_at'][11:16]}) {d['how']}{mark}: "
              f"{printable(short(d['text'], 70))}")
    write_json(json_out, found)
    return 0
