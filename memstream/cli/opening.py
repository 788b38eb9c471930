"""Opening the stream a command works on: the model it asks, its call cache, and what must not be written.

A command that fails leaves nothing behind (a stream or a cache it created is removed again); a
run's stream is never written behind the run's back; a model that struggled says so in one note.
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, NamedTuple, TypeVar, overload

from memstream.errors import MemstreamError

if TYPE_CHECKING:
    from memstream.models import CachedChatModel, ChatModel, Usage
    from memstream.stream import MemoryStream


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


#: The model of an ``Opened``: a ``ChatModel`` when the command asked for one, else ``ChatModel | None``.
Chat = TypeVar("Chat", bound="ChatModel | None", covariant=True)


class Opened(NamedTuple, Generic[Chat]):
    """A stream a command works on, and the model its stages ask (None when the command asks none)."""

    stream: MemoryStream
    chat: Chat


@overload
def open_stream(path: str, args: argparse.Namespace, *, create: bool, chat: Literal[True],
                readonly: bool = False) -> AbstractContextManager[Opened[ChatModel]]: ...
@overload
def open_stream(path: str, args: argparse.Namespace, *, create: bool, chat: bool = False,
                readonly: bool = False) -> AbstractContextManager[Opened[ChatModel | None]]: ...
def open_stream(path: str, args: argparse.Namespace, *, create: bool, chat: bool = False,
                readonly: bool = False) -> AbstractContextManager[Opened[ChatModel | None]]:
    """The stream a command works on (and, with ``chat``, the model ``--llm`` names, its calls cached).
    A file this command created is removed again if the command fails before writing a memory: a
    failed command leaves nothing behind."""
    return _opened(path, args, create=create, chat=chat, readonly=readonly)


@contextmanager
def _opened(path: str, args: argparse.Namespace, *, create: bool, chat: bool,
            readonly: bool) -> Iterator[Opened[ChatModel | None]]:
    from memstream.models import make_chat_model, make_embedder
    from memstream.stream import MemoryStream

    existed = path == ":memory:" or Path(path).exists()
    embedder = make_embedder(args.embedder) if getattr(args, "embedder", None) else None
    model = make_chat_model(getattr(args, "llm", None), timeout=getattr(args, "timeout", None),
                            concurrency=getattr(args, "concurrency", None)) if chat else None
    cache = cache_path(path, args, model)
    cache_existed = cache is None or cache.exists()
    cached: CachedChatModel | None = None
    if model is not None and cache is not None:
        from memstream.models import CachedChatModel

        model = cached = CachedChatModel(model, cache)
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
        if cached is not None and not cache_existed:
            cached.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(cache) + suffix).unlink(missing_ok=True)
        raise
    stream.close()
    if model is not None and (note := answers_note(model.usage)):
        print(f"memstream: note: {note}", file=sys.stderr)
    if cached is not None:
        cached.close()


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


def cache_path(path: str, args: argparse.Namespace, model: object) -> Path | None:
    """Where the CLI keeps a stream's model calls: ``--cache``, else beside the stream for a real model."""
    if model is None or getattr(args, "no_cache", False):
        return None
    if getattr(args, "cache", None):
        return Path(args.cache)
    if path == ":memory:" or getattr(model, "name", "").startswith("offline"):
        return None
    return Path(path + ".calls.db")
