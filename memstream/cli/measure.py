"""Measuring commands: plot (why memories are recalled) and eval (recall on benchmarks)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memstream.cli.common import (
    Parser,
    model_flags,
    parse_time_arg,
    parse_weights,
    positive_int,
    weight_flags,
)
from memstream.errors import MemstreamError
from memstream.files import read_json

if TYPE_CHECKING:
    from memstream.models import ChatModel


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this group's subcommands to ``sub``; return their handlers by name."""
    p = sub.add_parser("plot", help="plot why memories are recalled (PNG or SVG)")
    plots = p.add_subparsers(dest="plot", required=True, parser_class=Parser)

    def plot_parser(name: str, text: str, *, agent: bool = True, query: bool = False) -> argparse.ArgumentParser:
        q = plots.add_parser(name, help=text)
        q.add_argument("src", help="a stream file or a run directory")
        if agent:
            q.add_argument("--agent", required=True)
        if query:
            q.add_argument("--query", required=True)
            q.add_argument("-k", type=positive_int, default=10)
        q.add_argument("--at", help="ISO time with zone (default: the agent's latest time)")
        q.add_argument("-o", "--out", required=True, help="output file, .png or .svg")
        return q

    weight_flags(plot_parser("components", "the top-k as stacked bars of weighted recency, importance, relevance",
                             query=True))
    plot_parser("decay", "recency against hours since access, memories on the curves").add_argument(
        "--decays", default="0.99,0.995,0.999")
    imp = plots.add_parser("importance", help="the distribution of importance by kind")
    imp.add_argument("src")
    imp.add_argument("--agent")
    imp.add_argument("-o", "--out", required=True)
    plot_parser("timeline", "memories over time by kind, reflections and the trigger sum")
    plot_parser("reflections", "the citation graph from reflections to observations").add_argument(
        "--memory", type=positive_int)
    plot_parser("weights", "how the top-k changes as the weights vary", query=True)
    sw = plots.add_parser("sweep", help="each measure per grid cell, with its 95%% interval, from memstream sweep")
    sw.add_argument("src", help="the sweep's folder")
    sw.add_argument("-o", "--out", required=True)
    rec = plots.add_parser("recall", help="recall@k per retriever from memstream eval --json output")
    rec.add_argument("eval_json")
    rec.add_argument("-o", "--out", required=True)
    des = plots.add_parser("designs", help="a measure against context tokens per design, with the Pareto front, "
                           "per question type, from memstream eval --design --json output")
    des.add_argument("eval_json")
    des.add_argument("--measure", choices=["evidence_verbatim", "evidence_reachable", "judge_accuracy", "f1"],
                     default="evidence_verbatim")
    des.add_argument("-o", "--out", required=True)

    p = sub.add_parser("eval", help="measure retrieval on LoCoMo or LongMemEval, every retriever")
    p.add_argument("dataset", choices=["locomo", "longmemeval"])
    p.add_argument("path", help="the benchmark's JSON file, in its original schema")
    p.add_argument("--granularity", choices=["session", "round"], default="session",
                   help="LongMemEval: a memory per session or per round (default session; with --design "
                        "always round: the designs are written turn by turn)")
    p.add_argument("--retriever", default="all", help="a retriever name, a comma list, or all; with --design, "
                   "the one the tiered design retrieves with (all: its default, hybrid)")
    p.add_argument("--k", default="5,10", help="cut-offs, e.g. 5,10,20")
    p.add_argument("--weights", metavar="REC,IMP,REL[,BM25[,TIME]]", default="1,1,1,1,1",
                   help="weights of the generative retrievers; TIME is added inside the span a question "
                        "names, e.g. 'two weeks ago' (default 1,1,1,1,1)")
    p.add_argument("--decay", type=float, default=0.995)
    p.add_argument("--context", type=int, default=1, help="LoCoMo: turns either side in a turn's key")
    p.add_argument("--embed-roles", choices=["user,assistant", "user"], default="user,assistant",
                   help="LongMemEval: whose turns the embedder reads (BM25 always reads all); 'user' is "
                        "about six times less text")
    p.add_argument("--json", dest="json_out", metavar="OUT", help="write the results as JSON")
    p.add_argument("--plot", metavar="OUT", help="draw recall@k curves (png or svg)")
    p.add_argument("--cache", help="model-call cache (default ~/.cache/memstream/calls.db)")
    model_flags(p, cache=False)
    d = p.add_argument_group("answers from memory designs (with --design)")
    d.add_argument("--design", help="measure answers from these designs instead of retrievers: a name, a comma "
                   "list or all (full, buffer-summary, vector, stream, tiered); full is always measured")
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
    from memstream.stream import MemoryStream

    out = plots.check_output(args.out)
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
    path = src / "streams.db" if src.is_dir() else src
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
    from memstream.eval import RETRIEVERS, evaluate, load_locomo, load_longmemeval
    from memstream.eval.report import table
    from memstream.models import CachedChatModel, make_chat_model, make_embedder
    from memstream.plots import check_output, recall, save

    if args.design:
        return cmd_eval_designs(args)
    try:
        ks = sorted({int(k) for k in args.k.split(",")})
    except ValueError:
        ks = []
    if not ks or ks[0] <= 0:
        raise MemstreamError(f"--k {args.k!r} must be positive integers, e.g. 5,10")
    weights = _generative_weights(args)
    names = list(RETRIEVERS) if args.retriever == "all" else args.retriever.split(",")
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg"):
        raise MemstreamError(f"--plot {args.plot} must end in .png or .svg")
    if args.dataset == "locomo":
        dataset = load_locomo(args.path, context=args.context)
    else:
        dataset = load_longmemeval(args.path, granularity=args.granularity, roles=tuple(args.embed_roles.split(",")))
    cache = Path(args.cache) if args.cache else Path.home() / ".cache" / "memstream" / "calls.db"
    cache.parent.mkdir(parents=True, exist_ok=True)
    chat = CachedChatModel(make_chat_model(args.llm, timeout=args.timeout, concurrency=args.concurrency), cache)
    results = evaluate(dataset, make_embedder(args.embedder), chat, retrievers=names, ks=ks,
                       weights=weights)
    print(table(results, ks))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))
        print(f"wrote {args.json_out}")
    if args.plot:
        print(f"wrote {save(recall(list(results)), check_output(args.plot))}")
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
    from memstream.designs import check_retriever, design_names
    from memstream.eval import Models, designs_table, evaluate_designs, load_locomo, load_longmemeval, sliced
    from memstream.models import CachedChatModel, CachedEmbedder, make_chat_model, make_embedder
    from memstream.plots import check_output, designs, save
    from memstream.stream import Weights

    names = design_names(args.design)
    budgets = _budgets(args.budget)
    tiered = {} if args.retriever == "all" else {"retriever": check_retriever(args.retriever)}
    weights = _generative_weights(args)
    if args.plot:
        check_output(args.plot)
    if args.dataset == "locomo":
        dataset = load_locomo(args.path, context=args.context)
    else:
        dataset = load_longmemeval(args.path, granularity="round", abstention=True)
    if args.limit:
        dataset = sliced(dataset, args.limit)
    cache = Path(args.cache) if args.cache else Path.home() / ".cache" / "memstream" / "calls.db"

    def model(spec: str | None) -> ChatModel:
        chat = make_chat_model(spec, timeout=args.timeout, concurrency=args.concurrency)
        if chat.name.startswith("offline"):
            return chat
        cache.parent.mkdir(parents=True, exist_ok=True)
        return CachedChatModel(chat, cache)

    embedder = CachedEmbedder(make_embedder(args.embedder))  # the designs embed the same texts: once
    models = Models(model(args.llm), model(args.answer), model(args.judge), embedder)
    settings = {"stream": {"weights": Weights(recency=weights.recency, importance=weights.importance,
                                              relevance=weights.relevance, time=weights.time, decay=weights.decay)},
                "tiered": {**tiered, "weights": weights}}
    rows = evaluate_designs(dataset, names, budgets, models, window=args.window, settings=settings,
                            state_dir=Path(args.state) if args.state else None)
    print(designs_table(rows))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2))
        print(f"wrote {args.json_out}")
    if args.plot:
        print(f"wrote {save(designs(rows), check_output(args.plot))}")
    return 0


def _generative_weights(args: argparse.Namespace):  # noqa: ANN202 - RetrievalWeights, imported lazily
    from memstream.designs import RetrievalWeights

    try:
        parts = [float(x) for x in args.weights.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (3, 4, 5) or min(parts) < 0 or not 0 < args.decay <= 1:
        raise MemstreamError(f"--weights {args.weights!r} must be 3 to 5 non-negative numbers "
                             "(recency, importance, relevance[, bm25[, time]]) and --decay in (0, 1]")
    return RetrievalWeights(*parts, decay=args.decay)
