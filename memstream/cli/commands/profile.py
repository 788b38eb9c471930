"""Profile commands: show a profile file, its log of versions, a diff between two, and blame.

``memstream profile show|log|diff|blame FILE --agent OWNER [--scope S]``: FILE is the SQLite file a
``profile`` design keeps its versions in (its ``path`` setting), first like every stream command's file;
the owner is ``--agent`` as everywhere. Every command only reads, and opens the file read-only.
``blame --line TEXT`` answers "when did this line disappear, and which edit removed it".
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable
from typing import Any

from memstream.cli.flags import agent_flag, json_flag, positive_int
from memstream.cli.outputs import check_json_output, write_json
from memstream.cli.parser import Parser
from memstream.cli.text import short
from memstream.designs import ProfileStore, blame
from memstream.errors import MemstreamError
from memstream.stream import normalise_owner

DEFAULT_SCOPE = "default"


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("profile", help="read a profile design's file: show, log, diff, blame (every version is kept)")
    kinds = p.add_subparsers(dest="profile", required=True, parser_class=Parser)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        q = kinds.add_parser(name, help=text)
        q.add_argument("file", help="the profile file (SQLite) a profile design writes: its path setting")
        agent_flag(q, help="whose profile")
        q.add_argument("--scope", default=DEFAULT_SCOPE,
                       help=f"the workspace the file is for (default {DEFAULT_SCOPE})")
        return q

    s = command("show", "the file as it stands, or as version N")
    s.add_argument("--version", type=positive_int, metavar="N", help="this version (default: the latest)")
    json_flag(s, "the version")
    json_flag(command("log", "every version: when, its size, and the edit that made it"), "the versions")
    d = command("diff", "what changed between two versions (default: the last edit)")
    d.add_argument("--from", dest="start", type=int, metavar="N",
                   help="the older version (default: the one before --to; 0: the empty file)")
    d.add_argument("--to", dest="end", type=positive_int, metavar="N", help="the newer version (default: the latest)")
    b = command("blame", "each line with the version that added it; --line TEXT: when it disappeared and "
                "which edit removed it")
    b.add_argument("--line", default="", metavar="TEXT", help="every line, current or removed, that holds TEXT")
    json_flag(b, "the lines")
    return {"profile": cmd_profile}


def cmd_profile(args: argparse.Namespace) -> int:
    args.json = getattr(args, "json", None)  # diff has none: it prints a unified diff
    json_out = check_json_output(args.json, [args.file])
    store = ProfileStore(args.file, readonly=True)
    try:
        versions = _versions(store, args)
        result = {"show": _show, "log": _log, "diff": _diff, "blame": _blame}[args.profile](versions, args)
    finally:
        store.close()
    write_json(json_out, result)
    return 0


def _versions(store: ProfileStore, args: argparse.Namespace) -> list[Any]:
    try:
        owner = normalise_owner(args.agent)
    except ValueError as e:
        raise MemstreamError(f"--agent {args.agent!r}: {e}; name whose profile to read") from None
    versions = store.versions(owner, args.scope)
    if not versions:
        held = ", ".join(f"{o} (scope {s})" for o, s in store.files()[:8]) or "none"
        raise MemstreamError(f"no profile of {owner!r} in scope {args.scope!r} in {args.file}; it holds: {held}")
    return versions


def _pick(versions: list[Any], n: int | None, flag: str) -> Any:
    if n is None:
        return versions[-1]
    if not 1 <= n <= len(versions):
        raise MemstreamError(f"{flag} {n}: this file has versions 1 to {len(versions)}")
    return versions[n - 1]


def _show(versions: list[Any], args: argparse.Namespace) -> dict[str, Any]:
    v = _pick(versions, args.version, "--version")
    if args.json is None:
        print(f"# version {v.n} of {len(versions)}, {v.at}, {len(v.text)} characters")
        print(v.text, end="")
    return v.to_dict()


def _log(versions: list[Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.json is None:
        for v in versions:
            print(f"v{v.n}  {v.at}  {len(v.text):>5} chars  {describe(v.edit)}")
    return [{k: x for k, x in v.to_dict().items() if k != "text"} | {"chars": len(v.text)} for v in versions]


def _diff(versions: list[Any], args: argparse.Namespace) -> None:
    end = _pick(versions, args.end, "--to")
    start_n = end.n - 1 if args.start is None else args.start
    before = "" if start_n == 0 else _pick(versions, start_n, "--from").text
    if start_n >= end.n:
        raise MemstreamError(f"--from {start_n} must be older than --to {end.n}")
    print(f"# v{start_n} -> v{end.n}: {describe(end.edit)}" if start_n == end.n - 1 else f"# v{start_n} -> v{end.n}")
    print("".join(difflib.unified_diff(before.splitlines(keepends=True), end.text.splitlines(keepends=True),
                                       f"v{start_n}", f"v{end.n}")), end="")


def _blame(versions: list[Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    found = blame(versions, args.line)
    if args.line and not found:
        raise MemstreamError(f"no line of this profile, current or removed, holds {args.line!r}")
    by_n = {v.n: v for v in versions}
    if args.json is None:
        for life in found:
            added = by_n[life.added]
            print(f"v{life.added:<4} {life.text}" if not args.line else
                  f"{short(life.text, 100)}\n  added   v{life.added} at {added.at}: {describe(added.edit)}")
            if args.line:
                gone = by_n.get(life.removed)
                print("  still in the file" if gone is None else
                      f"  removed v{gone.n} at {gone.at}: {describe(gone.edit)}")
    return [life.to_dict(by_n) for life in found]


def describe(edit: dict[str, Any]) -> str:
    """An edit record in one line: what was applied, rejected, blocked, and what compaction did."""
    parts = [_op(e) for e in edit.get("edits", [])] or ["no edit"]
    if edit.get("rejected"):
        parts.append(f"{len(edit['rejected'])} rejected")
    if edit.get("blocked"):
        parts.append(f"{len(edit['blocked'])} blocked")
    if c := edit.get("compaction"):
        parts.append(f"compaction {c['from_chars']} -> {c['to_chars']} chars"
                     + (", redundant lines merged" if c.get("merged") else "")
                     + (f", {len(c['dropped'])} lines dropped" if c.get("dropped") else ""))
    return "; ".join(parts)


def _op(e: dict[str, Any]) -> str:
    if e.get("op") == "add":
        return f"add {short(e['text'], 50)!r} after {short(e['after'], 30)!r}"
    if not e.get("new"):
        return f"delete {short(e['old'], 60)!r}"
    return f"replace {short(e['old'], 40)!r} with {short(e['new'], 40)!r}"
