"""Opening the design store a ``memory`` command works on, with everything it was given checked first.

The agent, the design, its settings, the time and the entries are checked before the store is touched,
so a refused command leaves the store's bytes as they were, and a new store is made only for a command
that will write. A store is never removed again after a failure: another process may be writing to it
by then. A command that only reads opens the store read-only and refuses a design the store does not hold.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstream.cli.flags import design_settings, parse_time_arg
from memstream.cli.opening import answers_note, cache_path
from memstream.errors import MemstreamError

if TYPE_CHECKING:
    from memstream.designs import BoundDesign


def agent_of(args: argparse.Namespace) -> str:
    """``--agent`` as the store keeps it (one line if it is empty or holds control characters)."""
    from memstream.stream import normalise_owner

    try:
        return normalise_owner(args.agent)
    except ValueError as e:
        raise MemstreamError(f"--agent: {e}") from None


def design_of(args: argparse.Namespace) -> str:
    """``--design``: one known design's name."""
    from memstream.designs import DESIGNS

    if args.design not in DESIGNS:
        raise MemstreamError(f"--design {args.design!r} is not a design; use one of {', '.join(DESIGNS)}")
    return str(args.design)


def at_of(args: argparse.Namespace) -> datetime:
    return parse_time_arg(args.at, "--at") or datetime.now(UTC)


def held_designs(path: str) -> list[str]:
    """The designs the store at ``path`` holds (one line if it is no design store), read-only."""
    from memstream.designs import DesignStore, refuse_non_store

    refuse_non_store(path)
    store = DesignStore(path, read_only=True)
    try:
        return list(store.designs())
    finally:
        store.close()


def require_design(path: str, design: str) -> None:
    held = held_designs(path)
    if design not in held:
        raise MemstreamError(f"{path} holds no {design} memory (it holds {', '.join(held) or 'none yet'}); "
                             "check --design")


@contextmanager
def opened(args: argparse.Namespace, *, write: bool, chat: bool = False,
           settings: dict[str, Any] | None = None) -> Iterator[BoundDesign]:
    """The design ``--design`` bound to ``--store`` (read-only unless ``write``; a store must hold the design
    to be read), with ``--llm``'s model when ``chat`` and ``--design-config``'s settings (or ``settings``)."""
    from memstream.designs import make_design, open_design
    from memstream.models import CachedChatModel, make_chat_model, make_embedder

    name, path = design_of(args), args.store
    config = settings if settings is not None else (design_settings(args) if write else {})
    if config:
        make_design(name, **config)  # bad settings: one line before the store is touched
    if Path(path).exists() or Path(path).is_symlink() or not write:
        if write:
            from memstream.designs import refuse_non_store

            refuse_non_store(path)
        else:
            require_design(path, name)
    embedder = make_embedder(args.embedder) if getattr(args, "embedder", None) else None
    model = make_chat_model(args.llm, timeout=args.timeout, concurrency=args.concurrency) if chat else None
    cache = cache_path(path, args, model)
    cache_existed = cache is None or cache.exists()
    cached = None
    if model is not None and cache is not None:
        model = cached = CachedChatModel(model, cache)
    try:
        with open_design(name, store=path, scope=args.scope, embedder=embedder, chat=model,
                         reconfigure=getattr(args, "reconfigure", False), read_only=not write, **config) as memory:
            yield memory
    except BaseException:
        if cached is not None:
            cached.close()
            if not cache_existed:
                for suffix in ("", "-wal", "-shm"):
                    Path(str(cache) + suffix).unlink(missing_ok=True)
        raise
    if model is not None and (note := answers_note(model.usage)):
        print(f"memstream: note: {note}", file=sys.stderr)
    if cached is not None:
        with contextlib.suppress(MemstreamError):
            cached.close()


def id_runs(ids: list[int] | tuple[int, ...]) -> str:
    """Record ids as runs, ``1-4, 9``: a block drawn from a thousand records stays one line."""
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "none"
