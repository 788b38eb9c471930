"""The ``memstream`` command line. Every user mistake ends in one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

from memstream.errors import MemstreamError

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _models(p: argparse.ArgumentParser) -> None:
    p.add_argument("--llm", help="chat model: offline (default) or openai:MODEL [env MEMSTREAM_LLM]")
    p.add_argument("--embedder", help="minilm (default), wordllama, hash or openai:MODEL "
                   "[env MEMSTREAM_EMBEDDER]; a stream reopens with its own by default")


def _weights(p: argparse.ArgumentParser) -> None:
    p.add_argument("--weights", metavar="REC,IMP,REL", default="1,1,1",
                   help="weights of recency, importance and relevance (default 1,1,1)")
    p.add_argument("--decay", type=float, default=0.995, help="recency decay per hour (0.995)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="memstream", description="The Generative Agents memory stream, measured.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("add", help="append one memory")
    p.add_argument("stream")
    p.add_argument("--owner", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--kind", default="observation")
    p.add_argument("--at", help="ISO time with zone (default: now, UTC)")
    p.add_argument("--importance", type=int, help="1-10 (default: rated by the chat model)")
    p.add_argument("--cites", default="", help="comma-separated ids this memory derives from")
    _models(p)

    p = sub.add_parser("import", help="append memories from a JSON-lines file")
    p.add_argument("stream")
    p.add_argument("file")
    _models(p)

    p = sub.add_parser("recall", help="retrieve an owner's top memories for a query")
    p.add_argument("stream")
    p.add_argument("--owner", required=True)
    p.add_argument("--query", required=True)
    p.add_argument("-k", type=_positive_int, default=10)
    p.add_argument("--at", help="ISO time with zone (default: the owner's latest time)")
    p.add_argument("--no-touch", action="store_true", help="inspect without recording an access")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    _weights(p)
    _models(p)

    p = sub.add_parser("inspect", help="summarise a stream, or list an owner's memories")
    p.add_argument("stream")
    p.add_argument("--owner")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("reflect", help="run one reflection and print its questions, insights and citations")
    p.add_argument("stream")
    p.add_argument("--owner", required=True)
    p.add_argument("--at", help="ISO time with zone (default: the owner's latest time)")
    p.add_argument("--json", action="store_true")
    _models(p)

    p = sub.add_parser("tree", help="print the citation tree under a reflection")
    p.add_argument("stream")
    p.add_argument("--owner", required=True)
    p.add_argument("--memory", type=_positive_int, required=True)

    p = sub.add_parser("plan", help="make a day plan from an identity file and print its decomposition")
    p.add_argument("stream")
    p.add_argument("--owner", required=True)
    p.add_argument("--identity", required=True, help="JSON: name, age, traits, lifestyle, situation, ...")
    p.add_argument("--day", required=True, help="the day with its zone, e.g. 2023-02-13+00:00 or an ISO time")
    p.add_argument("--decompose-all", action="store_true", help="decompose every waking block (default: the first)")
    p.add_argument("--json", action="store_true")
    _models(p)

    p = sub.add_parser("run", help="simulate a town of agents (the main job); writes a run directory")
    p.add_argument("--town", help="a town file (YAML or JSON; default: the bundled Smallville)")
    p.add_argument("--agents", type=_positive_int, help="number of agents (default: the town's residents)")
    p.add_argument("--start", default="2023-02-13T06:00:00-08:00", help="simulated start, ISO time with zone")
    p.add_argument("--hours", type=float, help="simulated hours to run (default 3)")
    p.add_argument("--step-seconds", type=_positive_int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-calls", type=_positive_int, help="stop after this many model calls (resumable)")
    p.add_argument("--out", help="run directory (default runs/<start>-<agents>)")
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    p.add_argument("--llm", help="chat model: offline (default) or openai:MODEL")
    p.add_argument("--embedder", help="minilm (default), wordllama, hash or openai:MODEL")

    p = sub.add_parser("replay", help="print a run's event log as a story")
    p.add_argument("run")
    p.add_argument("--agent")
    p.add_argument("--from", dest="from_", metavar="TIME", help="ISO time with zone")
    p.add_argument("--to", metavar="TIME", help="ISO time with zone")

    p = sub.add_parser("interview", help="ask an agent of a finished run a question")
    p.add_argument("run")
    p.add_argument("--agent", required=True)
    p.add_argument("question")
    p.add_argument("-k", type=_positive_int, default=10, help="memories to draw on")

    p = sub.add_parser("plot", help="plot why memories are recalled (PNG or SVG)")
    plots = p.add_subparsers(dest="plot", required=True, parser_class=_Parser)

    def plot_parser(name: str, text: str, *, agent: bool = True, query: bool = False) -> argparse.ArgumentParser:
        q = plots.add_parser(name, help=text)
        q.add_argument("src", help="a stream file or a run directory")
        if agent:
            q.add_argument("--agent", required=True)
        if query:
            q.add_argument("--query", required=True)
            q.add_argument("-k", type=_positive_int, default=10)
        q.add_argument("--at", help="ISO time with zone (default: the agent's latest time)")
        q.add_argument("-o", "--out", required=True, help="output file, .png or .svg")
        return q

    plot_parser("components", "the top-k as stacked bars of weighted recency, importance, relevance", query=True)
    plot_parser("decay", "recency against hours since access, memories on the curves").add_argument(
        "--decays", default="0.99,0.995,0.999")
    imp = plots.add_parser("importance", help="the distribution of importance by kind")
    imp.add_argument("src")
    imp.add_argument("--agent")
    imp.add_argument("-o", "--out", required=True)
    plot_parser("timeline", "memories over time by kind, reflections and the trigger sum")
    plot_parser("reflections", "the citation graph from reflections to observations").add_argument(
        "--memory", type=_positive_int)
    plot_parser("weights", "how the top-k changes as the weights vary", query=True)
    rec = plots.add_parser("recall", help="recall@k per retriever from memstream eval --json output")
    rec.add_argument("eval_json")
    rec.add_argument("-o", "--out", required=True)

    p = sub.add_parser("eval", help="measure retrieval on LoCoMo or LongMemEval, every retriever")
    p.add_argument("dataset", choices=["locomo", "longmemeval"])
    p.add_argument("path", help="the benchmark's JSON file, in its original schema")
    p.add_argument("--granularity", choices=["session", "round"], default="session",
                   help="LongMemEval: a memory per session or per round (default session)")
    p.add_argument("--retriever", default="all", help="a retriever name, a comma list, or all")
    p.add_argument("--k", default="5,10", help="cut-offs, e.g. 5,10,20")
    p.add_argument("--weights", metavar="REC,IMP,REL[,BM25]", default="1,1,1,1",
                   help="weights of the generative retrievers (default 1,1,1,1)")
    p.add_argument("--decay", type=float, default=0.995)
    p.add_argument("--context", type=int, default=1, help="LoCoMo: turns either side in a turn's key")
    p.add_argument("--json", dest="json_out", metavar="OUT", help="write the results as JSON")
    p.add_argument("--plot", metavar="OUT", help="draw recall@k curves (png or svg)")
    p.add_argument("--cache", help="model-call cache (default ~/.cache/memstream/calls.db)")
    _models(p)

    p = sub.add_parser("demo", help="build a small stream from the bundled example and recall")
    p.add_argument("--out", default=":memory:", help="where to write the stream (default: RAM)")
    _models(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="memstream: %(levelname)s: %(name)s: %(message)s")
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help (0) or a usage error (2)
        return int(stop.code or 0)
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "add": cmd_add, "import": cmd_import, "recall": cmd_recall, "inspect": cmd_inspect,
        "demo": cmd_demo, "eval": cmd_eval, "reflect": cmd_reflect, "tree": cmd_tree, "plan": cmd_plan,
        "run": cmd_run, "replay": cmd_replay, "interview": cmd_interview, "plot": cmd_plot,
    }
    try:
        return handlers[args.command](args)
    except MemstreamError as e:
        print(f"memstream: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("memstream: interrupted; everything committed before this is kept", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


# -- commands ---------------------------------------------------------------------------------


def _open(path: str, args: argparse.Namespace, *, create: bool, chat: bool = False):  # noqa: ANN202
    from memstream.models import make_chat_model, make_embedder
    from memstream.stream import MemoryStream

    embedder = make_embedder(args.embedder) if getattr(args, "embedder", None) else None
    model = make_chat_model(getattr(args, "llm", None)) if chat else None
    return MemoryStream(path, embedder, chat=model, create=create)


def _time(text: str | None, what: str) -> datetime | None:
    from memstream.timeutil import parse_time

    return parse_time(text, what) if text is not None else None


def cmd_add(args: argparse.Namespace) -> int:
    try:
        cites = [int(c) for c in args.cites.split(",") if c.strip()]
    except ValueError:
        raise MemstreamError(f"--cites {args.cites!r} must be comma-separated ids, e.g. 3,7") from None
    at = _time(args.at, "--at") or datetime.now(UTC)
    with _open(args.stream, args, create=True, chat=args.importance is None) as stream:
        memory = stream.add(args.owner, args.text, at=at, kind=args.kind,
                            importance=args.importance, cites=cites)
    print(f"added memory {memory.id} for {memory.owner} (importance {memory.importance})")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from memstream.stream.jsonl import import_jsonl

    with _open(args.stream, args, create=True, chat=True) as stream:
        added = import_jsonl(stream, Path(args.file))
    print(f"imported {added} memories into {args.stream}")
    return 0


def _parse_weights(args: argparse.Namespace):  # noqa: ANN202
    from pydantic import ValidationError

    from memstream.stream import Weights

    try:
        rec, imp, rel = (float(x) for x in args.weights.split(","))
        return Weights(recency=rec, importance=imp, relevance=rel, decay=args.decay)
    except (ValueError, ValidationError):
        raise MemstreamError(f"--weights {args.weights!r} / --decay {args.decay} are invalid; give "
                             "three non-negative numbers like 1,1,1 and a decay in (0, 1]") from None


def cmd_recall(args: argparse.Namespace) -> int:
    weights = _parse_weights(args)
    with _open(args.stream, args, create=False) as stream:
        now = _time(args.at, "--at") or stream.latest_time(args.owner)
        recalls = stream.retrieve(args.owner, args.query, now=now, k=args.k, weights=weights,
                                  touch=not args.no_touch)
    if args.json:
        print(json.dumps([r.as_row() for r in recalls], indent=2))
        return 0
    print(f"{args.owner} recalls {args.query!r} at {now.isoformat()}  "
          f"(weights rec {weights.recency:g} imp {weights.importance:g} rel {weights.relevance:g},"
          f" decay {weights.decay:g}/h)")
    print(f"{'rank':>4} {'total':>6} {'recency':>7} {'import.':>7} {'relev.':>7} {'id':>6}  "
          f"{'kind':<11} text")
    for r in recalls:
        print(f"{r.rank:>4} {r.score:6.3f} {r.recency:7.3f} {r.importance:7.3f} {r.relevance:7.3f} "
              f"{r.memory.id:>6}  {r.memory.kind:<11} {_short(r.memory.text, 70)}")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from memstream.stream import MemoryStream

    with MemoryStream(args.stream, create=False) as stream:
        if args.owner:
            memories = stream.memories(args.owner)
            if args.json:
                print(json.dumps([m.to_dict() for m in memories], indent=2))
                return 0
            for m in memories:
                cites = f" cites {list(m.cites)}" if m.cites else ""
                print(f"{m.id:>6} {m.created_at.isoformat()} {m.kind:<11} imp {m.importance:>2}"
                      f"{cites}  {_short(m.text, 70)}")
            return 0
        summary = {
            "path": stream.path, "embedder": stream.embedder.name, "dim": stream.embedder.dim,
            "memories": stream.count(),
            "owners": {o: stream.count(o) for o in stream.owners()},
        }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{summary['path']}: {summary['memories']} memories, embedder {summary['embedder']} "
          f"({summary['dim']}-d), {len(summary['owners'])} owner(s)")
    for owner, n in summary["owners"].items():
        print(f"  {owner}: {n}")
    return 0


def cmd_reflect(args: argparse.Namespace) -> int:
    from memstream.reflection import reflect

    with _open(args.stream, args, create=False, chat=True) as stream:
        now = _time(args.at, "--at") or stream.latest_time(args.owner)
        result = reflect(stream, args.owner, now)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    print(f"{args.owner} reflects at {now.isoformat()}")
    for i, q in enumerate(result.questions, 1):
        print(f"Q{i}. {q}")
        for ins in (x for x in result.insights if x.question == q):
            print(f"    [{ins.memory_id}] {ins.text}  (cites {', '.join(map(str, ins.cites))}; depth {ins.depth})")
        for d in (x for x in result.dropped if x.question == q):
            print(f"    dropped: {_short(d.text, 50)}  ({d.reason})")
    for reason in result.skipped:
        print(f"skipped: {reason}")
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    from memstream.reflection import citation_tree

    with _open(args.stream, args, create=False) as stream:
        print("\n".join(citation_tree(stream, args.owner, args.memory).lines()))
    return 0


def _day(text: str):  # noqa: ANN202
    import re

    from memstream.timeutil import parse_time

    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})([+-]\d{2}:\d{2}|Z)", text.strip())
    if m:
        return parse_time(f"{m.group(1)}T00:00:00{m.group(2)}", "--day")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        raise MemstreamError(f"--day {text} has no time zone; write e.g. {text.strip()}+00:00")
    return parse_time(text, "--day")


def cmd_plan(args: argparse.Namespace) -> int:
    from memstream.planning import decompose, load_identity, plan_day

    identity = load_identity(args.identity)
    if identity.name != args.owner:
        raise MemstreamError(f"--identity {args.identity} describes {identity.name!r}, not --owner {args.owner!r}")
    day = _day(args.day)
    with _open(args.stream, args, create=True, chat=True) as stream:
        plan = plan_day(stream, identity, day)
        waking = [b for b in plan.blocks if b.activity != "sleeping"]
        for block in waking if args.decompose_all else waking[:1]:
            decompose(stream, identity, plan, block.start)
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2))
        return 0
    print(plan.summary())
    for block in plan.blocks:
        print(f"  {block.start:%H:%M}-{block.end:%H:%M}  {block.activity}  @ {block.location}")
        for a in block.actions:
            print(f"      {a.start:%H:%M} +{a.minutes:>2} min  {a.activity}  @ {a.location}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from memstream.sim.events import read_events
    from memstream.sim.run import RunConfig, resume_run, start_run

    if args.hours is not None and args.hours <= 0:
        raise MemstreamError(f"--hours must be positive, got {args.hours:g}")
    if args.resume:
        result = resume_run(Path(args.resume), hours=args.hours)
    else:
        start = _time(args.start, "--start")
        try:
            config = RunConfig(town=args.town, agents=args.agents, start=start, hours=args.hours or 3.0,
                               step_seconds=args.step_seconds, llm=args.llm or "offline",
                               embedder=args.embedder or "minilm", seed=args.seed, max_calls=args.max_calls)
        except ValidationError as e:
            raise MemstreamError(f"bad run setting: {e.errors()[0]['loc'][0]}: {e.errors()[0]['msg']}") from None
        out = Path(args.out or f"runs/{start:%Y%m%d-%H%M}-{args.agents or 'town'}")
        result = start_run(config, out)
    m = result.metrics
    print(f"{'finished' if result.stopped == 'finished' else 'stopped (--max-calls)'} at "
          f"{result.sim_time:%Y-%m-%d %H:%M}: {m['agents']} agents, {m['sim_hours']:g} simulated hours in "
          f"{m['wall_s']:.1f} s ({m['agent_steps_per_s']:,.0f} agent-steps/s), {m['model_calls']} model calls "
          f"({m['calls_per_agent_step']:.4f} per agent-step), {m['memories']} memories")
    print(f"run directory: {result.out}")
    said = [e for e in read_events(Path(result.out) / "events.jsonl") if "utterance" in e][:4]
    if said:
        print("overheard:")
        for e in said:
            print(f"  {e['time'][11:16]} {e['agent']}: {_short(e['utterance'], 90)}")
    if result.stopped != "finished":
        print(f"resume with:  memstream run --resume {result.out}")
    print("inspect it:")
    print(f"  memstream replay {result.out} --agent 'Isabella Rodriguez'")
    print(f"  memstream interview {result.out} --agent 'Klaus Mueller' \"What are you working on?\"")
    print(f"  memstream recall {result.out}/streams.db --owner 'Maria Lopez' --query 'party' --no-touch")
    print(f"  memstream plot timeline {result.out} --agent 'Isabella Rodriguez' -o timeline.png")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from memstream.sim.events import read_events
    from memstream.sim.run import read_run

    out = Path(args.run)
    _, town = read_run(out)
    if args.agent and args.agent not in {r.name for r in town.residents}:
        raise MemstreamError(f"unknown agent {args.agent!r} in {out}")
    lo, hi = _time(args.from_, "--from"), _time(args.to, "--to")
    for e in read_events(out / "events.jsonl"):
        at = datetime.fromisoformat(e["time"])
        if (lo and at < lo) or (hi and at > hi) or (args.agent and e["agent"] != args.agent):
            continue
        who = e["agent"] or "(the world)"
        said = f': "{e["utterance"]}"' if "utterance" in e else ""
        print(f"{at:%a %H:%M:%S}  {who}: {e['action']}{said}  [{e['location']}]")
    return 0


def cmd_interview(args: argparse.Namespace) -> int:
    from memstream.models import CachedChatModel, make_chat_model
    from memstream.sim import prompts
    from memstream.sim.run import read_run
    from memstream.stream import MemoryStream

    out = Path(args.run)
    config, town = read_run(out)
    resident = next((r for r in town.residents if r.name == args.agent), None)
    if resident is None:
        raise MemstreamError(f"unknown agent {args.agent!r} in {out}")
    chat = CachedChatModel(make_chat_model(config.llm), out / "calls.db")
    with MemoryStream(out / "streams.db", create=False) as stream:
        recalls = stream.retrieve(args.agent, args.question, now=stream.latest_time(args.agent), k=args.k,
                                  touch=False)
    answer = chat.complete(prompts.interview_messages(resident.describe(), args.agent,
                                                      prompts.memory_lines(recalls), args.question),
                           purpose=prompts.INTERVIEW_PURPOSE)
    print(f"{args.agent}: {answer}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from memstream import plots
    from memstream.stream import MemoryStream

    out = plots.check_output(args.out)
    if args.plot == "recall":
        path = Path(args.eval_json)
        try:
            results = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            raise MemstreamError(f"cannot read {path} as memstream eval --json output") from None
        print(f"wrote {plots.save(plots.recall(results), out)}")
        return 0
    src = Path(args.src)
    path = src / "streams.db" if src.is_dir() else src
    with MemoryStream(path, create=False) as stream:
        agent = getattr(args, "agent", None)
        if agent and agent not in stream.owners():
            raise MemstreamError(f"unknown agent {agent!r} in {path} (it has no memories)")
        at = _time(getattr(args, "at", None), "--at")
        if args.plot == "components":
            fig = plots.components(stream, agent, args.query, k=args.k, at=at)
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


def cmd_eval(args: argparse.Namespace) -> int:
    from memstream.eval import RETRIEVERS, evaluate, load_locomo, load_longmemeval
    from memstream.eval.harness import EvalWeights
    from memstream.eval.report import plot_recall, table
    from memstream.models import CachedChatModel, make_chat_model, make_embedder

    try:
        ks = sorted({int(k) for k in args.k.split(",")})
    except ValueError:
        ks = []
    if not ks or ks[0] <= 0:
        raise MemstreamError(f"--k {args.k!r} must be positive integers, e.g. 5,10")
    try:
        parts = [float(x) for x in args.weights.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (3, 4) or min(parts) < 0 or not 0 < args.decay <= 1:
        raise MemstreamError(f"--weights {args.weights!r} must be 3 or 4 non-negative numbers "
                             "(recency, importance, relevance[, bm25]) and --decay in (0, 1]")
    weights = EvalWeights(*parts, decay=args.decay)
    names = list(RETRIEVERS) if args.retriever == "all" else args.retriever.split(",")
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg"):
        raise MemstreamError(f"--plot {args.plot} must end in .png or .svg")
    if args.dataset == "locomo":
        dataset = load_locomo(args.path, context=args.context)
    else:
        dataset = load_longmemeval(args.path, granularity=args.granularity)
    cache = Path(args.cache) if args.cache else Path.home() / ".cache" / "memstream" / "calls.db"
    cache.parent.mkdir(parents=True, exist_ok=True)
    chat = CachedChatModel(make_chat_model(args.llm), cache)
    results = evaluate(dataset, make_embedder(args.embedder), chat, retrievers=names, ks=ks,
                       weights=weights)
    print(table(results, ks))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))
        print(f"wrote {args.json_out}")
    if args.plot:
        print(f"wrote {plot_recall(results, args.plot)}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from importlib.resources import files

    example = Path(str(files("memstream") / "examples" / "isabella.jsonl"))
    if args.out != ":memory:" and Path(args.out).exists():
        raise MemstreamError(f"{args.out} already exists; give the demo a new --out path")
    from memstream.stream.jsonl import import_jsonl

    with _open(args.out, args, create=True, chat=True) as stream:
        n = import_jsonl(stream, example, progress=False)
        owner = stream.owners()[0]
        now = stream.latest_time(owner)
        print(f"Built a stream of {n} memories for {owner} from {example.name} "
              f"(embedder {stream.embedder.name}, chat model {stream.chat.name}).\n")
        for query in ("Who is coming to the Valentine's Day party?", "What does Isabella do at breakfast?"):
            print(f"Query: {query}")
            for r in stream.retrieve(owner, query, now=now, k=5, touch=False):
                print(f"  {r.rank}. total {r.score:.2f} = recency {r.recency:.2f} + importance "
                      f"{r.importance:.2f} + relevance {r.relevance:.2f}   [{r.memory.kind}, imp "
                      f"{r.memory.importance}] {_short(r.memory.text, 60)}")
            print()
    print("With the paper's equal weights, recent and important memories can outrank relevant ones;\n"
          "compare: memstream demo --out demo.db && memstream recall demo.db --owner "
          "'Isabella Rodriguez' --query 'breakfast' --weights 0.5,0.5,2 --no-touch")
    return 0


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


if __name__ == "__main__":
    raise SystemExit(main())
