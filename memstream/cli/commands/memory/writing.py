"""The ``memory`` commands that change a store: remember, consolidate, import, update, delete, forget.

Everything a command is given (the agent, the time, the entries, the settings) is checked before the
store is opened; each write is committed whole before its ids are printed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memstream.cli.commands.memory.entries import read_entries
from memstream.cli.commands.memory.opening import agent_of, at_of, design_of, id_runs, opened, require_design
from memstream.cli.outputs import STDOUT, check_json_output, write_json
from memstream.errors import MemstreamError

#: The fields of an entry the flags of ``remember`` give (for a TEXT, or as defaults for a file's lines).
_ENTRY_FLAGS = ("source", "kind", "session")


def cmd_remember(args: argparse.Namespace) -> int:
    from memstream.designs import entry

    agent = agent_of(args)
    out = check_json_output(args.json, [args.store] + ([args.file] if args.file else []))
    given = {f: getattr(args, f) for f in _ENTRY_FLAGS if getattr(args, f) is not None}
    if (args.text is None) == (args.file is None):
        raise MemstreamError("give what to remember as TEXT or --file ENTRIES.jsonl, one of them")
    if args.file is not None:
        if args.id is not None:
            raise MemstreamError("--id names one entry; in --file each line gives its own \"id\"")
        at = {"at": at_of(args)} if args.at is not None else {}
        entries = read_entries(args.file, {**given, **at})
    else:
        entries = [entry(text=args.text, at=at_of(args), id=args.id, **given)]
    with opened(args, write=True, chat=True) as memory:
        before = set(memory.held.entry_keys(agent))
        ids = memory.write(agent, entries)
    kept = [i for i in ids if i is not None]
    new = sorted({i for i in kept if i not in before})
    if out is not None:
        write_json(out, {"design": memory.name, "agent": agent, "ids": ids, "new": new})
        if out == STDOUT:
            return 0
    also = [f"{len(set(kept)) - len(new)} already there"] if len(set(kept)) > len(new) else []
    also += [f"{ids.count(None)} kept out by the write gate"] if None in ids else []
    print(f"remembered {len(new)} new entr{'y' if len(new) == 1 else 'ies'} for {agent} in {memory.name}: "
          f"record{'s' if len(set(kept)) != 1 else ''} {id_runs(kept)}" + (f" ({'; '.join(also)})" if also else ""))
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    agent, at = agent_of(args), at_of(args)
    require_design(args.store, design_of(args))
    with opened(args, write=True, chat=True) as memory:
        if agent not in memory.owners():  # consolidating would make an empty owner of a mistyped name
            raise MemstreamError(f"{agent} has no {memory.name} memory in {args.store}"
                                 f"{f' (scope {args.scope!r})' if args.scope else ''}; nothing to consolidate")
        made = memory.consolidate(agent, at)
    print(f"consolidated {agent} in {memory.name}: {made} record(s) or summaries written")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    if args.state is not None:
        return _import_state(args)
    if args.replay:
        raise MemstreamError("--replay goes with --state STATE.json")
    if args.file is None or args.agent is None or args.design is None:
        raise MemstreamError("import FILE.jsonl needs --design NAME and --agent NAME (or import --state STATE.json)")
    agent = agent_of(args)
    entries = read_entries(args.file)
    with opened(args, write=True, chat=True) as memory:
        new = memory.import_entries(agent, entries)
    print(f"imported {new} entr{'y' if new == 1 else 'ies'} for {agent} into {memory.name} of {args.store}"
          + (f"; {len(entries) - new} were already there" if new < len(entries) else ""))
    return 0


def _import_state(args: argparse.Namespace) -> int:
    from memstream.designs import import_state, state_design

    if args.file is not None or args.agent is not None:
        raise MemstreamError("import --state brings in every owner the state file holds; give no FILE.jsonl or "
                             "--agent with it")
    name, config = state_design(args.state)
    if args.design is not None and args.design != name:
        raise MemstreamError(f"{args.state} holds the {name} design, not {args.design}; drop --design or give "
                             f"--design {name}")
    if args.design_config:
        raise MemstreamError("import --state uses the settings the state file was written with; give no "
                             "--design-config (--reconfigure makes them the store's)")
    args.design = name
    settings: dict[str, Any] = {**config}
    with opened(args, write=True, chat=args.replay, settings=settings) as memory:
        done = import_state(args.state, memory, replay=args.replay)
    records = sum(done.owners.values())
    print(f"imported {len(done.owners)} owner(s) of {done.design} from {args.state} into {args.store}: {records} "
          f"record(s){', their entries written again' if done.replayed else ', as the file held them'}")
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    from memstream.designs import record_text

    agent = agent_of(args)
    text = record_text(args.text)
    out = check_json_output(args.json, [args.store])
    _changeable(args, agent, "update")
    with opened(args, write=True, settings={}) as memory:
        record = memory.update(agent, args.record, text)
    if out is not None:
        write_json(out, {"design": memory.name, "agent": agent, "id": record.id, "text": record.text,
                         "at": record.at.isoformat(), "source": record.source, "kind": record.kind,
                         "session": record.session})
        if out == STDOUT:
            return 0
    print(f"updated record {record.id} of {agent} in {memory.name}: a context cites its new text from now on")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    agent = agent_of(args)
    _changeable(args, agent, "delete")
    if not args.yes and not _confirmed(f"delete record {args.record} of {agent} in the {args.design} memory of "
                                       f"{args.store}? [y/N] ", "delete"):
        print("nothing was deleted")
        return 1
    with opened(args, write=True, settings={}) as memory:
        memory.delete(agent, args.record)
    print(f"deleted record {args.record} of {agent} in {memory.name}; the change is logged (without its content)")
    return 0


def _changeable(args: argparse.Namespace, agent: str, what: str) -> None:
    """One line, before anything is written, if the record cannot be changed: a store without the design, a
    design that builds its memory from its records (its reason), an agent without memory, a record it lacks."""
    from memstream.designs import DESIGNS, refused_change

    design = design_of(args)
    require_design(args.store, design)
    if not DESIGNS[design].changes_records:
        raise MemstreamError(refused_change(DESIGNS[design], what))
    with opened(args, write=False) as memory:
        if agent not in memory.owners():
            raise MemstreamError(f"{agent} has no {memory.name} memory in {args.store}"
                                 f"{f' (scope {args.scope!r})' if args.scope else ''}; nothing to {what}")
        if all(r.id != args.record for r in memory.held.stored_records(agent)):
            raise MemstreamError(f"{agent} has no record {args.record} in the {memory.name} memory of {args.store}; "
                                 "`memstream memory context` and `export` name the records there are")


def cmd_forget(args: argparse.Namespace) -> int:
    agent = agent_of(args)
    require_design(args.store, design_of(args))
    with opened(args, write=False) as memory:
        if agent not in memory.owners():
            raise MemstreamError(f"{agent} has no {memory.name} memory in {args.store}"
                                 f"{f' (scope {args.scope!r})' if args.scope else ''}; nothing to forget")
    if not args.yes and not _confirmed(f"forget every trace of {agent} in the {args.design} memory of "
                                       f"{args.store}? [y/N] "):
        print("nothing was forgotten")
        return 1
    with opened(args, write=True, settings={}) as memory:
        rows = memory.forget(agent)
    print(f"forgot {agent} in {memory.name}: {rows} row(s) removed; the erasure is logged (without its content)")
    return 0


def _confirmed(question: str, what: str = "forget") -> bool:
    """Whether the person at the terminal said yes; a refusal in one line when there is no terminal to ask."""
    if not sys.stdin.isatty():
        raise MemstreamError(f"{what} asks for confirmation and stdin is not a terminal; add --yes to {what}")
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


