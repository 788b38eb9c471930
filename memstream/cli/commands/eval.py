"""``memstream eval``: retrieval on LoCoMo or LongMemEval, answers from memory designs, scenario evals, and a
memory's defences against an attack set."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstream.cli.flags import cutoff_flag, gate_flag, json_flag, model_flags, positive_int
from memstream.cli.outputs import STDOUT, check_image_output, check_json_output, write_json
from memstream.cli.weights import WeightSpec, weight_flags
from memstream.designs import DESIGNS
from memstream.errors import MemstreamError

if TYPE_CHECKING:
    from memstream.eval import Models
    from memstream.models import ChatModel

#: eval's generative retrievers also weigh BM25; its old positional order was rec,imp,rel,bm25,time.
EVAL_WEIGHTS = WeightSpec(takes=("rec", "imp", "rel", "bm25", "time"),
                          defaults={"rec": 1.0, "imp": 1.0, "rel": 1.0, "bm25": 1.0, "time": 1.0})


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("eval", help="measure retrieval on LoCoMo or LongMemEval, every retriever; run scenario "
                       "evals (memstream eval scenarios [FILES] --design ...); or a memory's defences against an "
                       "attack set (eval attacks --design D --gate G)")
    p.add_argument("dataset", choices=["locomo", "longmemeval", "scenarios", "attacks"])
    p.add_argument("path", nargs="*", help="the benchmark's JSON file, in its original schema; for scenarios, "
                   "scenario files (default: the bundled ones; the format: docs/scenarios.md); for attacks, an "
                   "attack set in JSONL (default: the bundled one)")
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
    d = p.add_argument_group("answers from memory designs (with --design; scenarios always)")
    d.add_argument("--design", help="measure answers from these designs instead of retrievers: a name, a comma "
                   f"list or all ({', '.join(DESIGNS)}); full is always measured; "
                   "scenarios: default all")
    d.add_argument("--budget", help="context budgets in tokens (default 1000,2000,4000); scenarios: one budget "
                   "(default 1000); attacks: one (default 2000)")
    d.add_argument("--answer", help="the answer model: offline (the extractive stand-in, the default) or "
                   "openai:MODEL (attacks: with one, whether each probe's answer obeys the attack)")
    d.add_argument("--judge", default="offline", help="score each answer with this model (offline: the lexical "
                   "stand-in, or openai:MODEL)")
    d.add_argument("--window", type=positive_int, default=128_000,
                   help="the answer model's context window in tokens (default 128000)")
    d.add_argument("--limit", type=positive_int, help="at most this many questions (a slice, in file order)")
    gate_flag(d, default="off", what="every design's writes")
    d.add_argument("--state", metavar="DIR", help="keep each design's state per conversation here, and read it back "
                   "instead of writing the conversation again")
    return {"eval": cmd_eval}


def cmd_eval(args: argparse.Namespace) -> int:
    from memstream.eval import RETRIEVERS, evaluate, load_locomo, load_longmemeval, table
    from memstream.models import CachedChatModel, make_chat_model, make_embedder
    from memstream.plots import recall, save
    from memstream.stream import Weights

    if args.dataset == "scenarios":
        return cmd_eval_scenarios(args)
    if args.dataset == "attacks":
        return cmd_eval_attacks(args)
    if len(args.path) != 1:
        raise MemstreamError(f"memstream eval {args.dataset} takes one FILE, the benchmark's JSON file "
                             f"(got {len(args.path)})")
    args.path = args.path[0]
    if args.design:
        return cmd_eval_designs(args)
    ks = args.k
    if not 0 < args.decay <= 1:
        raise MemstreamError(f"--decay {args.decay} is invalid; give a decay in (0, 1], e.g. 0.995")
    weights = Weights(**args.weights, decay=args.decay)
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
    if plot:
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
    from memstream.designs import design_names
    from memstream.eval import designs_table, evaluate_designs, load_locomo, load_longmemeval, sliced
    from memstream.plots import designs, save
    from memstream.trust import make_checker

    names = design_names(args.design)
    budgets = _budgets(args.budget or "1000,2000,4000")
    settings = _design_settings(args)
    json_out = check_json_output(args.json, [args.path])
    plot = check_image_output(args.plot, "--plot", [args.path]) if args.plot else None
    if args.dataset == "locomo":
        dataset = load_locomo(args.path, context=args.context)
    else:
        dataset = load_longmemeval(args.path, granularity="round", abstention=True)
    if args.limit:
        dataset = sliced(dataset, args.limit)
    model = _model_factory(args)
    models = _eval_models(args, model)
    make_checker(args.gate, runner=models.design, model=model)  # a bad --gate fails here, before any write
    rows = evaluate_designs(dataset, names, budgets, models, window=args.window, settings=settings,
                            state_dir=Path(args.state) if args.state else None,
                            gate=lambda: make_checker(args.gate, runner=models.design, model=model))
    if json_out != STDOUT:
        print(designs_table(rows))
    write_json(json_out, rows)
    if plot:
        said = f"wrote {save(designs(rows), plot)}"
        print(said, file=sys.stderr if json_out == STDOUT else sys.stdout)  # stdout holds only the JSON
    return 0


def cmd_eval_scenarios(args: argparse.Namespace) -> int:
    """``memstream eval scenarios [FILES] --design D``: each design lives through each scenario; facts matched
    turn by turn, questions judged, cost per turn (docs/scenarios.md)."""
    from memstream.designs import design_names
    from memstream.eval import DEFAULT_BUDGET, bundled_scenarios, evaluate_scenarios, load_scenario, scenarios_table

    unused = [flag for flag, value in (("--plot", args.plot), ("--state", args.state), ("--limit", args.limit),
                                       ("--gate", None if args.gate == "off" else args.gate)) if value is not None]
    if unused:
        raise MemstreamError(f"{unused[0]} is for eval locomo|longmemeval; scenario evals write --json and a table")
    names = design_names(args.design or "all")
    budgets = _budgets(args.budget or str(DEFAULT_BUDGET))
    if len(budgets) > 1:
        raise MemstreamError(f"--budget {args.budget!r}: scenario evals take one budget, e.g. --budget 1000")
    settings = _design_settings(args)
    files = [Path(f) for f in args.path] or bundled_scenarios()
    json_out = check_json_output(args.json, files)
    scenarios = [load_scenario(f) for f in files]  # every file checked before any work
    models = _eval_models(args, _model_factory(args), cache_vectors=False)
    rows = evaluate_scenarios(scenarios, names, budgets[0], models, settings=settings)
    if json_out != STDOUT:
        print(scenarios_table(rows))
    write_json(json_out, rows)
    return 0


def _design_settings(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The designs' settings the eval flags give: the stream's and tiered's weights, tiered's retriever."""
    from memstream.designs import check_retriever
    from memstream.stream import Weights

    tiered = {} if args.retriever == "all" else {"retriever": check_retriever(args.retriever)}
    if not 0 < args.decay <= 1:
        raise MemstreamError(f"--decay {args.decay} is invalid; give a decay in (0, 1], e.g. 0.995")
    w = args.weights
    stream = {k: v for k, v in w.items() if k != "bm25"}  # the stream's score has no BM25 term
    return {"stream": {"weights": Weights(**stream, decay=args.decay)},
            "tiered": {**tiered, "weights": Weights(**w, decay=args.decay)}}


def _eval_models(args: argparse.Namespace, model: Callable[[str | None], ChatModel], *,
                 cache_vectors: bool = True) -> Models:
    """Who writes (--llm), answers (--answer) and judges (--judge), each made by ``model``; one embedder
    (with one cache of vectors for every design, unless the caller gives each its own)."""
    from memstream.eval import Models
    from memstream.models import CachedEmbedder, make_embedder

    embedder = make_embedder(args.embedder)
    if cache_vectors:
        embedder = CachedEmbedder(embedder)  # the designs embed the same texts: once
    return Models(model(args.llm), model(args.answer or "offline"), model(args.judge), embedder)


def _model_factory(args: argparse.Namespace) -> Callable[[str | None], ChatModel]:
    """A chat model by spec with the command's endpoint settings, cached in --cache unless offline."""
    from memstream.models import CachedChatModel, make_chat_model

    cache = Path(args.cache) if args.cache else Path.home() / ".cache" / "memstream" / "calls.db"

    def model(spec: str | None) -> ChatModel:
        chat = make_chat_model(spec, timeout=args.timeout, concurrency=args.concurrency)
        if chat.name.startswith("offline"):
            return chat
        cache.parent.mkdir(parents=True, exist_ok=True)
        return CachedChatModel(chat, cache)

    return model


def cmd_eval_attacks(args: argparse.Namespace) -> int:
    """``memstream eval attacks --design D --gate G``: what each design's gate kept out of an attack set, and
    what still reached a context (and, with --answer, was obeyed)."""
    from memstream.designs import design_names
    from memstream.eval import attacks_table, evaluate_attacks, load_attacks
    from memstream.models import CachedEmbedder, make_embedder
    from memstream.trust import make_checker

    if not args.design:
        raise MemstreamError("eval attacks needs --design: a name, a comma list or all")
    if len(args.path) > 1:
        raise MemstreamError(f"eval attacks takes at most one attack set, got {len(args.path)} files")
    path = Path(args.path[0]) if args.path else None
    names = design_names(args.design)
    budgets = _budgets(args.budget or "2000")
    if len(budgets) > 1:
        raise MemstreamError(f"eval attacks takes one --budget, got {args.budget!r}; e.g. --budget 2000")
    json_out = check_json_output(args.json, [path] if path else [])
    attacks = load_attacks(path)
    if args.limit:
        attacks = attacks[:args.limit]
    model = _model_factory(args)
    chat = model(args.llm)
    answer = model(args.answer) if args.answer else None
    make_checker(args.gate, runner=chat, model=model)  # a bad --gate fails here, before anything is written
    results = evaluate_attacks(attacks, names, chat=chat, answer=answer, budget=budgets[0],
                               embedder=CachedEmbedder(make_embedder(args.embedder)),
                               gate=lambda: make_checker(args.gate, runner=chat, model=model))
    if json_out != STDOUT:
        print(attacks_table(results))
    write_json(json_out, results)
    return 0

