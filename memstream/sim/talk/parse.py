"""Reading dialogue answers: JSON, or plain text taken as the utterance itself."""

from __future__ import annotations

from pydantic import BaseModel, Field

from memstream.errors import StructuredOutputError
from memstream.models import (
    items_of,
    maybe_structured,
    out_of_character,
    parse_structured,
    parse_yes_no,
    register_answer_schema,
)
from memstream.sim.talk import prompts


class Talk(BaseModel):
    """The reason comes first: a small model asked for the decision alone declined every offer (23 of 23 in
    the recorded party run); asked to say why first, it weighs what the prompt gives (tests/fixtures/real-party)."""

    reason: str = ""
    talk: bool


class Turn(BaseModel):
    utterance: str
    end: bool = False


class Summary(BaseModel):
    summary: str


class Relationship(BaseModel):
    relationship: str


class Plans(BaseModel):
    plans: str


#: A summary, a relationship or a planning thought is a sentence or two, not an essay.
MAX_SENTENCE_WORDS = 60


def _sentence(text: str, what: str) -> str:
    one = " ".join(text.split()).strip(" \"'")
    if not one or "{" in one:
        raise StructuredOutputError(f"no {what} in the answer; answer as JSON with one sentence")
    if out_of_character(one):
        raise StructuredOutputError(f"the {what} is the model speaking as itself; write it about the person")
    if len(one.split()) > MAX_SENTENCE_WORDS:
        raise StructuredOutputError(f"the {what} runs to {len(one.split())} words; write one sentence of at most "
                                    f"{MAX_SENTENCE_WORDS}")
    return one


def parse_talk(text: str) -> bool:
    if "{" in text:
        return parse_structured(text, Talk).talk
    return parse_yes_no(text)


def parse_turn(text: str, *, name: str = "") -> Turn:
    """An utterance; "Name: ..." (the model echoing the dialogue's format) is the utterance after it."""
    turn = maybe_structured(text, Turn) or Turn(utterance=text.strip().strip('"'), end=False)
    utterance = " ".join(turn.utterance.split())
    if name and utterance.startswith(f"{name}:"):
        utterance = utterance[len(name) + 1:].strip().strip('"')
    if not utterance:
        raise StructuredOutputError("empty utterance")
    if out_of_character(utterance):
        raise StructuredOutputError("the utterance is the model speaking as itself; speak as the agent")
    return Turn(utterance=utterance, end=turn.end)


def parse_summary(text: str) -> str:
    found = items_of(text, Summary)
    return _sentence(found[0].summary if found else text, "summary")


def parse_relationship(text: str) -> str:
    found = items_of(text, Relationship)
    return _sentence(found[0].relationship if found else text, "relationship")


class Judgement(BaseModel):
    score: int = Field(ge=1, le=5)
    hallucinated: bool = False
    why: str = ""


class Knows(BaseModel):
    knows: bool
    what: str = ""


def parse_judgement(text: str) -> Judgement:
    found = items_of(text, Judgement)
    if not found:
        raise StructuredOutputError('no judgement in the answer; answer as JSON {"score": 1-5, "hallucinated": '
                                    'true/false, "why": "..."}')
    return found[0]


def parse_knows(text: str) -> Knows:
    found = items_of(text, Knows)
    if found:
        return found[0]
    return Knows(knows=parse_yes_no(text), what=text.strip()[3:].strip(" ,.:"))


#: What a planning thought says when a conversation set nothing to plan.
NOTHING_TO_PLAN = "nothing to plan"


def parse_plans(text: str) -> str:
    """A planning thought on a conversation; "" when there is nothing to plan."""
    found = items_of(text, Plans)
    thought = _sentence(found[0].plans if found else text, "planning thought")
    return "" if thought.lower().strip(".! ").startswith(("nothing to plan", "nothing", "none", "no ")) else thought


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
register_answer_schema(prompts.RELATIONSHIP_PURPOSE, Relationship)
register_answer_schema(prompts.PLANS_PURPOSE, Plans)
register_answer_schema(prompts.JUDGE_PURPOSE, Judgement)
register_answer_schema(prompts.KNOWS_PURPOSE, Knows)
