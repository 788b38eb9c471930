"""Reading the designs' answers."""

from __future__ import annotations

from memstream.errors import StructuredOutputError


def parse_summary(answer: str) -> str:
    """A summary is any non-empty text (a leading "New summary:" label is dropped)."""
    text = " ".join(answer.split())
    for label in ("New summary:", "Summary:"):
        if text.lower().startswith(label.lower()):
            text = text[len(label):].strip()
    if not text:
        raise StructuredOutputError("the summary is empty")
    return text
