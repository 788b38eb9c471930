"""``memstream facts``: versioned facts in a facts file (add, update, forget, delete, history, as-of, check).

Commands that only read (history, as-of, check) open the file read-only. A command that fails
before it writes leaves no file it created; every mistake is one line, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstream.cli.flags import (
    agent_flag,
    cutoff_flag,
    json_flag,
    model_flags,
    parse_time_arg,
    record_id,
    scope_text,
)
from memstream.cli.outputs import check_json_output, write_json
from memstream.cli.parser import warn
from memstream.cli.text import short
from memstream.errors import MemstreamError
from memstream.timeutil import parse_time

COMMANDS = ("add", "update", "forget", "delete", "history", "as-of", "check")


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("facts", help="versioned facts: add, update, forget, delete, history, as-of, check")
    facts = p.add_subparsers(dest="facts_command", required=True, parser_class=type(p))

    def command(name: str, help: str, *, owner: bool = True) -> argparse.ArgumentParser:
        q = facts.add_parser(name, help=help)
        q.add_argument("file", help="the facts file (SQLite)")
        if owner:
            agent_flag(q, help="whose facts")
            q.add_argument("--tenant", default="", type=scope_text,
                           help="the tenant key the owner is scoped by (default none)")
        return q

    q = command("add", "remember what a message says: extract its facts, and add, update or extend (the write path)")
    q.add_argument("--text", required=True, help="the message")
    q.add_argument("--at", help="ISO time with zone (default: now, UTC)")
    q.add_argument("--as-is", action="store_true", help="store the text as one fact, without extraction")
    q.add_argument("--kind", default="fact", help="with --as-is: fact, preference, episode or procedure")
    q.add_argument("--expires", metavar="TIME", help="with --as-is: when the fact stops being true (ISO)")
    model_flags(q)
    json_flag(q, "the facts written")

    q = command("update", "write a new version of a fact (the old one is kept, no longer current)")
    q.add_argument("--fact", type=record_id, required=True, metavar="ID", help="the fact's id")
    q.add_argument("--text", required=True, help="the new version")
    q.add_argument("--at", help="ISO time with zone (default: now, UTC)")
    q.add_argument("--embedder", help="default: the file's own")

    q = command("forget", "soft-delete facts (hidden from every read, reversible with --restore)")
    q.add_argument("--fact", dest="facts", type=record_id, action="append", default=[], metavar="ID",
                   help="a fact's id (repeat for more)")
    q.add_argument("--restore", action="store_true", help="bring soft-deleted facts back")
    q.add_argument("--expired", action="store_true", help="run the expiry sweeper instead")
    q.add_argument("--at", help="ISO time with zone (default: now, UTC)")

    q = command("delete", "hard-delete a source (a message) or facts and everything derived from them, for good")
    q.add_argument("--fact", dest="facts", type=record_id, action="append", default=[], metavar="ID",
                   help="a fact's id, with its earlier versions (repeat for more)")
    q.add_argument("--source", metavar="KEY", help="a source key: every fact derived from it goes")
    q.add_argument("--at", help="ISO time with zone for the audit record (default: now, UTC)")

    q = command("history", "every version of a fact, or the facts ever true for a query")
    q.add_argument("--fact", type=record_id, metavar="ID", help="a fact's id: every version of it")
    q.add_argument("--query", help="instead of a fact: what to look for, earlier versions included")
    q.add_argument("--at", help="ISO time with zone (default: now, UTC)")
    cutoff_flag(q, help="facts to show")
    q.add_argument("--embedder", help="default: the file's own")
    json_flag(q, "the facts")

    q = command("as-of", "the facts that were current at a time")
    q.add_argument("time", help="ISO time with zone")
    q.add_argument("--query", default="", help="what to look for (default: the newest)")
    cutoff_flag(q, help="facts to show")
    q.add_argument("--embedder", help="default: the file's own")
    json_flag(q, "the facts")

    command("check", "verify a facts file: integrity, schema, triggers, the FTS index, edges, provenance",
            owner=False)
    return {"facts": cmd_facts}


def cmd_facts(args: argparse.Namespace) -> int:
    return {"add": cmd_add, "update": cmd_update, "forget": cmd_forget, "delete": cmd_delete,
            "history": cmd_history, "as-of": cmd_as_of, "check": cmd_check}[args.facts_command](args)


@contextlib.contextmanager
def opened(args: argparse.Namespace, *, readonly: bool) -> Iterator[Any]:
    """The facts file a command works on; a file this command created is removed if it fails."""
    from memstream.facts import FactStore
    from memstream.models import make_embedder

    existed = Path(args.file).exists()
    embedder = make_embedder(args.embedder) if getattr(args, "embedder", None) else None
    store = None
    try:
        store = FactStore(args.file, embedder, create=not readonly, readonly=readonly)
        yield store
    except BaseException:
        if store is not None:
            with contextlib.suppress(sqlite3.Error):
                store.close()
        if not existed:
            for suffix in ("", "-wal", "-shm"):
                Path(args.file + suffix).unlink(missing_ok=True)
        raise
    store.close()


def _now(args: argparse.Namespace, flag: str = "--at") -> datetime:
    return parse_time_arg(getattr(args, "at", None), flag) or datetime.now(UTC)


def cmd_add(args: argparse.Namespace) -> int:
    from memstream.designs import FactsConfig, FactsDesign, entry, entry_key
    from memstream.facts import Change, NewFact, Source, apply
    from memstream.models import make_chat_model

    at = _now(args)
    out = check_json_output(args.json, [args.file])
    if not args.as_is and (args.expires or args.kind != "fact"):
        raise MemstreamError("--kind and --expires go with --as-is (extraction decides them otherwise)")
    expires = parse_time_arg(args.expires, "--expires")
    if expires is not None and expires <= at:
        raise MemstreamError(f"--expires {expires.isoformat()} is not after --at {at.isoformat()}: a fact stops "
                             "being true after it starts; give a later --expires")
    fact = NewFact(args.text, args.kind, expires_at=expires) if args.as_is else None
    turn = entry(text=args.text, at=at, source=args.agent)
    chat = None if args.as_is else make_chat_model(args.llm, timeout=args.timeout, concurrency=args.concurrency)
    with opened(args, readonly=False) as store:
        key = entry_key(turn)
        if fact is not None:
            apply(store, args.agent, Source(key, args.text, at), [Change("new", fact)], tenant=args.tenant)
        else:
            design = FactsDesign(FactsConfig(path=args.file, tenant=args.tenant), embedder=store.embedder)
            try:
                design.write(args.agent, [turn], chat=chat)
            finally:
                design.store.close()
        source = store.source_id(args.tenant, args.agent, key)
        ids = [r[0] for r in store.db.execute("SELECT fact_id FROM provenance WHERE source_id=? ORDER BY fact_id",
                                              (source,))]
        facts = store.facts(ids)
    _show(facts, out, f"source {key}: {len(facts)} fact(s)")
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    from memstream.facts import Change, NewFact, Source, apply

    at = _now(args)
    with opened(args, readonly=False) as store:
        old = store.fact(args.fact)
        said = f"{args.fact}\x1f{args.text}\x1f{at.isoformat()}"
        key = "cli-update-" + hashlib.sha256(said.encode()).hexdigest()[:16]
        done = apply(store, args.agent, Source(key, args.text, at), [Change("update", NewFact(
            args.text, old.kind, old.salience, old.confidence, old.entities, old.event_at), args.fact)],
            tenant=args.tenant)[0]
    if done.action == "duplicate":
        print(f"fact {done.fact_id} already says this (or it was said while fact {args.fact} held); nothing was "
              "written")
    elif done.action != "update":
        print(f"fact {done.fact_id}: {done.action} (fact {args.fact} was not current, so nothing was superseded)")
    else:
        print(f"fact {done.fact_id} is the new version; fact {done.closed} is kept as no longer current")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from memstream.facts import forget, restore, sweep

    at = _now(args)
    if args.expired:
        if args.facts or args.restore:
            raise MemstreamError("--expired sweeps the owner's expired facts; give no --fact or --restore")
        with opened(args, readonly=False) as store:
            n = sweep(store, at, owner=args.agent, tenant=args.tenant)
        print(f"{n} expired fact(s) swept (soft-deleted, marked expired)")
        return 0
    if not args.facts:
        raise MemstreamError("name the facts to forget, e.g. memstream facts forget FILE --agent A --fact 12")
    with opened(args, readonly=False) as store:
        n = (restore if args.restore else forget)(store, args.agent, args.facts, at, tenant=args.tenant)
    print(f"{n} fact(s) {'restored' if args.restore else 'forgotten (reversible with --restore)'}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from memstream.facts import erase_facts, erase_source

    if bool(args.source) == bool(args.facts):
        raise MemstreamError("name either --source KEY or --fact ID to delete, one of them")
    at = _now(args)
    with opened(args, readonly=False) as store:
        erased = (erase_source(store, args.agent, args.source, at, tenant=args.tenant) if args.source else
                  erase_facts(store, args.agent, args.facts, at, tenant=args.tenant))
    print(f"deleted {len(erased.facts)} fact(s) with their earlier versions, {erased.sources} source(s), "
          f"{erased.edges} edge(s), {erased.cached_vectors} cached vector(s); profile regenerated; audited")
    if not erased.wal_clean:
        warn(f"another process is reading {args.file}, so its -wal file still holds the deleted bytes; run "
             "memstream facts delete or check again when it has finished")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from memstream.facts import recall, versions

    if (args.fact is None) == (args.query is None):
        raise MemstreamError("give --fact ID or --query TEXT, one of them")
    out = check_json_output(args.json, [args.file])
    with opened(args, readonly=True) as store:
        if args.fact is not None:
            facts = versions(store, args.fact)
            if facts and facts[0].owner != args.agent.strip():
                raise MemstreamError(f"fact {args.fact} is not one of {args.agent!r}'s facts")
        else:
            facts = [h.fact for h in recall(store, args.agent, args.query, _now(args), k=args.k, view="history",
                                            tenant=args.tenant)]
    _show(facts, out, f"{len(facts)} version(s)")
    return 0


def cmd_as_of(args: argparse.Namespace) -> int:
    from memstream.facts import recall

    when = parse_time(args.time, "TIME")  # a positional: always given
    out = check_json_output(args.json, [args.file])
    with opened(args, readonly=True) as store:
        facts = [h.fact for h in recall(store, args.agent, args.query, when, k=args.k, view="as-of",
                                        tenant=args.tenant)]
    _show(facts, out, f"{len(facts)} fact(s) current at {when.isoformat()}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from memstream.facts import check_facts_file

    problems = check_facts_file(args.file)
    for problem in problems:
        print(f"{args.file}: {problem}")
    if not problems:
        print(f"{args.file}: ok")
    return 1 if problems else 0


def _show(facts: list, out: str | Path | None, title: str) -> None:  # out: a checked --json target
    if out is not None:
        write_json(out, [f.to_dict() for f in facts])
        return
    print(title)
    for f in facts:
        d = f.to_dict()
        state = "current" if f.current else ("deleted" if f.deleted_s is not None else f"until {d['valid_to'][:16]}")
        print(f"  {f.id:>6}  {d['valid_from'][:16]}  {state:<24} {f.kind:<10} {short(f.text, 90)}")
