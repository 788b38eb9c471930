"""Reading the profile design's answers strictly: a summary's lines, an updater's edits, a merged file.

An edit list that is not the schema (an unknown op, a missing field, too many edits) is refused whole
and the runner asks again with the error; an edit that parses but cannot be applied is the caller's to
reject (:func:`memstream.designs.profile.text.apply_edit`), one by one.
"""

from __future__ import annotations

import re

from memstream.designs.profile import prompts
from memstream.designs.profile.text import HEADING, MAX_LINE_CHARS, Edits
from memstream.errors import StructuredOutputError
from memstream.models import parse_structured, register_answer_schema

register_answer_schema(prompts.UPDATE_PURPOSE, Edits)

_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")
_FENCE = re.compile(r"^```[a-z]*\s*$|^```\s*$", re.MULTILINE)


def parse_summary(answer: str) -> list[str]:
    """The summary's lines (list markers dropped), at most ``SUMMARY_LINES`` of them, each cut to a line's length."""
    lines = [_ITEM.sub("", line).strip() for line in answer.splitlines()]
    lines = [line[:MAX_LINE_CHARS] for line in lines if line and not line.lower().startswith("summary")]
    if not lines:
        raise StructuredOutputError("the summary is empty")
    return lines[:prompts.SUMMARY_LINES]


def parse_edits(answer: str) -> Edits:
    if "{" not in answer:
        raise StructuredOutputError(f'no JSON object in the answer; answer {{"edits": [...]}} (began {answer[:60]!r})')
    return parse_structured(answer, Edits)


def parse_merged(answer: str) -> str:
    """The merged file as text (code fences and text around the headings dropped); the caller checks
    its skeleton and every line."""
    text = _FENCE.sub("", answer).replace(prompts.FILE_OPEN, "").replace(prompts.FILE_CLOSE, "")
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith(HEADING)), None)
    if first is None:
        raise StructuredOutputError(f"the merged file has no '{HEADING}' section heading; answer with the whole file")
    kept = [line.rstrip() for line in lines[first:] if line.strip()]
    return "".join(f"{line}\n" for line in kept)
