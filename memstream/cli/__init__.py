"""The ``memstream`` command line. Every user mistake ends in one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from collections.abc import Callable, Sequence

from memstream import __version__
from memstream.cli.commands import (
    add,
    demo,
    facts,
    inspect,
    interview,
    measure,
    memory,
    plan,
    plot,
    profile,
    provenance,
    recall,
    reflect,
    replay,
    run,
    serve,
    sweep,
    view,
)
from memstream.cli.commands import eval as evaluate  # as its own name, the module would hide the builtin eval
from memstream.cli.parser import EXIT_USAGE, Parser
from memstream.cli.text import Printable, printable
from memstream.errors import MemstreamError

Handler = Callable[[argparse.Namespace], int]

#: The command modules, in the order ``memstream --help`` lists their commands.
COMMANDS = (add, recall, inspect, demo, reflect, plan, run, replay, interview, measure, sweep, view, plot, evaluate,
            profile, facts, memory, provenance, serve)


class _Prefixed(logging.Formatter):
    """Log records as our stderr lines: ``memstream: warning: ...``, the prefix of every warning."""

    def format(self, record: logging.LogRecord) -> str:
        return f"memstream: {record.levelname.lower()}: {record.name}: {super().format(record)}"


def _log_to_stderr() -> None:
    if not logging.root.handlers:  # as basicConfig: a host that set up logging keeps its own
        handler = logging.StreamHandler()
        handler.setFormatter(_Prefixed("%(message)s"))
        logging.root.addHandler(handler)
        logging.root.setLevel(logging.WARNING)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    parser = Parser(prog="memstream", description="The Generative Agents memory stream, measured.")
    parser.add_argument("--version", action="version", version=f"memstream {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    handlers: dict[str, Handler] = {}
    for command in COMMANDS:
        handlers.update(command.register(sub))
    return parser, handlers


def _unusable_argument(argv: Sequence[str]) -> str | None:
    """Why an argument cannot be used at all, or None.

    No shell passes a NUL, but a program calling `main` may; bytes that are not UTF-8 reach Python as lone
    surrogates, which no stored text, name or JSON line can hold. Both are refused before anything opens.
    """
    for argument in argv:
        if "\x00" in argument:
            return f"the argument {printable(argument)!r} holds a NUL character; remove it"
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            shown = argument.encode("utf-8", "backslashreplace").decode("utf-8")
            return f"the argument '{shown}' is not UTF-8 text; pass it in UTF-8 (check the terminal's encoding)"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    _log_to_stderr()
    parser, handlers = build_parser()
    refusal = _unusable_argument(sys.argv[1:] if argv is None else argv)
    if refusal is not None:
        print(f"memstream: error: {refusal}", file=sys.stderr)
        return EXIT_USAGE
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and getattr(args, "question", "") is None and len(extra) == 1 and not extra[0].startswith("-"):
            args.question = extra.pop()  # an optional positional after options (argparse would refuse it)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as stop:  # argparse: --help (0) or a usage error (2)
        return int(stop.code or 0)
    sys.stdout = Printable(sys.stdout)
    try:
        return handlers[args.command](args)
    except MemstreamError as e:
        print(f"memstream: error: {printable(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.DatabaseError as e:  # a file damaged under us, after it opened
        print(f"memstream: error: a stream file is damaged ({printable(str(e))}); run memstream check on it",
              file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except OSError as e:  # the file system said no: permissions, a full disk, a vanished folder
        where = f" {e.filename}" if e.filename else ""
        print(f"memstream: error: cannot use{printable(where)}: {e.strerror or e}; check the path and its "
              "permissions", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("memstream: warning: interrupted; everything committed before this is kept", file=sys.stderr)
        return 130
    finally:
        if isinstance(sys.stdout, Printable):
            sys.stdout = sys.stdout.inner
