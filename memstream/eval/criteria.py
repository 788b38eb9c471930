"""Criteria written as phrases: what a memory or an answer must mention, and what it must not.

A scenario writes each criterion twice: in words (for a model judge) and as phrases (for the
model-free checks and the offline judge). A phrase is a string, or a list of strings any one of
which will do ("pytest" or "py.test"). A text *holds* a criterion when every required phrase is
in it and no forbidden one is. Matching is on words, ignoring case and punctuation: "line
length 100" is found in "Line-length: 100", never inside another word ("100" is not in "1000").
These are generic rules that know no scenario.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def _phrase(value: str | list[str]) -> str | list[str]:
    options = [value] if isinstance(value, str) else value
    if not options:
        raise ValueError("a list of alternatives is empty; give at least one phrase")
    for option in options:
        if not words(option):
            raise ValueError(f"the phrase {option!r} has no letters or digits to match")
    return value


#: One phrase, or a list of alternatives (any one of them will do).
Phrase = Annotated[str | list[str], AfterValidator(_phrase)]


def words(text: str) -> str:
    """``text`` as the matcher reads it: lower case, every run of non-alphanumerics one space, padded."""
    joined = " ".join(_NOT_WORD.split(text.lower())).strip()
    return f" {joined} " if joined else ""


def mentions(text: str, phrase: str | Sequence[str]) -> bool:
    """Whether ``text`` holds ``phrase`` (or, for a list, any one of its alternatives) as whole words."""
    haystack = words(text)
    options = [phrase] if isinstance(phrase, str) else phrase
    return any(words(o) and words(o) in haystack for o in options)


def holds(text: str, require: Sequence[str | Sequence[str]], forbid: Sequence[str | Sequence[str]] = ()) -> bool:
    """Every required phrase is in ``text`` and no forbidden one is."""
    return all(mentions(text, p) for p in require) and not any(mentions(text, p) for p in forbid)


def missing(text: str, require: Sequence[str | Sequence[str]]) -> list[str | Sequence[str]]:
    return [p for p in require if not mentions(text, p)]


def leaked(text: str, forbid: Sequence[str | Sequence[str]]) -> list[str | Sequence[str]]:
    return [p for p in forbid if mentions(text, p)]


def render(phrases: Sequence[str | Sequence[str]]) -> str:
    """Phrases as one line of a prompt (JSON, which the offline judge reads back with :func:`parse`)."""
    return json.dumps([p if isinstance(p, str) else list(p) for p in phrases], ensure_ascii=False)


def parse(line: str) -> list[str | list[str]]:
    """:func:`render`'s output read back; an empty list for anything else."""
    try:
        value = json.loads(line)
    except ValueError:
        return []
    if not isinstance(value, list):
        return []
    return [p for p in value if isinstance(p, str) or (isinstance(p, list) and all(isinstance(x, str) for x in p))]
