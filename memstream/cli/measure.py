"""Measuring commands: plot (why memories are recalled) and eval (recall on benchmarks)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from memstream.cli.common import (
    STDOUT,
    Parser,
    WeightSpec,
    agent_flag,
    check_image_output,
    check_json_output,
    cutoff_flag,
    json_flag,
    model_flags,
    output_flag,
    parse_time_arg,
    parse_weights,
    positive_int,
    weight_flags,
    write_json,
)
from memstream.errors import MemstreamError
from memstream.files import read_json

#: eval's generative retrievers also weigh BM25; its old positional order was rec,imp,rel,bm25,time.
EVAL_WEIGHTS = WeightSpec(takes=("rec", "imp", "rel", "bm25", "time"),
                          defaults={"rec": 1.0, "imp": 1.0, "rel": 1.0, "bm25": 1.0, "time": 1.0})


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this group's subcommands to ``sub``; return their handlers by name."""
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

    p = sub.add_parser("eval", help="measure retrieval on LoCoMo or LongMemEval, every retriever")
    p.add_argument("dataset", choices=["locomo", "longmemeval"])
    p.add_argument("path", help="the benchmark's JSON file, in its original schema")
    p.add_argument("--granularity", choices=["session", "round"], default="session",
                   help="LongMemEval: a memory per session or per round (default session; with --design "
                        "always round: the designs are written turn by turn)")
    p.add_argument("--retriever", default="all", help="a retriever name, a comma list, or all; with --design, "
                   "the one the tiered design retrieves with (all: its default, hybrid)")
    cutoff_flag(p, default=[5, 10], several=True, help="cut-offs, e.g. 5,10,20")
    weight_flags(p, EVAL_WEIGHTS)
    p.add_argument("--context", type=int, default=1, help="LoCoMo: turns either side in a turn's key")
    p.add_argument("--embed-roles", choices=["user,assistant", "user"], default="user,assistant",
                   help="LongMemEval: whose turns the embedder reads (BM25 always reads all); 'user' is "
                        "about six times less text")
    json_flag(p)
    p.add_argument("--plot", metavar="FILE", help="draw recall@k curves (.png or .svg)")
    p.add_argument("--cache", help="model-call cache (default ~/.cache/memstream/calls.db)")
    model_flags(p, cache=False)
    d = p.add_argument_group("answers from memory designs (with --design)")
    d.add_argument("--design", help="measure answers from these designs instead of retrievers: a name, a comma "
                   "list or all (full, buffer-summary, vector, stream, tiered, facts); full is always measured")
    d.add_argument("--budget", default="1000,2000,4000", help="context budgets in tokens (default 1000,2000,4000)")
    d.add_argument("--answer", default="offline", help="the answer model: offline (the extractive stand-in) or "
                   "openai:MODEL")
    d.add_argument("--judge", default="offline", help="score each answer with this model (offline: the lexical "
                   "stand-in, or openai:MODEL)")
    d.add_argument("--window", type=positive_int, default=128_000,
                   help="the answer model's context window in tokens (default 128000)")
    d.add_argument("--limit", type=positive_int, help="at most this many questions (a slice, in file order)")
    d.add_argument("--state", metavar="DIR", help="keep each design's state per conversation here, and read it back "
                   "instead of writing the conversation again")

    return {"plot": cmd_plot, "eval": cmd_eval}


def cmd_plot(args: argparse.Namespace) -> int:
    from memstream import plots
    from memstream.sim import RunDir
    from memstream.stream import MemoryStream

    out = check_image_output(args.output, "-o", [args.eval_json] if args.plot in ("recall", "designs") else [args.src])
    if args.plot == "sweep":
        cells = read_json(Path(args.src) / "results.json", "sweep results (results.json)")
        if not isinstance(cells, list) or not all(isinstance(c, dict) and "measures" in c for c in cells):
            raise MemstreamError(f"{args.src}/results.json is not memstream sweep output")
        print(f"wrote {plots.save(plots.sweep(cells), out)}")
        return 0
    if args.plot == "designs":
        path = Path(args.eval_json)
        rows = read_json(path, "eval --design --json output")
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and "design" in r for r in rows):
            raise MemstreamError(f"{path} is not memstream eval --design --json output")
        print(f"wrote {plots.save(plots.designs(rows, measure=args.measure), out)}")
        return 0
    if args.plot == "recall":
        path = Path(args.eval_json)
        results = read_json(path, "eval --json output")
        if not isinstance(results, list) or not all(isinstance(r, dict) and "retriever" in r for r in results):
            raise MemstreamError(f"{path} is not memstream eval --json output")
        print(f"wrote {plots.save(plots.recall(results), out)}")
        return 0
    src = Path(args.src)
    path = RunDir.stream_file(src) if src.is_dir() else src
    with MemoryStream(path, create=False, readonly=True) as stream:
        agent = getattr(args, "agent", None)
        if agent and not stream.has(agent):
            raise MemstreamError(f"unknown agent {agent!r} in {path} (it has no memories)")
        at = parse_time_arg(getattr(args, "at", None), "--at")
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


def cmd_eval(args: argparse.Namespace) -> int:
    from memstream.eval import RETRIEVERS, EvalWeights, evaluate, load_locomo, load_longmemeval, table
    from memstream.models import CachedChatModel, make_chat_model, make_embedder
    from memstream.plots import recall, save

    if args.design:
        return cmd_eval_designs(args)
    ks = args.k
    if not 0 < args.decay <= 1:
        raise MemstreamError(f"--decay {args.decay} is invalid; give a decay in (0, 1], e.g. 0.995")
    weights = EvalWeights(**args.weights, decay=args.decay)
    json_out = check_json_output(args.json, [args.path])
    names = list(RETRIEVERS) if args.retriever == "all" else args.retriever.split(",")
    plot = check_image_output(args.plot, "--plot", [args.path]) if args.plot else None
    if args.dataset == "locomo":
        dataset = load_locomo(args.path, context=args.context)
    else:
        dataset = load_longmemeval(args.path, granularity=args.granularity, roles=tuple(args.embed_roles.split(",")))
    cache = Path(args.cache) if args.cache else Path.home() / ".cache" / "memstream" / "calls.db"
    cache.parent.mkdir(parents=True, exist_ok=True)
    chat = CachedChatModel(make_chat_model(args.llm, timeout=args.timeout, concurrency=args.concurrency), cache)
    results = evaluate(dataset, make_embedder(args.embedder), chat, retrievers=names, ks=ks,
                       weights=weights)
    if json_out != STDOUT:
        print(table(results, ks))
    write_json(json_out, results)
    if args.plot:
        said = f"wrote {save(recall(list(results)), plot)}"
        print(said, file=sys.stderr if json_out == STDOUT else sys.stdout)  # stdout holds only the JSON
    return 0



def _budgets(text: str) -> list[int]:
    try:
        budgets = sorted({int(b) for b in text.split(",")})
    except ValueError:
        budgets = []
    if not budgets or budgets[0] <= 0:
        raise MemstreamError(f"--budget {text!r} must be positive token counts, e.g. 1000,2000,4000")
    return budgets


def cmd_eval_designs(args: argparse.Namespace) -> int:
    """``memstream eval ... --design D``: answers from each design's context, judged, scored, costed."""
    from memstream.designs import RetrievalWeights, check_retriever, design_names
    from memstream.eval import Models, designs_table, evaluate_designs, load_locomo, load_longmemeval, sliced
    from memstream.models import CachedChatModel, CachedEmbedder, make_chat_model, make_embedder
    from memstream.plots import designs, save
    from memstream.stream import Weights

    names = design_names(args.design)
    budgets = _budgets(args.budget)
    tiered = {} if args.retriever == "all" else {"retriever": check_retriever(args.retriever)}
    if not 0 < args.decay <= 1:
        raise MemstreamError(f"--decay {args.decay} is invalid; give a decay in (0, 1], e.g. 0.995")
    w = args.weights
    json_out = check_json_output(args.json, [args.path])
    plot = check_image_output(args.plot, "--plot", [args.path]) if args.plot else None
    if args.dataset == "locomo":
        dataset = load_locomo(args.path, context=args.context)
    else:
        dataset = load_longmemeval(args.path, granularity="round", abstention=True)
    if args.limit:
        dataset = sliced(dataset, args.limit)
    cache = Path(args.cache) if args.cache else Path.home() / ".cache" / "memstream" / "calls.db"

    def model(spec: str | None):  # noqa: ANN202 - a ChatModel, imported lazily
        chat = make_chat_model(spec, timeout=args.timeout, concurrency=args.concurrency)
        if chat.name.startswith("offline"):
            return chat
        cache.parent.mkdir(parents=True, exist_ok=True)
        return CachedChatModel(chat, cache)

    embedder = CachedEmbedder(make_embedder(args.embedder))  # the designs embed the same texts: once
    models = Models(model(args.llm), model(args.answer), model(args.judge), embedder)
    stream = {k: v for k, v in w.items() if k != "bm25"}  # the stream's score has no BM25 term
    settings = {"stream": {"weights": Weights(**stream, decay=args.decay)},
                "tiered": {**tiered, "weights": RetrievalWeights(**w, decay=args.decay)}}
    rows = evaluate_designs(dataset, names, budgets, models, window=args.window, settings=settings,
                            state_dir=Path(args.state) if args.state else None)
    if json_out != STDOUT:
        print(designs_table(rows))
    write_json(json_out, rows)
    if plot:
        said = f"wrote {save(designs(rows), plot)}"
        print(said, file=sys.stderr if json_out == STDOUT else sys.stdout)  # stdout holds only the JSON
    return 0
