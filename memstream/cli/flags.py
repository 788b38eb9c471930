"""The flags more than one command takes, each defined once, and the value types they parse.

Every shared flag is added by a helper the commands call (``agent_flag``, ``cutoff_flag``,
``json_flag``, ``output_flag``, ``model_flags``, ...; ``weight_flags`` lives in ``weights``):
a flag means one thing, spelled one way, in every command. Old spellings are still accepted by
``Deprecated`` actions that say so in one ``memstream: warning:`` line.
"""

from __future__ import annotations

import argparse
from datetime import datetime

from memstream.cli.outputs import STDOUT
from memstream.cli.parser import Deprecated, require
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


def parse_time_arg(text: str | None, what: str) -> datetime | None:
    from memstream.timeutil import parse_time

    return parse_time(text, what) if text is not None else None
