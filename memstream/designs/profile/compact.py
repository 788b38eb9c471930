"""Compaction's rules: merge redundant lines first, then drop lines in the strict keep order until the
file reaches its target.

The model is asked only to merge (what a model is good at: two lines that say one thing); which lines
go when merging is not enough is decided here, by :func:`memstream.designs.profile.text.priority`, so
the order the issue fixes cannot be broken by a model's answer: everything else first, then goal
checkpoints, then ``[user]`` lines, oldest first within each; the profile and active goals are never
dropped. If they alone exceed the target, compaction falls short and the caller keeps the last good file.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memstream.designs.profile.text import KEEP_FIRST, KEEP_REST, USER, priority, render, sections_of

_WORD = re.compile(r"\w+")


def words(line: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(line.lower().replace(USER, " ")))


def merge_redundant(text: str) -> str:
    """``text`` without lines another line of the same section already says: a line whose words all
    appear in a line kept at least as long (same or better keep order) goes; of two lines with the same
    words, the first stays. A stand-in for a model's merge that never invents a word."""
    parts = []
    for section, lines in sections_of(text):
        keyed = [(line, words(line), priority(section, line)) for line in lines]
        kept = []
        for i, (line, mine, rank) in enumerate(keyed):
            covered = any(j != i and mine <= theirs and their_rank <= rank and (mine < theirs or j < i)
                          for j, (_, theirs, their_rank) in enumerate(keyed))
            if not covered or not mine:
                kept.append(line)
        parts.append((section, kept))
    return render(parts)


def drop_to(text: str, target: int, age: Callable[[str], int] | None = None) -> tuple[str, list[str]]:
    """``text`` with lines dropped, in the keep order from the bottom (everything else, then checkpoints,
    then ``[user]`` lines; oldest first within each by ``age``, a line's version number), until it is at
    most ``target`` characters or only the profile and active goals are left; and the lines dropped."""
    parts = [(section, list(lines)) for section, lines in sections_of(text)]
    candidates = [(priority(section, line), age(line) if age else 0, s, i)
                  for s, (section, lines) in enumerate(parts) for i, line in enumerate(lines)]
    order = sorted((c for c in candidates if c[0] != KEEP_FIRST), key=lambda c: (KEEP_REST - c[0], c[1], c[2], c[3]))
    gone: set[tuple[int, int]] = set()
    dropped: list[str] = []
    size = len(text)
    for _, _, s, i in order:
        if size <= target:
            break
        gone.add((s, i))
        line = parts[s][1][i]
        dropped.append(line)
        size -= len(line) + 1
    kept = [(section, [line for i, line in enumerate(lines) if (s, i) not in gone])
            for s, (section, lines) in enumerate(parts)]
    return render(kept), dropped
