"""The files a command writes besides its text: checked before any work is done, then written.

A ``--json FILE`` or a plot is refused before the command starts if writing it could destroy
something (an input, a stream, a file of another kind): a slip of the shell never costs a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from memstream.errors import MemstreamError

#: ``--json`` given without a FILE: print the JSON to stdout.
STDOUT = "-"

_SQLITE = b"SQLite format 3\x00"
_JSON_STARTS = frozenset(b'[{"-0123456789tfn')


def check_json_output(value: str | None, inputs: Sequence[str | Path] = ()) -> str | Path | None:
    """Where ``--json`` goes: None, ``STDOUT``, or a checked path, before any work is done.

    A JSON file is an output like any other: it is refused if it is not named .json, if its folder
    does not exist, if it is one of the command's inputs (or a file already inside an input run's
    folder), or if it exists and is not JSON (a stream, a call cache): a slip of the shell never
    overwrites what a command was given to read."""
    if value is None or value == STDOUT:
        return value
    out = Path(value)
    if out.suffix.lower() != ".json":
        raise MemstreamError(f"--json {value}: name a .json file (to print JSON, give --json alone, last "
                             "or before another flag)")
    if out.is_dir():
        raise MemstreamError(f"--json {value} is a folder; name a .json file")
    if not out.parent.is_dir():
        raise MemstreamError(f"--json {value}: the folder {out.parent} does not exist")
    _refuse_to_overwrite(out, f"--json {value}", inputs, "JSON", lambda head: head[0] in _JSON_STARTS)
    return out


def check_image_output(value: str, flag: str, inputs: Sequence[str | Path] = ()) -> Path:
    """A plot's file (``-o``, ``--plot``), checked like ``--json FILE`` before any work: .png or .svg,
    not a folder, not an input, and not an existing file of another kind."""
    out = Path(value)
    if out.suffix.lower() not in (".png", ".svg"):  # the formats memstream.plots.save writes
        raise MemstreamError(f"{flag} {value} must end in .png or .svg")
    if out.is_dir():
        raise MemstreamError(f"{flag} {value} is a folder; name a .png or .svg file")
    _refuse_to_overwrite(out, f"{flag} {value}", inputs, "PNG or SVG",
                         lambda head: head.startswith(b"\x89PNG") or head.startswith((b"<?xml", b"<svg")))
    return out


def check_jsonl_output(value: str, flag: str, inputs: Sequence[str | Path] = ()) -> Path:
    """A JSON-lines file a command writes (an export), checked like ``--json FILE`` before any work: .jsonl,
    not a folder, not an input, and not an existing file of another kind."""
    out = Path(value)
    if out.suffix.lower() != ".jsonl":
        raise MemstreamError(f"{flag} {value} must end in .jsonl")
    if out.is_dir():
        raise MemstreamError(f"{flag} {value} is a folder; name a .jsonl file")
    if not out.parent.is_dir():
        raise MemstreamError(f"{flag} {value}: the folder {out.parent} does not exist")
    _refuse_to_overwrite(out, f"{flag} {value}", inputs, "JSON lines", lambda head: head.startswith(b"{"))
    return out


def _refuse_to_overwrite(out: Path, shown: str, inputs: Sequence[str | Path], kind: str,
                         own_kind: Callable[[bytes], bool]) -> None:
    """An output that exists may be replaced only if it is the command's own kind of file and not
    something the command was given to read (an input, or a file inside an input folder)."""
    if not out.exists():
        return
    for given in map(Path, inputs):
        if not given.exists():
            continue
        inside = given.is_dir() and given.resolve() in out.resolve().parents
        if inside or out.samefile(given):
            raise MemstreamError(f"{shown} is {'inside ' if inside else ''}the input {given}; name a new file")
    with out.open("rb") as f:
        head = f.read(64).lstrip()
    if head and (head.startswith(_SQLITE) or not own_kind(head)):
        raise MemstreamError(f"{shown} exists and is not a {kind} file (a stream or a database?); name a new file")


def write_json(target: str | Path | None, data: object) -> None:
    """Print ``data`` as JSON (``STDOUT``) or write it to a path from ``check_json_output``."""
    import json

    if target is None:
        return
    text = json.dumps(data, indent=2)
    if target == STDOUT:
        print(text)
        return
    Path(target).write_text(text + "\n", encoding="utf-8")
    print(f"wrote {target}")
