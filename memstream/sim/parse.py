"""Reading dialogue answers: JSON, or plain text taken as the utterance itself."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from memstream.errors import StructuredOutputError
from memstream.models.base import parse_structured


class Talk(BaseModel):
    talk: bool


class Turn(BaseModel):
    utterance: str
    end: bool = False


class Summary(BaseModel):
    summary: str


def parse_talk(text: str) -> bool:
    if "{" in text:
        return parse_structured(text, Talk).talk
    head = text.strip().lower()
    if head.startswith(("yes", "no")):
        return head.startswith("yes")
    raise StructuredOutputError(f"no yes/no in the answer (began {text[:60]!r})")


def parse_turn(text: str) -> dict[str, Any]:
    if "{" in text:
        try:
            turn = parse_structured(text, Turn)
            return {"utterance": turn.utterance.strip(), "end": turn.end}
        except StructuredOutputError:
            pass
    if not text.strip():
        raise StructuredOutputError("empty utterance")
    return {"utterance": text.strip().strip('"'), "end": False}


def parse_summary(text: str) -> str:
    if "{" in text:
        try:
            return parse_structured(text, Summary).summary.strip()
        except StructuredOutputError:
            pass
    if not text.strip():
        raise StructuredOutputError("empty summary")
    return text.strip()
