"""The profile file: a fixed skeleton of sections, bullet lines under them, and the edits that change it.

The file is plain text the model reads whole on every request::

    # profile
    - [user] Prefers metric units.
    # goals
    - Ship the importer by Friday.
      - checkpoint: parser done, tests pending.
    # projects
    ...

Each section heading is ``# NAME`` (``##`` is a context's own block heading) and appears once, in the
skeleton's order; every other line is a bullet (``- ``) or, under a goal, a checkpoint (``  - ``).
``[user]`` marks a fact the user stated directly (compaction keeps it ahead of the model's own
inferences); ``(done)`` marks a finished goal.

A model never rewrites the file: it returns edits (:class:`Add` after an anchor, :class:`Replace` of one
exact string, a replace with ``""`` deleting it), each applied here with the rules the production
designs use: an anchor or an old string must match **exactly once**, else the edit is rejected with a
reason the model is shown when it is asked again. An edit may not touch the skeleton.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from memstream.errors import MemstreamError

#: The default skeleton (configurable per design): who the user is, what they are after, what they work
#: on and have, how they like things done, and what they corrected.
DEFAULT_SECTIONS = ("profile", "goals", "projects", "assets", "conventions", "corrections")
#: Hard cap on the file's length: a longer file is refused and the last good one stays.
CAP_CHARS = 8_000
#: Past this length the file is compacted ...
COMPACT_AT = 7_000
#: ... toward this length.
COMPACT_TO = 6_000
USER = "[user]"
DONE = "(done)"
HEADING = "# "
BULLET = "- "
CHECKPOINT = "  - "
#: Edits one answer may hold (a turn rarely warrants more; a bound keeps a runaway answer out).
MAX_EDITS = 12
#: A line's longest text (a bullet is a fact, not a document).
MAX_LINE_CHARS = 500


class EditRejected(MemstreamError):
    """An edit that cannot be applied; its message is shown to the model when it is asked again."""


class Add(BaseModel):
    """Insert ``text`` (one or more lines) after the line that holds ``after``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    op: Literal["add"]
    after: str = Field(min_length=1, max_length=MAX_LINE_CHARS)
    text: str = Field(min_length=1, max_length=2 * MAX_LINE_CHARS)


class Replace(BaseModel):
    """Replace the one occurrence of ``old`` with ``new``; ``new=""`` deletes it (and its line, if emptied)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    op: Literal["replace"]
    old: str = Field(min_length=1, max_length=2 * MAX_LINE_CHARS)
    new: str = Field(default="", max_length=2 * MAX_LINE_CHARS)


Edit = Annotated[Add | Replace, Field(discriminator="op")]


class Edits(BaseModel):
    """An updater's answer: the edits to make (none when the turn holds nothing worth keeping)."""

    model_config = ConfigDict(extra="forbid")
    edits: list[Edit] = Field(default_factory=list, max_length=MAX_EDITS)


def skeleton(sections: Sequence[str] = DEFAULT_SECTIONS) -> str:
    """The empty file: every section heading, in order."""
    return "".join(f"{HEADING}{name}\n" for name in sections)


def check_sections(sections: Sequence[str]) -> tuple[str, ...]:
    """Section names as a skeleton takes them: at least one, distinct, one lower-case word each."""
    names = tuple(sections)
    if not names or len(set(names)) != len(names) or not all(n.isidentifier() and n == n.lower() for n in names):
        raise MemstreamError(f"profile sections must be distinct lower-case words, e.g. "
                             f"{','.join(DEFAULT_SECTIONS)}; got {','.join(names) or 'none'}")
    return names


def check_file(text: str, sections: Sequence[str]) -> None:
    """Refuse a file that is not the skeleton with bullet lines under it (a rejected edit's reason)."""
    headings = [line[len(HEADING):] for line in text.splitlines() if line.startswith(HEADING)]
    if headings != list(sections):
        raise EditRejected(f"the section headings must stay exactly {', '.join(HEADING + s for s in sections)}; "
                           "edit only the lines under them")
    for line in text.splitlines():
        if line.startswith(HEADING):
            continue
        if not (line.startswith(BULLET) or line.startswith(CHECKPOINT)) or not line.lstrip(" -").strip():
            raise EditRejected(f"every line under a heading must be a bullet '- fact' (or '  - checkpoint' under "
                               f"a goal); {line[:60]!r} is not")
        if len(line) > MAX_LINE_CHARS:
            raise EditRejected(f"a line may hold at most {MAX_LINE_CHARS} characters; split or shorten it")


def apply_edit(text: str, edit: Add | Replace, sections: Sequence[str]) -> str:
    """``text`` with ``edit`` made; :class:`EditRejected` naming why it cannot be."""
    result = _add(text, edit) if isinstance(edit, Add) else _replace(text, edit)
    check_file(result, sections)
    return result


def _matches_once(text: str, needle: str, what: str) -> int:
    count = text.count(needle)
    if count == 0:
        raise EditRejected(f"the {what} {needle[:80]!r} is not in the file; copy it exactly from a line of the file")
    if count > 1:
        raise EditRejected(f"the {what} {needle[:80]!r} matches {count} times; quote more of its line so it "
                           "matches exactly once")
    return text.index(needle)


def _add(text: str, edit: Add) -> str:
    at = _matches_once(text, edit.after, "anchor")
    end = text.find("\n", at + len(edit.after))
    end = len(text) if end < 0 else end + 1
    present = set(text.splitlines())
    lines = [line for line in (as_line(x) for x in edit.text.splitlines() if x.strip()) if line not in present]
    if not lines:
        return text  # already there: nothing to add
    head = text[:end] if text[:end].endswith("\n") or not text[:end] else text[:end] + "\n"
    return head + "".join(f"{line}\n" for line in lines) + text[end:]


def _replace(text: str, edit: Replace) -> str:
    at = _matches_once(text, edit.old, "old string")
    result = text[:at] + edit.new + text[at + len(edit.old):]
    if edit.new.strip():
        return result
    kept = [line for line in result.splitlines() if line.strip() not in ("", "-")]
    return "".join(f"{line}\n" for line in kept)


def as_line(text: str) -> str:
    """One line of an edit's text as a file line: a bullet unless it is already a bullet or checkpoint."""
    if text.startswith(CHECKPOINT):
        return CHECKPOINT + " ".join(text[len(CHECKPOINT):].split())
    body = " ".join(text.split())
    if body.startswith(HEADING.strip()):
        raise EditRejected("an edit may not add a section heading; add lines under an existing one")
    return body if body.startswith(BULLET) else BULLET + body.lstrip("-* ")


def sections_of(text: str) -> list[tuple[str, list[str]]]:
    """The file as (section, its lines) in order."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(HEADING):
            out.append((line[len(HEADING):], []))
        elif out and line.strip():
            out[-1][1].append(line)
    return out


def render(parts: Sequence[tuple[str, Sequence[str]]]) -> str:
    return "".join(f"{HEADING}{name}\n" + "".join(f"{line}\n" for line in lines) for name, lines in parts)


#: Keep order, highest first (the issue's strict order): the profile and active goals, then lines the
#: user stated, then the checkpoints that tell a goal's story, then everything else.
KEEP_FIRST, KEEP_USER, KEEP_CHECKPOINT, KEEP_REST = 0, 1, 2, 3


def priority(section: str, line: str) -> int:
    """Where ``line`` of ``section`` stands in the order compaction keeps lines (lower is kept longer)."""
    body = line.lstrip(" -").strip()
    if section == "profile" or (section == "goals" and line.startswith(BULLET) and not body.startswith(DONE)):
        return KEEP_FIRST
    if body.startswith(USER):
        return KEEP_USER
    if section == "goals" and line.startswith(CHECKPOINT):
        return KEEP_CHECKPOINT
    return KEEP_REST
