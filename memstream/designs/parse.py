"""Reading the designs' answers (raising ``StructuredOutputError`` naming what is wrong)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memstream.designs import prompts
from memstream.errors import StructuredOutputError
from memstream.models import items_of, parse_structured, register_answer_schema


def parse_summary(answer: str) -> str:
    """A summary is any non-empty text (a leading "New summary:" label is dropped)."""
    text = " ".join(answer.split())
    for label in ("New summary:", "Summary:"):
        if text.lower().startswith(label.lower()):
            text = text[len(label):].strip()
    if not text:
        raise StructuredOutputError("the summary is empty")
    return text


# -- the facts design ----------------------------------------------------------------------------------

#: A fact's text at most, as extracted (longer is clipped: an atomic fact is a sentence or two).
MAX_TEXT = 500
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


class ExtractedFact(BaseModel):
    """One candidate fact as the extraction answer gives it."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, max_length=MAX_TEXT)
    kind: Literal["fact", "preference", "episode", "procedure"] = "fact"
    salience: float = Field(default=0.5, ge=0, le=1)
    entities: list[str] = Field(default_factory=list, max_length=20)
    event_at: str | None = None
    expires_in_days: float | None = Field(default=None, gt=0, le=3650)

    @field_validator("text", mode="before")
    @classmethod
    def _clean(cls, value: object) -> object:
        """A model's text, with control and invisible characters (which print like other text) as spaces
        and its whitespace collapsed, clipped to the longest fact kept."""
        if not isinstance(value, str):
            return value
        shown = "".join(" " if unicodedata.category(c) in _HIDDEN else c for c in value)
        return " ".join(shown.split())[:MAX_TEXT]

    @field_validator("entities")
    @classmethod
    def _named(cls, value: list[str]) -> list[str]:
        """Names as given, without the answer format's placeholder (Qwen2.5 1.5B copied it into every fact)."""
        return [n for n in (" ".join(str(x).split()) for x in value) if n and n != prompts.ENTITY_PLACEHOLDER]

    @field_validator("event_at")
    @classmethod
    def _date(cls, value: str | None) -> str | None:
        if value in (None, "", "null"):
            return None
        if not _DATE.fullmatch(value):
            raise ValueError("event_at must be YYYY-MM-DD or null")
        return value

    @field_validator("expires_in_days", mode="before")
    @classmethod
    def _days(cls, value: object) -> object:
        return None if value in ("", "null") else value


class Extracted(BaseModel):
    facts: list[ExtractedFact] = Field(max_length=20)


class Verdict(BaseModel):
    action: Literal["new", "duplicate", "update", "extend"]
    target: int | None = None


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_extracted(answer: str) -> list[ExtractedFact]:
    """The candidate facts: the answer's JSON object, or (from a weak model) every well-formed fact object
    it holds; with none, the error names what is wrong with the first (the retry shows it to the model)."""
    try:
        return parse_structured(answer, Extracted).facts
    except StructuredOutputError as e:
        found = items_of(answer, ExtractedFact)
        if found:
            return found
        raise StructuredOutputError(f"{e}; answer {{\"facts\": [...]}}") from None


def verdict_parser(n_known: int) -> Callable[[str], Verdict]:
    """A parser of the classification answer against ``n_known`` listed facts: a target outside them is
    an error (the model's number is never trusted as an id)."""

    def parse(answer: str) -> Verdict:
        verdict = parse_structured(answer, Verdict)
        if verdict.action != "new" and not (verdict.target is not None and 1 <= verdict.target <= n_known):
            raise StructuredOutputError(f"a {verdict.action} names a known fact's number from 1 to {n_known}, "
                                        f"got {verdict.target!r}")
        return verdict

    return parse


register_answer_schema(prompts.EXTRACT_PURPOSE, Extracted)
register_answer_schema(prompts.CLASSIFY_PURPOSE, Verdict)
