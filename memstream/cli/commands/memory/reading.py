"""The ``memory`` commands that only read a store (opened read-only): context, owners, export, check."""

from __future__ import annotations

import argparse

from memstream.cli.commands.memory.entries import entry_lines, write_lines
from memstream.cli.commands.memory.opening import agent_of, at_of, design_of, held_designs, id_runs, opened
from memstream.cli.outputs import STDOUT, check_json_output, check_jsonl_output, write_json
from memstream.errors import MemstreamError


def cmd_context(args: argparse.Namespace) -> int:
    agent, at = agent_of(args), at_of(args)
    out = check_json_output(args.json, [args.store])
    design_of(args)
    with opened(args, write=False) as memory:
        context = memory.context(agent, args.query, at, args.budget)
    if out is not None:
        write_json(out, {"design": memory.name, "agent": agent, "query": args.query, "at": at.isoformat(),
                         "budget": context.budget, "tokens": context.tokens, "cut": context.cut,
                         "cut_tokens": context.cut_tokens,
                         "blocks": [{"tier": b.tier, "text": b.text, "tokens": b.tokens, "ids": list(b.ids)}
                                    for b in context.blocks]})
        if out == STDOUT:
            return 0
    for b in context.blocks:
        print(f"{b.rendered}\n  (records {id_runs(b.ids)}; {b.tokens} tokens)\n")
    cut = f"; {context.cut} line(s) left out ({context.cut_tokens} tokens)" if context.cut else ""
    print(f"{memory.name} context for {agent}: {len(context.blocks)} block(s), {context.tokens} of {context.budget} "
          f"tokens{cut}")
    return 0


def cmd_owners(args: argparse.Namespace) -> int:
    from memstream.designs import DesignStore

    out = check_json_output(args.json, [args.store])
    held = held_designs(args.store)
    if args.design is not None and args.design not in held:
        design_of(args)
        raise MemstreamError(f"{args.store} holds no {args.design} memory (it holds {', '.join(held) or 'none yet'})")
    store = DesignStore(args.store, read_only=True)
    try:
        owners = {d: store.owners(d, args.scope) for d in ([args.design] if args.design else held)}
    finally:
        store.close()
    if out is not None:
        write_json(out, owners)
        if out == STDOUT:
            return 0
    for design, names in owners.items():
        print(f"{design}: {len(names)} owner(s)")
        for name in names:
            print(f"  {name}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    agent = agent_of(args)
    design_of(args)
    target = check_jsonl_output(args.output, "-o", [args.store]) if args.output else None
    with opened(args, write=False) as memory:
        if agent not in memory.owners():
            raise MemstreamError(f"{agent} has no {memory.name} memory in {args.store}"
                                 f"{f' (scope {args.scope!r})' if args.scope else ''}; nothing to export")
        entries = list(memory.export(agent))
    if target is None:
        for line in entry_lines(entries):
            print(line)
        return 0
    count = write_lines(target, entry_lines(entries))
    print(f"wrote {count} entr{'y' if count == 1 else 'ies'} of {agent} to {target}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from memstream.designs import check_store
    from memstream.models import make_embedder

    problems = check_store(args.store, embedder=make_embedder(args.embedder) if args.embedder else None)
    for problem in problems:
        print(f"{args.store}: {problem}")
    if not problems:
        print(f"{args.store}: ok")
    return 1 if problems else 0


