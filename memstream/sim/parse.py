"""Reading dialogue answers: JSON, or plain text taken as the utterance itself."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from memstream.errors import StructuredOutputError
from memstream.models.base import maybe_structured, parse_structured, parse_yes_no, register_answer_schema
from memstream.sim import prompts


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
    return parse_yes_no(text)


def parse_turn(text: str) -> dict[str, Any]:
    if turn := maybe_structured(text, Turn):
        return {"utterance": turn.utterance.strip(), "end": turn.end}
    if not text.strip():
        raise StructuredOutputError("empty utterance")
    return {"utterance": text.strip().strip('"'), "end": False}


def parse_summary(text: str) -> str:
    if summary := maybe_structured(text, Summary):
        return summary.summary.strip()
    if not text.strip():
        raise StructuredOutputError("empty summary")
    return text.strip()


def parse_answer(text: str) -> str:
    """An interview answer: any non-empty text."""
    if not text.strip():
        raise StructuredOutputError("empty answer")
    return text.strip()


register_answer_schema(prompts.START_PURPOSE, Talk)
register_answer_schema(prompts.TURN_PURPOSE, Turn)
register_answer_schema(prompts.SUMMARY_PURPOSE, Summary)
