"""``memstream memory``: any memory design used from the shell, over a design store (one SQLite file).

remember, context, consolidate, owners, export, import, update, delete, forget, check: the parsers are here, the
handlers in :mod:`.writing` (what changes the store) and :mod:`.reading` (what only reads it, opened
read-only). Every mistake is one line, exit 2, with nothing written (docs/memory.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from memstream.cli.commands.memory import reading, writing
from memstream.cli.flags import (
    agent_flag,
    at_flag,
    budget_flag,
    design_config_flag,
    embedder_flag,
    json_flag,
    model_flags,
    output_flag,
    record_flag,
    yes_flag,
)

#: The commands that write, with the model flags (``--llm``, ``--embedder``, ...) and the design's settings.
CHANGING = ("remember", "consolidate", "import")
#: What ``--embedder`` says in these commands (a design that ranks by relevance embeds with it).
EMBEDDER = "; the same in every command on one store"
#: The budget ``memory context`` assembles in when none is given.
CONTEXT_BUDGET = 1000


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("memory", help="any memory design over a design store: remember, context, consolidate, "
                       "owners, export, import, update, delete, forget, check")
    memory = p.add_subparsers(dest="memory_command", required=True, parser_class=type(p))

    def command(name: str, help: str, *, design: bool = True, owner: bool = True) -> argparse.ArgumentParser:
        q = memory.add_parser(name, help=help)
        q.add_argument("--store", required=True, metavar="PATH", help="the design store (SQLite)")
        if design:
            q.add_argument("--design", required=True, metavar="NAME", help="the memory design (full, vector, "
                           "buffer-summary, ...)")
        if owner:
            agent_flag(q, help="whose memory")
        if design:
            q.add_argument("--scope", default="", metavar="SCOPE", help="the tenant or workspace the agent is in "
                           "(default none)")
            if name not in CHANGING:  # the commands that write take it with the model flags
                embedder_flag(q, EMBEDDER)
        return q

    q = command("remember", "write entries (a text, or a JSONL file of entries) and print their record ids")
    q.add_argument("text", nargs="?", help="what to remember (or --file)")
    q.add_argument("--file", metavar="ENTRIES.jsonl", help="entries, one JSON object a line (text, at, source, "
                   "kind, session, id); the flags below fill in what a line leaves out")
    at_flag(q, "when it was said, ISO time with zone (default: now, UTC)")
    q.add_argument("--source", help="who or what said it (default user)")
    q.add_argument("--kind", help="turn (default), observation, tool or pinned")
    q.add_argument("--session", help="the session it belongs to (default none)")
    q.add_argument("--id", help="the entry's own id: written again, it is stored once (TEXT only)")
    _changing(q)
    json_flag(q, "the record ids")

    q = command("context", "the context the design assembles for a query: its blocks and their records")
    q.add_argument("query", help="what the context is for")
    at_flag(q)
    budget_flag(q, default=CONTEXT_BUDGET)
    json_flag(q, "every block with its tier, text, tokens and record ids")

    q = command("consolidate", "the design's background work for the agent (summaries, reflections)")
    at_flag(q)
    _changing(q)

    q = command("owners", "the agents with memory in the store, per design", design=False, owner=False)
    q.add_argument("--design", metavar="NAME", help="only this design (default every design the store holds)")
    q.add_argument("--scope", default="", metavar="SCOPE", help="the tenant or workspace (default none)")
    json_flag(q, "the owners by design")

    q = command("export", "the agent's entries as JSONL (what import replays, into this or another design)")
    output_flag(q, required=False, help="the .jsonl file to write (default: print the lines)")

    q = command("import", "write a JSONL file of entries for the agent, or bring in a design state file "
                "(--state) with every owner in it", design=False, owner=False)
    q.add_argument("file", nargs="?", metavar="FILE.jsonl", help="entries, as export writes them")
    q.add_argument("--design", metavar="NAME", help="the memory design (with --state: the one the file names)")
    agent_flag(q, required=False, help="whose memory (with FILE.jsonl)")
    q.add_argument("--scope", default="", metavar="SCOPE", help="the tenant or workspace (default none)")
    q.add_argument("--state", metavar="STATE.json", help="a design state file (save_state, memstream eval --state)")
    q.add_argument("--replay", action="store_true", help="with --state: write the owners' entries again through "
                   "the design instead of copying its memory as it stands (summaries made again by --llm)")
    _changing(q)

    q = command("update", "give one record of the agent a new text (its id and time kept), where the design's memory "
                "is its records (full, vector, recent); the others say why not")
    record_flag(q)
    q.add_argument("text", help="the record's new text")
    json_flag(q, "the record as it now is")

    q = command("delete", "delete one record of the agent (gone from every context and export, its text overwritten), "
                "where the design's memory is its records (full, vector, recent); the others say why not")
    record_flag(q)
    yes_flag(q, "delete")

    q = command("forget", "remove every trace of the agent from the design's memory (an erasure is logged)")
    yes_flag(q, "forget")

    q = command("check", "verify a design store: integrity, rows, every owner readable", design=False, owner=False)
    embedder_flag(q, "; reading a design that ranks by relevance embeds its records")
    return {"memory": cmd_memory}


def _changing(q: argparse.ArgumentParser) -> None:
    """The flags of a command that writes: the model the design asks, and its settings."""
    model_flags(q, embedder=EMBEDDER)
    design_config_flag(q)


def cmd_memory(args: argparse.Namespace) -> int:
    handlers = {"remember": writing.cmd_remember, "consolidate": writing.cmd_consolidate,
                "import": writing.cmd_import, "update": writing.cmd_update,
                "delete": writing.cmd_delete, "forget": writing.cmd_forget, "context": reading.cmd_context,
                "owners": reading.cmd_owners, "export": reading.cmd_export, "check": reading.cmd_check}
    return handlers[args.memory_command](args)
