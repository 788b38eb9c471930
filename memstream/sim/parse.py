"""Reading dialogue answers: JSON, or plain text taken as the utterance itself."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from memstream.errors import StructuredOutputError
from memstream.models.base import (
    maybe_structured,
    out_of_character,
    parse_structured,
    parse_yes_no,
    register_answer_schema,
)
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
    turn = maybe_structured(text, Turn) or Turn(utterance=text.strip().strip('"'), end=False)
    utterance = " ".join(turn.utterance.split())
    if not utterance:
        raise StructuredOutputError("empty utterance")
    if out_of_character(utterance):
        raise StructuredOutputError("the utterance is the model speaking as itself; speak as the agent")
    return {"utterance": utterance, "end": turn.end}


def parse_summary(text: str) -> str:
    if summary := maybe_structured(text, Summary):
        return summary.summary.strip()
    if not text.strip():
        raise StructuredOutputError("empty summary")
    return text.strip()


def parse_answer(text: str) -> str:
    """An interview answer: any non-empty text in the agent's voice."""
    if not text.strip():
        raise StructuredOutputError("empty answer")
    if out_of_character(text):
        raise StructuredOutputError("the answer is the model speaking as itself; answer in the first person as "
                                    "the agent, from its memories")
    return text.strip()


register_answer_schema(prompts.START_PURPOSE, Talk)
register_answer_schema(prompts.TURN_PURPOSE, Turn)
register_answer_schema(prompts.SUMMARY_PURPOSE, Summary)
