"""``memstream interview``: an agent of a run asked a question, a conversation or a battery."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memstream.cli.flags import agent_flag, cutoff_flag, endpoint_flags, json_flag
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.cli.weights import WeightSpec, parse_weights, weight_flags
from memstream.errors import MemstreamError
from memstream.sqlite import read_only_media

if TYPE_CHECKING:
    from memstream.sim import Answer


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
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
    return {"interview": cmd_interview}


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
    # An interview that leaves the agent as it was only reads: on read-only media its answers are not kept.
    reads_only = not args.remember and read_only_media(Path(run.files.calls))
    chat = run.call_cache(make_chat_model(config.llm, timeout=args.timeout or config.timeout,
                                          concurrency=args.concurrency or config.concurrency), read_only=reads_only)
    answers: list[Answer] = []
    with run:
        found = run.memory_at()  # what the agent recalls: the stream, or its design's context
        if found is None:
            raise MemstreamError(f"{run.path} holds no memory of {args.agent} to ask yet; run it for a simulated "
                                 "hour first")
        stands, stream = found
        now = min(stands, stream.latest_time(args.agent))
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


def _print_answer(a: Answer) -> None:
    ids = ", ".join(map(str, a.memory_ids)) or "none"
    print(f"{a.agent}: {a.answer or '(no usable answer from the model)'}\n  (shown memories {ids})")

