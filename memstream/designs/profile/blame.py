"""A line's life across a file's versions: the version (and edit) that added it, and the one that removed it.

Consecutive versions are compared line by line (``difflib``); a line that survives keeps the version it
came from, a line replaced or deleted ends with the version that did it. This answers "when did this
line disappear, and which edit removed it" for a preference a later targeted edit deleted, and gives
the context its provenance: each line of the current file comes from a version, and a version from a turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from memstream.designs.profile.store import Version
from memstream.designs.profile.text import HEADING


@dataclass(frozen=True)
class Life:
    """One line of one file: its text, the version that added it, and the version that removed it (None
    while it is in the file)."""

    text: str
    added: int
    removed: int | None = None

    def to_dict(self, versions: dict[int, Version]) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.text, "added": self.added, "added_at": versions[self.added].at,
                               "added_by": versions[self.added].edit, "removed": self.removed}
        if self.removed is not None:
            out |= {"removed_at": versions[self.removed].at, "removed_by": versions[self.removed].edit}
        return out


def lives(versions: Sequence[Version]) -> tuple[list[Life], list[Life]]:
    """The current file's lines (section headings included) with the version each came from, and every
    line removed on the way, in the order they were removed."""
    alive: list[Life] = []
    gone: list[Life] = []
    before: list[str] = []
    for v in versions:
        alive, before = advance(alive, before, v, gone)
    return alive, gone


def advance(alive: list[Life], before: list[str], v: Version, gone: list[Life]) -> tuple[list[Life], list[str]]:
    """The lines' lives after version ``v`` (``alive``: after the version before, whose lines are ``before``),
    and ``v``'s lines; the lines ``v`` removed go on ``gone``."""
    lines = v.text.splitlines()
    now: list[Life] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=before, b=lines, autojunk=False).get_opcodes():
        if tag == "equal":
            now.extend(alive[i1:i2])
            continue
        gone.extend(Life(x.text, x.added, v.n) for x in alive[i1:i2])
        now.extend(Life(line, v.n) for line in lines[j1:j2])
    return now, lines


@dataclass
class Current:
    """A file's current lines with the version each came from, as of its ``count``-th version (gone on from
    at the next compaction: versions are only ever appended, so a compaction reads only the new ones)."""

    count: int = 0
    last: int = 0
    alive: list[Life] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def caught_up(self, newer: Sequence[Version]) -> Current:
        for v in newer:
            self.alive, self.lines = advance(self.alive, self.lines, v, [])
            self.count, self.last = self.count + 1, v.n
        return self


def blame(versions: Sequence[Version], match: str = "") -> list[Life]:
    """Every line that holds ``match`` (every current line if empty), current ones first, then those
    removed; section headings left out (they never change)."""
    current, removed = lives(versions)
    found = [x for x in current if match in x.text] + ([x for x in removed if match in x.text] if match else [])
    return [x for x in found if not x.text.startswith(HEADING)]
