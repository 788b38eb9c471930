"""The flags more than one command takes, each defined once, and the value types they parse.

Every shared flag is added by a helper the commands call (``agent_flag``, ``cutoff_flag``,
``json_flag``, ``output_flag``, ``model_flags``, ...; ``weight_flags`` lives in ``weights``):
a flag means one thing, spelled one way, in every command. Old spellings are still accepted by
``Deprecated`` actions that say so in one ``memstream: warning:`` line.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from memstream.cli.outputs import STDOUT
from memstream.cli.parser import Deprecated, require
from memstream.errors import MemstreamError
from memstream.stream import normalise_owner


def agent_flag(p: argparse.ArgumentParser, *, required: bool = True,
               help: str = "the agent whose memories are read or written") -> None:
    """``--agent NAME``: the one spelling for whose memories a command reads or writes (a stream's
    owner is an agent); ``--owner`` is its deprecated alias."""
    p.add_argument("--agent", metavar="NAME", type=agent_name, help=help)
    p.add_argument("--owner", dest="agent", type=agent_name, action=Deprecated, new="--agent NAME")
    if required:
        require(p, "agent", "--agent NAME")


def agent_name(text: str) -> str:
    """An agent's (an owner's) name as every store keeps it; an empty one, or one with control or invisible
    characters, is refused here, before anything is opened."""
    try:
        return normalise_owner(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def scope_text(text: str) -> str:
    """A tenant or scope key: plain text (empty for none), no control or invisible characters."""
    if not text.strip():
        return ""
    try:
        return normalise_owner(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r:.60} holds invisible or control characters; "
                                         "write the key in plain letters") from None


#: The largest id a store holds (SQLite's INTEGER): a larger one names nothing and is refused as a flag.
MAX_ID = 2**63 - 1

#: The most memories (or facts) ``-k`` may ask for: more than any stream a person reads, and far fewer than
#: would make a command run on (a huge ``-k`` once did).
MAX_K = 10_000


def positive_ints(text: str) -> list[int]:
    """Comma-separated positive integers, e.g. ``5,10,20``: sorted, each once."""
    try:
        ks = sorted({int(k) for k in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive integers, e.g. 5,10") from None
    if not ks or ks[0] <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive integers, e.g. 5,10")
    return ks


def cutoff(text: str) -> int:
    """One ``-k``: a positive whole number up to :data:`MAX_K`."""
    value = positive_int(text)
    if value > MAX_K:
        raise argparse.ArgumentTypeError(f"{text[:20]} is over the most -k takes, {MAX_K:,}")
    return value


def cutoffs(text: str) -> list[int]:
    """Several ``-k``: positive whole numbers up to :data:`MAX_K`."""
    ks = positive_ints(text)
    if ks[-1] > MAX_K:
        raise argparse.ArgumentTypeError(f"{str(ks[-1])[:20]} is over the most -k takes, {MAX_K:,}")
    return ks


def cutoff_flag(p: argparse.ArgumentParser, *, default: int | list[int] = 10, several: bool = False,
                help: str = "memories to draw on") -> None:
    """``-k``: how many memories a command takes from the top (``several``: a list of cut-offs, as
    ``-k 5,10``); ``--k`` is its deprecated alias."""
    kind = cutoffs if several else cutoff
    shown = ",".join(map(str, default)) if isinstance(default, list) else default
    p.add_argument("-k", type=kind, default=default, metavar="K,K..." if several else "K",
                   help=f"{help} (default {shown})")
    p.add_argument("--k", dest="k", type=kind, action=Deprecated, new="-k")


def json_flag(p: argparse.ArgumentParser, what: str = "the results") -> None:
    """``--json [FILE]``: alone, print ``what`` as JSON on stdout instead of the text; with a FILE
    (ending in .json, so a positional argument after it is not taken for one), write it there."""
    p.add_argument("--json", nargs="?", const=STDOUT, default=None, metavar="FILE",
                   help=f"print {what} as JSON; with FILE.json, write them there")


def folder_path(text: str) -> str:
    """A folder a command makes (``--out`` of run, fork, sweep): an empty or blank one names none (it was
    taken as the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; name the folder to make")
    return text


def output_flag(p: argparse.ArgumentParser, *, required: bool, help: str) -> None:
    """``-o/--output FILE``: the file a command writes (a plot, a page, a stream); ``--out`` is its
    deprecated alias (``--out`` now means only a folder a command creates: run, fork, sweep)."""
    p.add_argument("-o", "--output", metavar="FILE", help=help)
    p.add_argument("--out", dest="output", action=Deprecated, new="-o/--output FILE")
    if required:
        require(p, "output", "-o/--output FILE")


def positive_int(text: str) -> int:
    if not text.strip().lstrip("+-").isascii():  # int() takes digits of every script; a flag takes 0-9
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def record_id(text: str) -> int:
    """An id of something a store holds (a fact, a memory): a positive integer SQLite can hold."""
    value = positive_int(text)
    if value > MAX_ID:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_ID} (the largest id a store holds), got {value}")
    return value


def record_flag(p: argparse.ArgumentParser, help: str = "the record's id (what a context's provenance and export name)"
                ) -> None:
    """``--record ID``: one record of a store, by its id."""
    p.add_argument("--record", required=True, type=record_id, metavar="ID", help=help)


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


def model_flags(p: argparse.ArgumentParser, *, cache: bool = True,
                embedder: str = "; a stream reopens with its own by default") -> None:
    p.add_argument("--llm", help="chat model: offline (default) or openai:MODEL [env MEMSTREAM_LLM]")
    endpoint_flags(p)
    if cache:
        cache_flags(p)
    embedder_flag(p, embedder)


def embedder_flag(p: argparse.ArgumentParser, also: str = "; a stream reopens with its own by default") -> None:
    """``--embedder SPEC``: the embedder relevance is measured with."""
    p.add_argument("--embedder", help=f"minilm (default), wordllama, hash or openai:MODEL "
                   f"[env MEMSTREAM_EMBEDDER]{also}")


def gate_flag(p: argparse.ArgumentParser, *, default: str | None, what: str, shown: str = "") -> None:
    """``--gate``: the write gate and critic in front of memory (``memstream.trust``)."""
    p.add_argument("--gate", default=default, metavar="off|offline|MODEL",
                   help=f"the write gate and critic in front of {what}: off, offline (generic pattern rules, a "
                        f"stand-in) or a model spec such as openai:MODEL (default {shown or default})")


def cache_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", metavar="FILE", help="the model-call cache (default: STREAM.calls.db beside the "
                   "stream, for any model but the offline rules): a re-run pays nothing")
    p.add_argument("--no-cache", action="store_true", help="call the model every time")


def parse_time_arg(text: str | None, what: str) -> datetime | None:
    from memstream.timeutil import parse_time

    return parse_time(text, what) if text is not None else None


def at_flag(p: argparse.ArgumentParser, help: str = "ISO time with zone (default: now, UTC)") -> None:
    """``--at TIME``: when a command's write or read happens (checked by :func:`parse_time_arg`)."""
    p.add_argument("--at", metavar="TIME", help=help)


#: The largest context budget a command takes, in tokens: beyond any model's context window.
MAX_BUDGET = 10_000_000


def budget(text: str) -> int:
    """One ``--budget``: a positive number of tokens up to :data:`MAX_BUDGET`."""
    value = positive_int(text)
    if value > MAX_BUDGET:
        raise argparse.ArgumentTypeError(f"{text[:20]} tokens is over the largest budget, {MAX_BUDGET:,}")
    return value


def budget_flag(p: argparse.ArgumentParser, *, default: int, help: str = "the context's budget in tokens") -> None:
    """``--budget N``: how many tokens a context may take."""
    p.add_argument("--budget", type=budget, default=default, metavar="N", help=f"{help} (default {default})")


def yes_flag(p: argparse.ArgumentParser, what: str) -> None:
    """``--yes``: do ``what`` without asking (needed when stdin is not a terminal to ask on)."""
    p.add_argument("--yes", action="store_true", help=f"{what} without asking for confirmation")


def settings_pairs(text: str) -> dict[str, str]:
    """``KEY=VALUE,KEY=VALUE``: settings by name, values as text (the design's settings type reads them).
    A value in braces or brackets (a JSON object or list) may hold commas."""
    pairs: dict[str, str] = {}
    for part in _top_level_commas(text):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise argparse.ArgumentTypeError(f"{part.strip()[:40]!r} is not KEY=VALUE, e.g. turns=10,batch=5")
        pairs[key.strip()] = value.strip()
    if not pairs:
        raise argparse.ArgumentTypeError("give settings as KEY=VALUE, e.g. turns=10,batch=5")
    return pairs


def _top_level_commas(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == "," and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def design_config_flag(p: argparse.ArgumentParser) -> None:
    """``--design-config KEY=VALUE,...``: a design's settings (its ``Config``'s fields); repeatable."""
    p.add_argument("--design-config", type=settings_pairs, action="append", default=[], metavar="KEY=VALUE,...",
                   help="the design's settings, e.g. turns=10,batch=5 for buffer-summary (a JSON value for an "
                        "object: weights={...}); a store keeps the settings it was made with unless --reconfigure")
    p.add_argument("--reconfigure", action="store_true",
                   help="change the store's recorded settings of the design to --design-config's (recorded)")


def design_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings ``--design-config`` gave (later ones win), JSON objects and lists read as such."""
    import json

    merged: dict[str, Any] = {}
    for pairs in args.design_config:
        for key, value in pairs.items():
            if value[:1] in "{[":
                try:
                    merged[key] = json.loads(value)
                except ValueError:
                    raise MemstreamError(f"--design-config {key}: {value[:40]!r} is not JSON; write e.g. "
                                         f'{key}={{"rec": 1}}') from None
            else:
                merged[key] = value
    return merged
