"""``--weights`` and ``--decay``: the retrieval score's weights by named component, as each command takes them.

Each command says which components it weighs and their defaults with a ``WeightSpec``; the old
positional form (``1,1,2``) is still read, with a warning naming the components.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memstream.cli.parser import warn
from memstream.errors import MemstreamError
from memstream.weight_text import RUN_COMPONENTS, WeightTextError, read_named, weight_number
from memstream.weight_text import WEIGHT_COMPONENTS as COMPONENTS

if TYPE_CHECKING:
    from memstream.stream import Weights


@dataclass(frozen=True, eq=False)  # argparse looks its type up in a dict: hashed by identity
class WeightSpec:
    """What one command's ``--weights`` takes: its components (short names, in the order the old
    positional form gave them) and their defaults. Names left out keep their defaults."""

    takes: tuple[str, ...] = RUN_COMPONENTS
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
            try:
                return read_named(parts, self.takes, values)
            except WeightTextError as e:
                raise self._bad(text, str(e)) from None
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
            return weight_number(number)
        except WeightTextError as e:
            raise self._bad(text, str(e)) from None

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


def parse_weights(args: argparse.Namespace) -> Weights:
    """The stream's ``Weights`` from ``--weights`` (already parsed by its ``WeightSpec``) and ``--decay``."""
    from pydantic import ValidationError

    from memstream.stream import Weights

    decay = 0.995 if args.decay is None else args.decay
    given = args.weights if args.weights is not None else {}
    try:
        return Weights(**given, decay=decay)
    except ValidationError:
        raise MemstreamError(f"--decay {args.decay} is invalid; give a decay in (0, 1], e.g. 0.995") from None
