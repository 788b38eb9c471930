"""``memstream measure``: what emerged in runs (diffusion, network, attendance, interviews)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from memstream.cli.flags import cutoff_flag, endpoint_flags, json_flag
from memstream.cli.outputs import STDOUT, check_image_output, check_json_output, write_json
from memstream.timeutil import parse_time

if TYPE_CHECKING:
    from memstream.models import ChatModel
    from memstream.sim import Attendance, Diffusion, InterviewAnswer, Network, RunDir


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("measure", help="measure what emerged in runs: diffusion, network, attendance, interviews")
    measures = p.add_subparsers(dest="measure", required=True, parser_class=type(p))
    for name, text in (("diffusion", "the share of agents who know a fact, hour by hour"),
                       ("network", "who knows whom, at the start and the end"),
                       ("attendance", "who was at a place during a window, among those who knew"),
                       ("interviews", "a battery of questions to every agent, scored by a judge model if given")):
        q = measures.add_parser(name, help=text)
        q.add_argument("runs", nargs="+", metavar="RUN", help="run directories")
        json_flag(q)
        q.add_argument("--plot", metavar="FILE", help="draw the results (.png or .svg)")
        if name == "diffusion":
            q.add_argument("--fact", required=True, help="a phrase; a memory mentions it if it has all its words (an "
                           "agent knows it if its memory, asked on it, gives such a memory back)")
        if name in ("diffusion", "network"):
            q.add_argument("--by-hour", action="store_true",
                           help="also print the count (knowers, or pairs and density) at every simulated hour")
            q.add_argument("--llm", help="also ask every agent (the paper's way) with this model, e.g. offline or "
                           "openai:MODEL; answers are checked against the memories")
        if name == "interviews":
            q.add_argument("--battery", help="a battery file (default: the paper's five categories)")
            q.add_argument("--llm", help="the agents' model (default: the run's)")
            q.add_argument("--judge", help="score each answer with this model (offline or openai:MODEL)")
            cutoff_flag(q, help="memories each answer draws on")
        if name != "attendance":
            endpoint_flags(q)
        if name == "attendance":
            q.add_argument("--place", required=True, help="a building of the town")
            q.add_argument("--from", dest="from_", required=True, metavar="TIME", help="ISO time with zone")
            q.add_argument("--to", required=True, metavar="TIME", help="ISO time with zone")
            q.add_argument("--invited-fact", help="count who knew this fact before --from")
    return {"measure": cmd_measure}


def cmd_measure(args: argparse.Namespace) -> int:
    from memstream import plots
    from memstream.sim import RunDir, measures

    plot = check_image_output(args.plot, "--plot", args.runs) if args.plot else None
    json_out = check_json_output(args.json, args.runs)
    battery: dict[str, list[str]] = {}  # the questions of measure interviews; no other measure asks any
    if args.measure == "interviews":
        from memstream.sim import load_battery

        battery = load_battery(args.battery)
    diffusions: list[Diffusion] = []
    networks: list[Network] = []
    attendances: list[Attendance] = []
    answers: list[InterviewAnswer] = []  # one object per answer, as the schema
    lines: list[str] = []  # a line per run, said once every run is measured
    with ExitStack() as stack:
        for path in args.runs:
            run = stack.enter_context(RunDir.open(path))
            if args.measure == "diffusion":
                spread = measures.diffusion(run, args.fact)
                if args.llm:
                    spread["by_interview"] = measures.diffusion_by_interview(run, args.fact, _model(args, run))
                diffusions.append(spread)
                lines.append(_diffusion_line(spread))
                if args.by_hour:
                    lines += [f"  {h['time']}: {h['knowers']} knew" for h in spread["by_hour"]]
            elif args.measure == "network":
                known = measures.network(run)
                if args.llm:
                    known["by_interview"] = measures.network_by_interview(run, _model(args, run))
                networks.append(known)
                lines.append(_network_line(known))
                if args.by_hour:
                    lines += [f"  {h['time']}: {h['pairs']} pairs, density {h['density']:.3f}"
                              for h in known["by_hour"]]
            elif args.measure == "attendance":
                start, end = parse_time(args.from_, "--from"), parse_time(args.to, "--to")  # required flags
                came = measures.attendance(run, args.place, start, end, args.invited_fact)
                attendances.append(came)
                lines.append(_attendance_line(came))
            else:
                judge = _model(args, run, args.judge) if args.judge else None
                asked = measures.interviews(run, battery, _model(args, run), judge, k=args.k)
                answers += asked
                lines.append(_interviews_line(str(run.path), asked))
    if json_out != STDOUT:
        for line in lines:
            print(line)
    measured: dict[str, Sequence[object]] = {"diffusion": diffusions, "network": networks,
                                             "attendance": attendances, "interviews": answers}
    results = measured[args.measure]
    write_json(json_out, results[0] if len(results) == 1 else results)
    if plot:
        fig = {"diffusion": lambda: plots.diffusion(diffusions), "network": lambda: plots.network(networks[-1]),
               "attendance": lambda: plots.attendance(attendances),
               "interviews": lambda: plots.interview_scores(answers)}[args.measure]()
        said = f"wrote {plots.save(fig, plot)}"
        print(said, file=sys.stderr if json_out == STDOUT else sys.stdout)  # stdout holds only the JSON
    return 0


def _model(args: argparse.Namespace, run: RunDir, name: str | None = None) -> ChatModel:
    """A chat model for measuring (``name``, else --llm, else the run's), its answers cached with the run's."""
    from memstream.models import make_chat_model

    model = make_chat_model(name or args.llm or run.config.llm, timeout=args.timeout or run.config.timeout,
                            concurrency=args.concurrency or run.config.concurrency)
    return run.call_cache(model)


def _diffusion_line(r: Diffusion) -> str:
    first, asked = r["by_hour"][0], r.get("by_interview")
    return (f"{Path(r['run']).name}: {first['knowers']}/{r['agents']} ({first['share']:.0%}) knew at the start, "
            f"{r['by_hour'][-1]['knowers']}/{r['agents']} ({r['final_share']:.0%}) at the end"
            + (f" ({round(r['final_heard'] * r['agents'])} had heard it)" if r['final_heard'] > r['final_share']
               else "")
            + (f"; asked, {asked['knowers']} said they knew ({len(asked['hallucinated'])} without a memory "
               f"of it, {len(asked['missed'])} forgot)" if asked else ""))


def _network_line(r: Network) -> str:
    asked = r.get("by_interview")
    return (f"{Path(r['run']).name}: density {r['density_start']:.3f} at the start ({len(r['edges_start'])} pairs), "
            f"{r['density_end']:.3f} at the end ({len(r['edges_end'])} pairs)"
            + (f"; asked, {asked['density']:.3f} ({len(asked['hallucinated'])} claimed without a memory)"
               if asked else ""))


def _interviews_line(run: str, answers: list[InterviewAnswer]) -> str:
    scored = [(a, a["score"]) for a in answers if "score" in a]
    answered = sum(1 for a in answers if a.get("answer"))
    line = f"{Path(run).name}: {answered}/{len(answers)} questions answered"
    if scored:
        categories = dict.fromkeys(a["category"] for a, _ in scored)
        means = {c: sum(score for a, score in scored if a["category"] == c) / sum(
            a["category"] == c for a, _ in scored) for c in categories}
        flagged = sum(1 for a, _ in scored if a.get("hallucinated"))
        line += (f", mean score {sum(score for _, score in scored) / len(scored):.2f} of 5 ("
                 + ", ".join(f"{c} {m:.2f}" for c, m in means.items()) + f"), {flagged} flagged as unsupported")
    return line


def _attendance_line(r: Attendance) -> str:
    knew = f", {len(r['knew'])} knew, {r['attended_and_knew']} of them came" if "knew" in r else ""
    return (f"{Path(r['run']).name}: {len(r['present'])} at {r['place']}{knew}; {len(r['planned'])} had planned "
            f"to be there, {r['planned_and_came']} of them came: " + ", ".join(r["present"][:12]))
