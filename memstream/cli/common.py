"""What every command shares: one-line errors, argument types, the shared flags, opening a stream, times.

Every flag that more than one command takes is defined here, once, by a helper the commands call
(``agent_flag``, ``cutoff_flag``, ``json_flag``, ``output_flag``, ``weight_flags``, ``model_flags``):
a flag means one thing, spelled one way, in every command. Old spellings are still accepted by
``Deprecated`` actions that say so in one ``memstream: warning:`` line.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TextIO

from memstream.errors import MemstreamError

if TYPE_CHECKING:
    from memstream.models import ChatModel, Usage
    from memstream.stream import MemoryStream

EXIT_USAGE = 2


def warn(message: str) -> None:
    """One warning line on stderr, with the prefix every warning of ours carries."""
    print(f"memstream: warning: {printable(message)}", file=sys.stderr)


class Parser(argparse.ArgumentParser):
    """argparse with our one error prefix and flags that are required under any of their spellings.

    argparse's own ``required=True`` is satisfied only by the spelling it is declared on, so a flag
    with a deprecated alias (``--owner`` for ``--agent``) is required here instead: its dest must be
    set after parsing, whichever spelling set it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # argparse's own arguments
        super().__init__(*args, **kwargs)
        self.required_flags: dict[str, str] = {}  # dest -> the canonical spelling, shown when missing

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, extra = super().parse_known_args(args, namespace)
        missing = [flag for dest, flag in self.required_flags.items() if getattr(parsed, dest, None) is None]
        if missing:
            self.error(f"the following arguments are required: {', '.join(missing)}")
        return parsed, extra

    def format_usage(self) -> str:
        return self._showing_required(super().format_usage)

    def format_help(self) -> str:
        return self._showing_required(super().format_help)

    def _showing_required(self, render: Callable[[], str]) -> str:
        """--help shows a flag required under any spelling as required (no brackets)."""
        shown = [a for a in self._actions if a.dest in self.required_flags and a.help is not argparse.SUPPRESS]
        for action in shown:
            action.required = True
        try:
            return render()
        finally:
            for action in shown:
                action.required = False

    def error(self, message: str) -> NoReturn:
        shown = printable(message).replace("\n", "\\n")  # one line, whatever the arguments held
        self.exit(EXIT_USAGE, f"memstream: error: {shown} (see {self.prog} --help)\n")


class Deprecated(argparse.Action):
    """An old spelling of a flag: it sets what the new spelling sets, and says once on stderr that it
    is deprecated and what to write instead. Hidden from ``--help``, so only the new spelling is taught."""

    def __init__(self, option_strings: list[str], dest: str, *, new: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:  # whatever type gave
        warn(f"{option_string} is deprecated; use {self.new}")
        setattr(namespace, self.dest, values)


def _require(p: argparse.ArgumentParser, dest: str, flag: str) -> None:
    if not isinstance(p, Parser):  # every parser of ours is one; a plain one would silently not require
        raise TypeError(f"{p.prog} is not a memstream Parser")
    p.required_flags[dest] = flag


def agent_flag(p: argparse.ArgumentParser, *, required: bool = True,
               help: str = "the agent whose memories are read or written") -> None:
    """``--agent NAME``: the one spelling for whose memories a command reads or writes (a stream's
    owner is an agent); ``--owner`` is its deprecated alias."""
    p.add_argument("--agent", metavar="NAME", help=help)
    p.add_argument("--owner", dest="agent", action=Deprecated, new="--agent NAME")
    if required:
        _require(p, "agent", "--agent NAME")


def positive_ints(text: str) -> list[int]:
    """Comma-separated positive integers, e.g. ``5,10,20``: sorted, each once."""
    try:
        ks = sorted({int(k) for k in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive integers, e.g. 5,10") from None
    if not ks or ks[0] <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive integers, e.g. 5,10")
    return ks


def cutoff_flag(p: argparse.ArgumentParser, *, default: int | list[int] = 10, several: bool = False,
                help: str = "memories to draw on") -> None:
    """``-k``: how many memories a command takes from the top (``several``: a list of cut-offs, as
    ``-k 5,10``); ``--k`` is its deprecated alias."""
    kind = positive_ints if several else positive_int
    shown = ",".join(map(str, default)) if isinstance(default, list) else default
    p.add_argument("-k", type=kind, default=default, metavar="K,K..." if several else "K",
                   help=f"{help} (default {shown})")
    p.add_argument("--k", dest="k", type=kind, action=Deprecated, new="-k")


#: ``--json`` given without a FILE: print the JSON to stdout.
STDOUT = "-"


def json_flag(p: argparse.ArgumentParser, what: str = "the results") -> None:
    """``--json [FILE]``: alone, print ``what`` as JSON on stdout instead of the text; with a FILE
    (ending in .json, so a positional argument after it is not taken for one), write it there."""
    p.add_argument("--json", nargs="?", const=STDOUT, default=None, metavar="FILE",
                   help=f"print {what} as JSON; with FILE.json, write them there")


def output_flag(p: argparse.ArgumentParser, *, required: bool, help: str) -> None:
    """``-o/--output FILE``: the file a command writes (a plot, a page, a stream); ``--out`` is its
    deprecated alias (``--out`` now means only a folder a command creates: run, fork, sweep)."""
    p.add_argument("-o", "--output", metavar="FILE", help=help)
    p.add_argument("--out", dest="output", action=Deprecated, new="-o/--output FILE")
    if required:
        _require(p, "output", "-o/--output FILE")


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


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    return value


def endpoint_flags(p: argparse.ArgumentParser) -> None:
    """How to talk to an OpenAI-compatible endpoint: a slow local server wants a long timeout."""
    p.add_argument("--timeout", type=positive_float,
                   help="seconds to wait for one model answer (default 60) [env MEMSTREAM_TIMEOUT]")
    p.add_argument("--concurrency", type=positive_int,
                   help="model requests in flight at once (default 8) [env MEMSTREAM_CONCURRENCY]")


def model_flags(p: argparse.ArgumentParser, *, cache: bool = True) -> None:
    p.add_argument("--llm", help="chat model: offline (default) or openai:MODEL [env MEMSTREAM_LLM]")
    endpoint_flags(p)
    if cache:
        cache_flags(p)
    p.add_argument("--embedder", help="minilm (default), wordllama, hash or openai:MODEL "
                   "[env MEMSTREAM_EMBEDDER]; a stream reopens with its own by default")


def gate_flag(p: argparse.ArgumentParser, *, default: str | None, what: str, shown: str = "") -> None:
    """``--gate``: the write gate and critic in front of memory (``memstream.trust``)."""
    p.add_argument("--gate", default=default, metavar="off|offline|MODEL",
                   help=f"the write gate and critic in front of {what}: off, offline (generic pattern rules, a "
                        f"stand-in) or a model spec such as openai:MODEL (default {shown or default})")


def cache_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", metavar="FILE", help="the model-call cache (default: STREAM.calls.db beside the "
                   "stream, for any model but the offline rules): a re-run pays nothing")
    p.add_argument("--no-cache", action="store_true", help="call the model every time")


#: The components ``--weights`` can name, short and long, by their long (``Weights``) names.
COMPONENTS = {"rec": "recency", "imp": "importance", "rel": "relevance", "time": "time", "bm25": "bm25"}
_LONG = {long: long for long in COMPONENTS.values()}


@dataclass(frozen=True, eq=False)  # argparse looks its type up in a dict: hashed by identity
class WeightSpec:
    """What one command's ``--weights`` takes: its components (short names, in the order the old
    positional form gave them) and their defaults. Names left out keep their defaults."""

    takes: tuple[str, ...] = ("rec", "imp", "rel", "time")
    defaults: dict[str, float] = field(default_factory=lambda: {"rec": 1.0, "imp": 1.0, "rel": 1.0, "time": 0.0})
    #: What the deprecated positional form meant by the numbers it left out, where that differs from
    #: ``defaults`` (interview weighs time by default, but its ``1,1,1`` always meant time 0).
    by_position: dict[str, float] = field(default_factory=dict)

    def example(self) -> str:
        return ",".join(f"{n}={self.defaults.get(n, 0):g}" for n in self.takes)

    def __call__(self, text: str) -> dict[str, float]:
        """Parse ``rec=1,imp=1,rel=2`` (or the deprecated ``1,1,2``) into long names -> weights;
        a mistake is an ``ArgumentTypeError``: one line naming the components this command takes."""
        return {COMPONENTS[n]: v for n, v in self.read(text).items()}

    def read(self, text: str) -> dict[str, float]:
        parts = [part.strip() for part in text.split(",")]
        named = [part for part in parts if "=" in part]
        if named and len(named) < len(parts):
            raise self._bad(text, "mixes named and positional weights")
        values = {n: self.defaults.get(n, 0.0) for n in self.takes}
        if named:
            seen: set[str] = set()
            for part in parts:
                name, _, number = (x.strip() for x in part.partition("="))
                short = {v: k for k, v in COMPONENTS.items()}.get(_LONG.get(name.lower(), ""), name.lower())
                if short not in self.takes:
                    raise self._bad(text, f"has {name!r}, which this command does not take")
                if short in seen:
                    raise self._bad(text, f"names {short} twice")
                seen.add(short)
                values[short] = self._number(text, number)
            return values
        if not 3 <= len(parts) <= len(self.takes):
            count = "3" if len(self.takes) == 3 else f"3 to {len(self.takes)}"
            raise self._bad(text, f"has {len(parts)} numbers, not {count} ({','.join(self.takes)})")
        values |= self.by_position
        for name, number in zip(self.takes, parts, strict=False):
            values[name] = self._number(text, number)
        given = ",".join(f"{n}={values[n]:g}" for n in self.takes[:len(parts)])
        warn(f"--weights {text} by position is deprecated; name the components: --weights {given}")
        return values

    def _number(self, text: str, number: str) -> float:
        try:
            value = float(number)
        except ValueError:
            raise self._bad(text, f"has {number!r}, which is not a number") from None
        if not math.isfinite(value) or not 0 <= value <= 1e6:
            raise self._bad(text, f"has {number}; a weight is a number from 0 to 1e6")
        return value

    def _bad(self, text: str, problem: str) -> argparse.ArgumentTypeError:
        return argparse.ArgumentTypeError(f"{text!r} {problem}; name the components this command takes, "
                                          f"{', '.join(self.takes)}, e.g. {self.example()}")


def weight_flags(p: argparse.ArgumentParser, spec: WeightSpec | None = None, *, keep: bool = False) -> None:
    """``--weights`` and ``--decay`` as ``spec`` reads them. ``args.weights`` is a dict of long
    component names (the defaults when not given); with ``keep`` both are None unless given (a run
    keeps its own)."""
    spec = spec or WeightSpec()
    default = None if keep else {COMPONENTS[n]: spec.defaults.get(n, 0.0) for n in spec.takes}
    p.add_argument("--weights", metavar=",".join(f"{n}=W" for n in spec.takes), type=spec, default=default,
                   help=f"weights of the components, by name ({', '.join(spec.takes)}); names left out keep "
                        f"their defaults ({spec.example()}); time weighs a memory inside the span of time the "
                        "query names, e.g. 'yesterday'")
    p.add_argument("--decay", type=float, default=None if keep else 0.995, help="recency decay per hour (0.995)")


def parse_weights(args: argparse.Namespace):  # Weights, imported lazily
    """The stream's ``Weights`` from ``--weights`` (already parsed by its ``WeightSpec``) and ``--decay``."""
    from pydantic import ValidationError

    from memstream.stream import Weights

    decay = 0.995 if args.decay is None else args.decay
    given = args.weights if args.weights is not None else {}
    try:
        return Weights(**given, decay=decay)
    except ValidationError:
        raise MemstreamError(f"--decay {args.decay} is invalid; give a decay in (0, 1], e.g. 0.995") from None


def no_touch_reason(path: str) -> str | None:
    """Why ``recall`` must not record accesses in ``path`` (a run's stream, which goes on from its
    checkpoint; a file on read-only media), or None where it may."""
    from memstream.sim import RunFiles

    run = RunFiles.of_stream(path)
    if run is not None:
        return f"{path} is the stream of the run {run}"
    from memstream.sqlite import read_only_media

    if path != ":memory:" and Path(path).is_file() and read_only_media(Path(path)):
        return f"{path} is on read-only media"
    return None


def refuse_run_stream(path: str) -> None:
    """A memory written straight into a run's stream would be lost when the run resumes (it goes on
    from its checkpoint): such a write is refused, naming the command that the run carries."""
    from memstream.sim import RunFiles

    run = RunFiles.of_stream(path)
    if run is not None:
        raise MemstreamError(f"{path} is the stream of the run {run}, which goes on from its checkpoint; "
                             f"write to it with memstream whisper {run} --agent NAME \"text\"")


class Opened(NamedTuple):
    """A stream a command works on, and the model its stages ask (None when the command asks none)."""

    stream: MemoryStream
    chat: ChatModel | None


@contextmanager
def open_stream(path: str, args: argparse.Namespace, *, create: bool, chat: bool = False,
                readonly: bool = False) -> Iterator[Opened]:
    """The stream a command works on (and, with ``chat``, the model ``--llm`` names, its calls cached).
    A file this command created is removed again if the command fails before writing a memory: a
    failed command leaves nothing behind."""
    from memstream.models import make_chat_model, make_embedder
    from memstream.stream import MemoryStream

    existed = path == ":memory:" or Path(path).exists()
    embedder = make_embedder(args.embedder) if getattr(args, "embedder", None) else None
    model = make_chat_model(getattr(args, "llm", None), timeout=getattr(args, "timeout", None),
                            concurrency=getattr(args, "concurrency", None)) if chat else None
    cache = _cache_path(path, args, model)
    cache_existed = cache is None or cache.exists()
    if cache is not None:
        from memstream.models import CachedChatModel

        model = CachedChatModel(model, cache)
    stream = None
    try:
        stream = MemoryStream(path, embedder, create=create, readonly=readonly)
        yield Opened(stream, model)
    except BaseException:
        wrote = stream is not None and stream.store.next_id() > 1  # in the file, not waiting in the buffer
        if stream is not None:
            with contextlib.suppress(MemstreamError, sqlite3.Error):  # the command's own error is the one to say
                stream.close()
        if not existed and not wrote:
            for suffix in ("", "-wal", "-shm"):
                Path(path + suffix).unlink(missing_ok=True)
        if not cache_existed:
            model.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(cache) + suffix).unlink(missing_ok=True)
        raise
    stream.close()
    if model is not None and (note := answers_note(model.usage)):
        print(f"memstream: note: {note}", file=sys.stderr)
    if cache is not None:
        model.close()


#: How a command names what went wrong with a model's answers (``PurposeUsage`` fields).
ANSWER_TROUBLE = (("retried", "retried with the problem named"),
                  ("implausible", "refused by a sense check (docs/sense-checks.md)"), ("partial", "salvaged in part"),
                  ("stretched", "stretched to fill their span"), ("truncated", "cut at their bound"),
                  ("unusable", "unreadable twice"), ("failed", "failed"))


def answers_note(usage: Usage) -> str | None:
    """One line saying which answers a command had to retry, salvage or do without, per purpose;
    None when every answer was usable as given (a command must not hide that a model struggled)."""
    parts = []
    for counter, words in ANSWER_TROUBLE:
        counts = {p: getattr(u, counter) for p, u in sorted(usage.by_purpose.items()) if getattr(u, counter)}
        if counts:
            parts.append(f"{words}: " + ", ".join(f"{p} {n}" for p, n in counts.items()))
    return "the model's answers " + "; ".join(parts) if parts else None


def _cache_path(path: str, args: argparse.Namespace, model: object) -> Path | None:
    """Where the CLI keeps a stream's model calls: ``--cache``, else beside the stream for a real model."""
    if model is None or getattr(args, "no_cache", False):
        return None
    if getattr(args, "cache", None):
        return Path(args.cache)
    if path == ":memory:" or getattr(model, "name", "").startswith("offline"):
        return None
    return Path(path + ".calls.db")


def parse_time_arg(text: str | None, what: str) -> datetime | None:
    from memstream.timeutil import parse_time

    return parse_time(text, what) if text is not None else None



def short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


#: Characters a terminal would act on rather than show (escape sequences, bidi overrides ...),
#: shown as escapes instead: a memory's text cannot recolour, move or rewrite the screen.
_HIDDEN = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0b, 0x20), 0x7f, *range(0x80, 0xa0)]}
_HIDDEN.update({c: f"\\u{c:04x}" for c in [*range(0x202a, 0x202f), *range(0x2066, 0x206a), 0x200b, 0x200e, 0x200f]})


def printable(text: str) -> str:
    shown = text.translate(_HIDDEN)
    try:
        shown.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (from bytes that were not UTF-8): shown as an escape
        shown = shown.encode("utf-8", "backslashreplace").decode("utf-8")
    return shown


class Printable:
    """A text stream that shows control characters as escapes (newlines and tabs pass)."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        return self.inner.write(printable(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)



