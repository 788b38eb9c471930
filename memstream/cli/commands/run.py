"""``memstream run`` and ``memstream whisper``: simulating a town (new, resumed, forked, a scenario), and a
memory put in an agent's mind in a run."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstream.cli.flags import (
    agent_flag,
    design_config_flag,
    design_settings,
    endpoint_flags,
    folder_path,
    gate_flag,
    parse_time_arg,
    positive_int,
)
from memstream.cli.text import short
from memstream.cli.weights import parse_weights, weight_flags
from memstream.errors import MemstreamError
from memstream.files import problem

if TYPE_CHECKING:
    from memstream.sim import RunResult


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("run", help="simulate a town of agents (the main job); writes a run directory")
    p.add_argument("--town", help="a town file (YAML or JSON; default: the bundled Smallville)")
    p.add_argument("--agents", type=positive_int, help="number of agents (default: the town's residents)")
    p.add_argument("--start", help="simulated start, ISO time with zone (default 2023-02-13T06:00:00-08:00)")
    p.add_argument("--hours", type=float, help="simulated hours to run (default 3; after the fork point with "
                   "--fork; the scenario's with --scenario)")
    p.add_argument("--scenario", help="a scenario: a bundled name (valentine) or a YAML/JSON file")
    p.add_argument("--fork", metavar="RUN[@TIME]", help="start from RUN's checkpoint at TIME (default: its latest), "
                   "with any changes given here (hours, weights, llm, ablate, gate)")
    p.add_argument("--ablate", metavar="MODULES", help="comma list of modules the agents go without: "
                   "observation, reflection, planning, spatial")
    p.add_argument("--keep-every", type=positive_int, help="keep a checkpoint (a fork point) every this many simulated "
                   "hours (default 12)")
    p.add_argument("--step-seconds", type=positive_int, help="simulated seconds per step (default 10)")
    p.add_argument("--seed", type=int, help="the run's seed (default 0)")
    p.add_argument("--max-calls", type=positive_int,
                   help="stop after this many model calls in this invocation; checkpointed, resume to go on")
    p.add_argument("--out", type=folder_path, help="run directory (default runs/<start>-<agents>)")
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    p.add_argument("--llm", help="chat model: offline (default) or openai:MODEL")
    endpoint_flags(p)
    p.add_argument("--embedder", help="minilm (default), wordllama, hash or openai:MODEL")
    weight_flags(p, keep=True)
    gate_flag(p, default=None, what="every agent's stream (a model must be the run's --llm: its requests join the "
              "step's batches)", shown="offline")
    p.add_argument("--no-critic", dest="critic", action="store_false", default=None,
                   help="no critic in front of reflection insights (the gate stays)")
    p.add_argument("--design", help="the agents' memory: stream (default: the town's own stream) or any memory "
                   "design (full, buffer-summary, vector, tiered, letta, profile, facts, recent: the floor), kept in "
                   "the run directory")
    design_config_flag(p)

    p = sub.add_parser("whisper", help="put a memory in an agent's mind in a run (the paper's inner voice)")
    p.add_argument("run")
    agent_flag(p, help="the agent who hears it")
    p.add_argument("text")
    p.add_argument("--at", help="ISO time with zone (default: where the run stands; a running run: its next step)")
    return {"run": cmd_run, "whisper": cmd_whisper}


def cmd_run(args: argparse.Namespace) -> int:
    from memstream.sim import RunDir, RunFiles, resume_run

    if args.hours is not None and args.hours <= 0:
        raise MemstreamError(f"--hours must be positive, got {args.hours:g}")
    modes = [flag for flag, given in (("--resume", args.resume), ("--fork", args.fork), ("--scenario", args.scenario))
             if given]
    if len(modes) > 1:
        raise MemstreamError(f"{' and '.join(modes)} cannot be combined; choose one")
    ablate = [a.strip() for a in args.ablate.split(",") if a.strip()] if args.ablate is not None else None
    if args.reconfigure:
        raise MemstreamError("a run keeps its design's settings for its whole life; drop --reconfigure (start a new "
                             "run with --design-config to try others)")
    if args.resume and (args.design is not None or args.design_config):
        raise MemstreamError(f"a run keeps the memory design it started with; drop --design/--design-config (fork it "
                             f"into another: memstream run --fork {args.resume} --design D --out NEW)")
    if args.resume:
        kept = [flag for flag, given in (("--seed", args.seed), ("--agents", args.agents),
                                         ("--embedder", args.embedder), ("--llm", args.llm),
                                         ("--step-seconds", args.step_seconds), ("--start", args.start),
                                         ("--town", args.town)) if given is not None]
        if kept:
            raise MemstreamError(f"--resume keeps the run's own settings; drop {kept[0]} (fork it to change them: "
                                 f"memstream run --fork {args.resume} --out NEW ...)")
        gate_given = args.gate is not None or args.critic is not None
        if args.weights is not None or args.decay is not None or ablate is not None or gate_given:
            raise MemstreamError("a run keeps the weights, ablations and gate it started with; fork it to change them: "
                                 f"memstream run --fork {args.resume} --out NEW ...")
        result = resume_run(Path(args.resume), hours=args.hours, timeout=args.timeout,
                            concurrency=args.concurrency, max_calls=args.max_calls)
    elif args.fork:
        result = _fork(args, ablate)
    else:
        result = _new_run(args, ablate)
    m = result.metrics
    if result.stopped == "endpoint-failing":
        raise MemstreamError(f"{m['endpoint_failing']}; the run stopped and was checkpointed at "
                             f"{result.sim_time:%Y-%m-%d %H:%M}; when the endpoint answers again, resume with "
                             f"memstream run --resume {result.out}")
    why = {"max-calls": "--max-calls", "interrupted": "Ctrl-C", "terminated": "SIGTERM"}.get(result.stopped)
    abandoned = m.get("stopped_mid_step")
    if abandoned:
        why = (f"{why} with a model call in flight, abandoned; the answers had are in the call cache and a "
               f"resume replays them from the checkpoint at {abandoned['resumes_from'][11:16]}")
    else:
        why = f"{why}; checkpointed there"
    print(f"{'finished' if result.stopped == 'finished' else f'stopped ({why})'} at "
          f"{result.sim_time:%Y-%m-%d %H:%M}: {m['agents']} agents, {m['sim_hours']:g} simulated hours in "
          f"{m['wall_s']:.1f} s ({m['agent_steps_per_s']:,.0f} agent-steps/s), {m['model_calls']} model calls "
          f"({m['calls_per_agent_step']:.4f} per agent-step), {m['memories']} memories")
    if m["model_failures"]:
        print(f"{m['model_failures']} model answers were lost (unusable or failed; the offline rules stood in): "
              + ", ".join(f"{p} {n}" for p, n in m["lost_by_purpose"].items()))
    gate = m.get("gate", {})
    if gate.get("blocked") or gate.get("failed") or gate.get("rejected"):
        print(f"the write gate ({gate['by']}) kept out {gate['blocked']} texts, the critic {gate['rejected']}, "
              f"{gate['failed']} unchecked (the check could not run); each with its source and reason in "
              f"{RunFiles(result.out).blocked}")
    print(f"run directory: {result.out}")
    run = RunDir.open(result.out)
    said = [e for e in run.records.events() if "utterance" in e][:4]
    if said:
        print("overheard:")
        for e in said:
            print(f"  {e['time'][11:16]} {e['agent']}: {short(e['utterance'], 90)}")
    if result.stopped != "finished":
        print(f"resume with:  memstream run --resume {result.out}")
    first, second = (run.town.residents * 2)[:2]
    print("inspect it:")
    print(f"  memstream replay {result.out} --agent '{first.name}'")
    print(f"  memstream interview {result.out} --agent '{second.name}' \"What are you working on?\"")
    print(f"  memstream recall {run.files.stream} --agent '{second.name}' --query 'plans' --no-touch")
    print(f"  memstream plot timeline {result.out} --agent '{first.name}' -o timeline.png")
    print(f"  memstream measure network {result.out} --plot network.png")
    return {"finished": 0, "max-calls": 0, "interrupted": 130, "terminated": 143}[result.stopped]


def _settings(args: argparse.Namespace, ablate: list[str] | None) -> dict[str, Any]:
    """The run settings given on the command line (those not given are left out)."""
    given = {"hours": args.hours, "llm": args.llm, "timeout": args.timeout, "concurrency": args.concurrency,
             "max_calls": args.max_calls, "ablate": ablate, "keep_every": args.keep_every,
             "gate": args.gate, "critic": args.critic,
             "weights": parse_weights(args) if args.weights is not None or args.decay is not None else None}
    return {k: v for k, v in given.items() if v is not None}


def _design(args: argparse.Namespace) -> dict[str, Any]:
    """The memory design a new run is given (``--design``, ``--design-config``), left out when not given."""
    given = {"design": args.design, "design_config": design_settings(args) or None}
    return {k: v for k, v in given.items() if v is not None}


def _new_run(args: argparse.Namespace, ablate: list[str] | None) -> RunResult:
    from pydantic import ValidationError

    from memstream.sim import DEFAULT_HOURS, DEFAULT_START, RunConfig, load_scenario, scenario_run, start_run

    defaults = RunConfig.model_fields
    settings = _settings(args, ablate) | {
        "step_seconds": defaults["step_seconds"].default if args.step_seconds is None else args.step_seconds,
        "embedder": args.embedder or "minilm"} | _design(args)
    seed = defaults["seed"].default if args.seed is None else args.seed
    try:
        if args.scenario:
            if args.town or args.start:
                raise MemstreamError("--scenario sets the town and the start; drop --town/--start")
            scenario = load_scenario(args.scenario)
            out = Path(args.out or f"runs/{scenario.name}")
            settings |= {"seed": seed} | ({"agents": args.agents} if args.agents else {})
            return scenario_run(scenario, out, **settings)
        start = parse_time_arg(args.start, "--start") or DEFAULT_START
        settings.setdefault("hours", DEFAULT_HOURS)
        config = RunConfig(town=args.town, agents=args.agents, start=start, seed=seed, **settings)
    except ValidationError as e:
        raise MemstreamError(f"bad run setting: {problem(e)}") from None
    out = Path(args.out or f"runs/{start:%Y%m%d-%H%M}-{args.agents or 'town'}")
    return start_run(config, out)


def _fork(args: argparse.Namespace, ablate: list[str] | None) -> RunResult:
    from memstream.sim import fork_run

    source, _, at = args.fork.partition("@")
    if not args.out:
        raise MemstreamError("--fork needs --out NEW: a fork never writes into the run it comes from")
    fixed = [flag for flag, given in (("--town", args.town), ("--agents", args.agents), ("--start", args.start),
                                      ("--embedder", args.embedder), ("--seed", args.seed),
                                      ("--step-seconds", args.step_seconds)) if given is not None]
    if fixed:
        raise MemstreamError(f"a fork keeps its source's {', '.join(fixed)}; start a new run to change them")
    return fork_run(Path(source), Path(args.out), at=parse_time_arg(at, "--fork @TIME") if at else None,
                    **_settings(args, ablate) | _design(args))


def cmd_whisper(args: argparse.Namespace) -> int:
    from memstream.sim import whisper

    w, running = whisper(Path(args.run), args.agent, args.text, parse_time_arg(args.at, "--at"))
    heard = (f"the running run (pid {running}) hears it then" if running
             else "the run carries it (resume or fork it to go on)")
    print(f"whisper {w.id} to {w.agent} at {w.at:%Y-%m-%d %H:%M}: {heard}")
    return 0

