"""Experiment commands: measure what emerged in runs (diffusion, network, attendance)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from memstream.cli.common import parse_time_arg
from memstream.errors import MemstreamError

MEASURES = ("diffusion", "network", "attendance")


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("measure", help="measure what emerged in runs: diffusion, network, attendance")
    measures = p.add_subparsers(dest="measure", required=True, parser_class=type(p))
    for name, text in (("diffusion", "the share of agents who know a fact, hour by hour"),
                       ("network", "who knows whom, at the start and the end"),
                       ("attendance", "who was at a place during a window, among those who knew")):
        q = measures.add_parser(name, help=text)
        q.add_argument("runs", nargs="+", metavar="RUN", help="run directories")
        q.add_argument("--json", dest="json_out", metavar="OUT", help="write the results as JSON")
        q.add_argument("--plot", metavar="OUT", help="draw the results (png or svg)")
        if name == "diffusion":
            q.add_argument("--fact", required=True, help="a phrase; a memory mentions it if it has all its words")
        if name == "attendance":
            q.add_argument("--place", required=True, help="a building of the town")
            q.add_argument("--from", dest="from_", required=True, metavar="TIME", help="ISO time with zone")
            q.add_argument("--to", required=True, metavar="TIME", help="ISO time with zone")
            q.add_argument("--invited-fact", help="count who knew this fact before --from")
    return {"measure": cmd_measure}


def cmd_measure(args: argparse.Namespace) -> int:
    from memstream import plots
    from memstream.sim import measures

    plot = plots.check_output(args.plot) if args.plot else None
    json_out = _writable(args.json_out) if args.json_out else None
    results: list[dict[str, Any]] = []
    with ExitStack() as stack:
        for path in args.runs:
            run = stack.enter_context(measures.open_run(path))
            if args.measure == "diffusion":
                results.append(measures.diffusion(run, args.fact))
            elif args.measure == "network":
                results.append(measures.network(run))
            else:
                start, end = parse_time_arg(args.from_, "--from"), parse_time_arg(args.to, "--to")
                results.append(measures.attendance(run, args.place, start, end, args.invited_fact))
    for r in results:
        print(_summary(args.measure, r))
    if json_out:
        json_out.write_text(json.dumps(results[0] if len(results) == 1 else results, indent=2))
        print(f"wrote {json_out}")
    if plot:
        fig = {"diffusion": lambda: plots.diffusion(results), "network": lambda: plots.network(results[-1]),
               "attendance": lambda: plots.attendance(results)}[args.measure]()
        print(f"wrote {plots.save(fig, plot)}")
    return 0


def _writable(path: str) -> Path:
    out = Path(path)
    if out.is_dir():
        raise MemstreamError(f"--json {out} is a folder; name a file")
    if not out.parent.is_dir():
        raise MemstreamError(f"--json {out}: the folder {out.parent} does not exist")
    return out


def _summary(measure: str, r: dict[str, Any]) -> str:
    name = Path(r["run"]).name
    if measure == "diffusion":
        first = r["by_hour"][0]
        return (f"{name}: {first['knowers']}/{r['agents']} ({first['share']:.0%}) knew at the start, "
                f"{r['by_hour'][-1]['knowers']}/{r['agents']} ({r['final_share']:.0%}) at the end")
    if measure == "network":
        return (f"{name}: density {r['density_start']:.3f} at the start ({len(r['edges_start'])} pairs), "
                f"{r['density_end']:.3f} at the end ({len(r['edges_end'])} pairs)")
    knew = f", {len(r['knew'])} knew, {r['attended_and_knew']} of them came" if "knew" in r else ""
    return f"{name}: {len(r['present'])} at {r['place']}{knew}: " + ", ".join(r["present"][:12])
