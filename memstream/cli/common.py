"""What every command shares: one-line errors, argument types, model flags, opening a stream, times."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import NoReturn

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--llm", help="chat model: offline (default) or openai:MODEL [env MEMSTREAM_LLM]")
    p.add_argument("--embedder", help="minilm (default), wordllama, hash or openai:MODEL "
                   "[env MEMSTREAM_EMBEDDER]; a stream reopens with its own by default")


def weight_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--weights", metavar="REC,IMP,REL", default="1,1,1",
                   help="weights of recency, importance and relevance (default 1,1,1)")
    p.add_argument("--decay", type=float, default=0.995, help="recency decay per hour (0.995)")



def open_stream(path: str, args: argparse.Namespace, *, create: bool, chat: bool = False):  # noqa: ANN202
    from memstream.models import make_chat_model, make_embedder
    from memstream.stream import MemoryStream

    embedder = make_embedder(args.embedder) if getattr(args, "embedder", None) else None
    model = make_chat_model(getattr(args, "llm", None)) if chat else None
    return MemoryStream(path, embedder, chat=model, create=create)


def parse_time_arg(text: str | None, what: str) -> datetime | None:
    from memstream.timeutil import parse_time

    return parse_time(text, what) if text is not None else None



def short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"

