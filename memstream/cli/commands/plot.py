"""``memstream plot``: why memories are recalled, and the figures of sweeps and evals (PNG or SVG)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstream.cli.flags import agent_flag, cutoff_flag, output_flag, parse_time_arg, positive_int
from memstream.cli.outputs import check_image_output
from memstream.cli.parser import Parser
from memstream.cli.weights import parse_weights, weight_flags
from memstream.errors import MemstreamError
from memstream.files import read_json


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("plot", help="plot why memories are recalled (PNG or SVG)")
    plots = p.add_subparsers(dest="plot", required=True, parser_class=Parser)

    def plot_parser(name: str, text: str, *, agent: bool = True, query: bool = False) -> argparse.ArgumentParser:
        q = plots.add_parser(name, help=text)
        q.add_argument("src", help="a stream file or a run directory")
        agent_flag(q, required=agent, help="the agent whose memories are drawn" + ("" if agent else " (default: all)"))
        if query:
            q.add_argument("--query", required=True)
            cutoff_flag(q, help="memories drawn")
        q.add_argument("--at", help="ISO time with zone (default: the agent's latest time)")
        output_flag(q, required=True, help="the plot file, .png or .svg")
        return q

    weight_flags(plot_parser("components", "the top-k as stacked bars of weighted recency, importance, relevance",
                             query=True))
    plot_parser("decay", "recency against hours since access, memories on the curves").add_argument(
        "--decays", default="0.99,0.995,0.999")
    plot_parser("importance", "the distribution of importance by kind", agent=False)
    plot_parser("timeline", "memories over time by kind, reflections and the trigger sum")
    plot_parser("reflections", "the citation graph from reflections to observations").add_argument(
        "--memory", type=positive_int)
    plot_parser("weights", "how the top-k changes as the weights vary", query=True)
    sw = plots.add_parser("sweep", help="each measure per grid cell, with its 95%% interval, from memstream sweep")
    sw.add_argument("src", help="the sweep's folder")
    sw.add_argument("--against", metavar="COST", help="draw each measure against a cost per cell (a design, say): "
                    "calls_per_agent_step, tokens_per_agent_step, store_bytes_per_agent or context_tokens_per_recall")
    output_flag(sw, required=True, help="the plot file, .png or .svg")
    rec = plots.add_parser("recall", help="recall@k per retriever from memstream eval --json FILE output")
    rec.add_argument("eval_json")
    output_flag(rec, required=True, help="the plot file, .png or .svg")
    des = plots.add_parser("designs", help="a measure against context tokens per design, with the Pareto front, "
                           "per question type, from memstream eval --design --json FILE output")
    des.add_argument("eval_json")
    des.add_argument("--measure", choices=["evidence_verbatim", "evidence_reachable", "judge_accuracy", "f1"],
                     default="evidence_verbatim")
    output_flag(des, required=True, help="the plot file, .png or .svg")

    sc = plots.add_parser("scenarios", help="facts matched turn by turn per design, a panel per scenario, from "
                          "memstream eval scenarios --json FILE output")
    sc.add_argument("eval_json")
    output_flag(sc, required=True, help="the plot file, .png or .svg")
    return {"plot": cmd_plot}


def cmd_plot(args: argparse.Namespace) -> int:
    from memstream import plots
    from memstream.sim import RunFiles
    from memstream.stream import MemoryStream

    from_json = args.plot in ("recall", "designs", "scenarios")
    out = check_image_output(args.output, "-o", [args.eval_json] if from_json else [args.src])
    if args.plot == "sweep":
        cells = _rows(Path(args.src) / "results.json", "sweep results (results.json)", "measures",
                      f"{args.src}/results.json", "memstream sweep output", empty_ok=True)
        fig = plots.sweep_against(cells, args.against) if args.against else plots.sweep(cells)
        print(f"wrote {plots.save(fig, out)}")
        return 0
    if args.plot == "scenarios":
        rows = _rows(Path(args.eval_json), "eval scenarios --json output", "per_turn", str(Path(args.eval_json)),
                     "memstream eval scenarios --json output")
        print(f"wrote {plots.save(plots.scenarios(rows), out)}")
        return 0
    if args.plot == "designs":
        rows = _rows(Path(args.eval_json), "eval --design --json output", "design", str(Path(args.eval_json)),
                     "memstream eval --design --json output")
        print(f"wrote {plots.save(plots.designs(rows, measure=args.measure), out)}")
        return 0
    if args.plot == "recall":
        results = _rows(Path(args.eval_json), "eval --json output", "retriever", str(Path(args.eval_json)),
                        "memstream eval --json output", empty_ok=True)
        print(f"wrote {plots.save(plots.recall(results), out)}")
        return 0
    src = Path(args.src)
    path = RunFiles(src).stream if src.is_dir() else src
    with MemoryStream(path, create=False, readonly=True) as stream:
        agent = args.agent  # every plot drawn from a stream takes --agent (some need not be given it)
        if agent and not stream.has(agent):
            raise MemstreamError(f"unknown agent {agent!r} in {path} (it has no memories)")
        at = parse_time_arg(args.at, "--at")
        if args.plot == "components":
            fig = plots.components(stream, agent, args.query, k=args.k, at=at, weights=parse_weights(args))
        elif args.plot == "decay":
            try:
                decays = tuple(float(d) for d in args.decays.split(","))
            except ValueError:
                raise MemstreamError(f"--decays {args.decays!r} must be numbers like 0.99,0.995") from None
            fig = plots.decay(stream, agent, decays=decays, at=at)
        elif args.plot == "importance":
            fig = plots.importance(stream, agent)
        elif args.plot == "timeline":
            fig = plots.timeline(stream, agent)
        elif args.plot == "reflections":
            fig = plots.reflections(stream, agent, memory=args.memory)
        else:
            fig = plots.weights(stream, agent, args.query, k=args.k, at=at)
    print(f"wrote {plots.save(fig, out)}")
    return 0


def _rows(path: Path, read_as: str, key: str, shown: str, output: str, *, empty_ok: bool = False) -> list[Any]:
    """The rows of a JSON file another command wrote (a list of objects, each with ``key``), or one line
    saying the file at ``shown`` is not that ``output``."""
    rows = read_json(path, read_as)
    if not isinstance(rows, list) or (not rows and not empty_ok) or \
            not all(isinstance(r, dict) and key in r for r in rows):
        raise MemstreamError(f"{shown} is not {output}")
    return rows
