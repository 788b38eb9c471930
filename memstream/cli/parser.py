"""The parser every command is built on: one-line errors with exit 2, deprecated spellings, required flags.

Old spellings of a flag are still accepted by ``Deprecated`` actions that say so in one
``memstream: warning:`` line; a flag with such an alias is required through ``require``, which
any of its spellings satisfies.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from memstream.cli.text import printable

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


def require(p: argparse.ArgumentParser, dest: str, flag: str) -> None:
    """Make ``dest`` required under any of its spellings, ``flag`` being the one a missing-flag error shows."""
    if not isinstance(p, Parser):  # every parser of ours is one; a plain one would silently not require
        raise TypeError(f"{p.prog} is not a memstream Parser")
    p.required_flags[dest] = flag
