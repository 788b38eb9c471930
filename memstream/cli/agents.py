"""Agent commands: reflect, tree, plan, and the simulation's run, replay and interview."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from memstream.cli.common import (
    STDOUT,
    WeightSpec,
    agent_flag,
    check_json_output,
    cutoff_flag,
    endpoint_flags,
    gate_flag,
    json_flag,
    model_flags,
    open_stream,
    parse_time_arg,
    parse_weights,
    positive_int,
    refuse_run_stream,
    short,
    weight_flags,
    write_json,
)
from memstream.errors import MemstreamError
from memstream.files import problem
from memstream.timeutil import parse_time


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this group's subcommands to ``sub``; return their handlers by name."""
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

    p = sub.add_parser("plan", help="make a day plan from an identity file and print its decomposition")
    p.add_argument("stream")
    agent_flag(p, help="the agent who plans (the identity file's name)")
    p.add_argument("--identity", required=True, help="JSON: name, age, traits, lifestyle, situation, ...")
    p.add_argument("--day", required=True, help="the day with its zone, e.g. 2023-02-13+00:00 or an ISO time")
    p.add_argument("--decompose-all", action="store_true", help="decompose every waking block (default: the first)")
    json_flag(p, "the plan")
    model_flags(p)

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
    p.add_argument("--step-seconds", type=positive_int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-calls", type=positive_int,
                   help="stop after this many model calls in this invocation; checkpointed, resume to go on")
    p.add_argument("--out", help="run directory (default runs/<start>-<agents>)")
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    p.add_argument("--llm", help="chat model: offline (default) or openai:MODEL")
    endpoint_flags(p)
    p.add_argument("--embedder", help="minilm (default), wordllama, hash or openai:MODEL")
    weight_flags(p, keep=True)
    gate_flag(p, default=None, what="every agent's stream (a model must be the run's --llm: its requests join the "
              "step's batches)", shown="offline")
    p.add_argument("--no-critic", dest="critic", action="store_false", default=None,
                   help="no critic in front of reflection insights (the gate stays)")

    p = sub.add_parser("whisper", help="put a memory in an agent's mind in a run (the paper's inner voice)")
    p.add_argument("run")
    agent_flag(p, help="the agent who hears it")
    p.add_argument("text")
    p.add_argument("--at", help="ISO time with zone (default: where the run stands; a running run: its next step)")

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

    p = sub.add_parser("interview", help="ask an agent of a run a question, a conversation (no question: "
                       "one per line on stdin) or a battery")
    p.add_argument("run")
    agent_flag(p, help="the agent asked")
    p.add_argument("question", nargs="?")
    p.add_argument("--questions", metavar="FILE", help="a battery (YAML/JSON, categories of questions); "
                   "'bundled' for the paper's five categories")
    json_flag(p, "the answers")
    p.add_argument("--remember", action="store_true", help="the agent keeps the interview in its stream (as a "
                   "whisper the run carries); by default an interview leaves the agent as it was")
    cutoff_flag(p)
    # the paper's score, and the span a question names ("yesterday")
    weight_flags(p, WeightSpec(defaults={"rec": 1.0, "imp": 1.0, "rel": 1.0, "time": 1.0}, by_position={"time": 0.0}))
    endpoint_flags(p)

    return {"reflect": cmd_reflect, "tree": cmd_tree, "plan": cmd_plan, "run": cmd_run, "whisper": cmd_whisper,
            "replay": cmd_replay, "places": cmd_places,
            "interview": cmd_interview}


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


def cmd_run(args: argparse.Namespace) -> int:
    from memstream.sim import RunDir, RunFiles, resume_run

    if args.hours is not None and args.hours <= 0:
        raise MemstreamError(f"--hours must be positive, got {args.hours:g}")
    modes = [flag for flag, given in (("--resume", args.resume), ("--fork", args.fork), ("--scenario", args.scenario))
             if given]
    if len(modes) > 1:
        raise MemstreamError(f"{' and '.join(modes)} cannot be combined; choose one")
    ablate = [a.strip() for a in args.ablate.split(",") if a.strip()] if args.ablate is not None else None
    if args.resume:
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


def _settings(args: argparse.Namespace, ablate: list[str] | None) -> dict:
    """The run settings given on the command line (those not given are left out)."""
    given = {"hours": args.hours, "llm": args.llm, "timeout": args.timeout, "concurrency": args.concurrency,
             "max_calls": args.max_calls, "ablate": ablate, "keep_every": args.keep_every,
             "gate": args.gate, "critic": args.critic,
             "weights": parse_weights(args) if args.weights is not None or args.decay is not None else None}
    return {k: v for k, v in given.items() if v is not None}


def _new_run(args: argparse.Namespace, ablate: list[str] | None):  # RunResult, imported lazily
    from pydantic import ValidationError

    from memstream.sim import DEFAULT_HOURS, DEFAULT_START, RunConfig, load_scenario, scenario_run, start_run

    settings = _settings(args, ablate) | {"step_seconds": args.step_seconds, "embedder": args.embedder or "minilm"}
    try:
        if args.scenario:
            if args.town or args.start:
                raise MemstreamError("--scenario sets the town and the start; drop --town/--start")
            scenario = load_scenario(args.scenario)
            out = Path(args.out or f"runs/{scenario.name}")
            settings |= {"seed": args.seed} | ({"agents": args.agents} if args.agents else {})
            return scenario_run(scenario, out, **settings)
        start = parse_time_arg(args.start, "--start") or DEFAULT_START
        config = RunConfig(town=args.town, agents=args.agents, start=start, seed=args.seed,
                           **({"hours": DEFAULT_HOURS} | settings))
    except ValidationError as e:
        raise MemstreamError(f"bad run setting: {problem(e)}") from None
    out = Path(args.out or f"runs/{start:%Y%m%d-%H%M}-{args.agents or 'town'}")
    return start_run(config, out)


def _fork(args: argparse.Namespace, ablate: list[str] | None):  # RunResult, imported lazily
    from memstream.sim import fork_run

    source, _, at = args.fork.partition("@")
    if not args.out:
        raise MemstreamError("--fork needs --out NEW: a fork never writes into the run it comes from")
    fixed = [flag for flag, given in (("--town", args.town), ("--agents", args.agents), ("--start", args.start),
                                      ("--embedder", args.embedder)) if given]
    if fixed:
        raise MemstreamError(f"a fork keeps its source's {', '.join(fixed)}; start a new run to change them")
    return fork_run(Path(source), Path(args.out), at=parse_time_arg(at, "--fork @TIME") if at else None,
                    **_settings(args, ablate))


def cmd_whisper(args: argparse.Namespace) -> int:
    from memstream.sim import whisper

    w, running = whisper(Path(args.run), args.agent, args.text, parse_time_arg(args.at, "--at"))
    heard = (f"the running run (pid {running}) hears it then" if running
             else "the run carries it (resume or fork it to go on)")
    print(f"whisper {w.id} to {w.agent} at {w.at:%Y-%m-%d %H:%M}: {heard}")
    return 0


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


def cmd_interview(args: argparse.Namespace) -> int:
    from memstream.models import make_chat_model, run_direct
    from memstream.sim import Answer, RunDir, battery_stage, interview_stage, load_battery, mark_repeats, whisper

    weights = parse_weights(args)
    run = RunDir.open(args.run)
    config = run.config
    resident = next((r for r in run.town.residents if r.name == args.agent), None)
    if resident is None:
        raise MemstreamError(f"unknown agent {args.agent!r} in {run.path}")
    if args.question and args.questions:
        raise MemstreamError("give a question or --questions FILE, not both")
    battery = load_battery(None if args.questions == "bundled" else args.questions) if args.questions else None
    json_out = check_json_output(args.json, [run.path] + ([args.questions] if battery else []))
    show = _print_answer if json_out != STDOUT else lambda a: None  # JSON on stdout is all that is printed
    chat = run.call_cache(make_chat_model(config.llm, timeout=args.timeout or config.timeout,
                                          concurrency=args.concurrency or config.concurrency))
    answers: list[Answer] = []
    with run:
        stream = run.stream
        now = stream.latest_time(args.agent)
        if battery:
            answers = run_direct(battery_stage(stream, [resident], battery, {args.agent: now}, k=args.k), chat)
        else:
            questions = [args.question] if args.question else _asked_lines()
            history: list[tuple[str, str]] = []
            for question in questions:
                answer, shown = run_direct(interview_stage(stream, resident, question, now, k=args.k,
                                                           weights=weights, history=history), chat)
                answers.append(Answer(args.agent, "", question, answer, [m.id for m in shown]))
                show(answers[-1])
                history.append((question, answer or ""))
    chat.close()
    mark_repeats(answers)
    if battery and json_out != STDOUT:
        for a in answers:
            print(f"[{a.category}] {a.question}")
            show(a)
    repeated = sum(a.repeats for a in answers)
    if repeated and json_out != STDOUT:
        print(f"{repeated} of {len(answers)} answers repeat an answer to another question")
    write_json(json_out, [a.to_dict() for a in answers])
    if args.remember:
        for a in answers:
            whisper(run.path, args.agent, f"{args.agent} was interviewed. Asked: {a.question} {args.agent} answered: "
                    f"{a.answer or '(nothing)'}")
        if json_out != STDOUT:
            print(f"{args.agent} will remember the interview: the run carries it")
    return 0


def _asked_lines() -> Iterator[str]:
    """Questions typed one per line, each answered before the next, until an empty line, "quit" or the
    end of input."""
    while True:
        if sys.stdin.isatty():
            print("you: ", end="", flush=True)
        line = sys.stdin.readline()
        if not line.strip() or line.strip().lower() in ("quit", "exit"):
            return
        yield line.strip()


def _print_answer(a) -> None:  # an interview Answer, imported lazily
    ids = ", ".join(map(str, a.memory_ids)) or "none"
    print(f"{a.agent}: {a.answer or '(no usable answer from the model)'}\n  (shown memories {ids})")
