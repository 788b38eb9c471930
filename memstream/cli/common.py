"""What every command shares: one-line errors, argument types, model flags, opening a stream, times."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TextIO

from memstream.errors import MemstreamError

if TYPE_CHECKING:
    from memstream.models import ChatModel
    from memstream.stream import MemoryStream

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        shown = printable(message).replace("\n", "\\n")  # one line, whatever the arguments held
        self.exit(EXIT_USAGE, f"{self.prog}: error: {shown} (see {self.prog} --help)\n")


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


def cache_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", metavar="FILE", help="the model-call cache (default: STREAM.calls.db beside the "
                   "stream, for any model but the offline rules): a re-run pays nothing")
    p.add_argument("--no-cache", action="store_true", help="call the model every time")


def weight_flags(p: argparse.ArgumentParser, default: str | None = "1,1,1") -> None:
    """--weights and --decay; with ``default=None`` they are None unless given (a run keeps its own)."""
    p.add_argument("--weights", metavar="REC,IMP,REL[,TIME]", default=default,
                   help="weights of recency, importance and relevance (1,1,1 is the paper's) and, optionally, "
                        f"of the span of time the query names, e.g. 'yesterday' (default {default or '1,1,1'})")
    p.add_argument("--decay", type=float, default=None if default is None else 0.995,
                   help="recency decay per hour (0.995)")


def parse_weights(args: argparse.Namespace):  # noqa: ANN201 - Weights, imported lazily
    from pydantic import ValidationError

    from memstream.stream import Weights

    decay = 0.995 if args.decay is None else args.decay
    try:
        parts = [float(x) for x in (args.weights or "1,1,1").split(",")]
        if len(parts) not in (3, 4):
            raise ValueError
        return Weights(**dict(zip(("recency", "importance", "relevance", "time"), parts, strict=False)),
                       decay=decay)
    except (ValueError, ValidationError):
        raise MemstreamError(f"--weights {args.weights!r} / --decay {args.decay} are invalid; give three or "
                             "four non-negative numbers like 1,1,1 or 1,1,1,1 and a decay in (0, 1]") from None



def no_touch_reason(path: str) -> str | None:
    """Why ``recall`` must not record accesses in ``path`` (a run's stream, which goes on from its
    checkpoint; a file on read-only media), or None where it may."""
    from memstream.sim import RunDir

    run = RunDir.run_of_stream(path)
    if run is not None:
        return f"{path} is the stream of the run {run}"
    from memstream.stream import read_only_media

    if path != ":memory:" and Path(path).is_file() and read_only_media(Path(path)):
        return f"{path} is on read-only media"
    return None


def refuse_run_stream(path: str) -> None:
    """A memory written straight into a run's stream would be lost when the run resumes (it goes on
    from its checkpoint): such a write is refused, naming the command that the run carries."""
    from memstream.sim import RunDir

    run = RunDir.run_of_stream(path)
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
        wrote = stream is not None and stream.count() > 0
        if stream is not None:
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
    if cache is not None:
        model.close()


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



