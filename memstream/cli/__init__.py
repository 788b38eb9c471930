"""The ``memstream`` command line. Every user mistake ends in one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from memstream.cli import agents, measure, stream
from memstream.cli.common import EXIT_USAGE, Parser
from memstream.errors import MemstreamError

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    parser = Parser(prog="memstream", description="The Generative Agents memory stream, measured.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    handlers: dict[str, Handler] = {}
    for group in (stream, agents, measure):
        handlers.update(group.register(sub))
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="memstream: %(levelname)s: %(name)s: %(message)s")
    parser, handlers = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse: --help (0) or a usage error (2)
        return int(stop.code or 0)
    try:
        return handlers[args.command](args)
    except MemstreamError as e:
        print(f"memstream: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("memstream: interrupted; everything committed before this is kept", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0



