"""Reading reflection answers: structured JSON or the paper's plain-text forms, so weak
open models work too. Anything unreadable raises :class:`StructuredOutputError`."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, Field

from memstream.errors import StructuredOutputError
from memstream.models import items_of, register_answer_schema
from memstream.reflection import prompts


class Questions(BaseModel):
    questions: list[str] = Field(min_length=1)


class Insight(BaseModel):
    insight: str = Field(max_length=600)
    because: list[Annotated[int, Field(ge=-(2**31), le=2**31)]] = Field(default_factory=list)


class Insights(BaseModel):
    insights: list[Insight] = Field(min_length=1)


_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*(.+?)\s*$")
_BECAUSE = re.compile(r"^(.*?)\s*\(\s*because of\s*([^)]*)\)\s*\.?\s*$", re.IGNORECASE)


def parse_questions(text: str) -> list[str]:
    found = items_of(text, Questions)
    if found:
        return [" ".join(q.split()) for parsed in found for q in parsed.questions if q.strip()]
    items = [m.group(1) for line in text.splitlines() if (m := _LIST_ITEM.match(line))]
    items = items or [line.strip() for line in text.splitlines() if line.strip().endswith("?")]
    if not items:
        raise StructuredOutputError(f"no questions found in the answer (began {text[:60]!r})")
    return items


#: An explicit "no insight": the JSON answer with an empty list (anything else without one is an error).
_NO_INSIGHT = re.compile(r'\{\s*"insights"\s*:\s*\[\s*\]\s*\}')


def parse_insights(text: str) -> list[Insight]:
    """Insights with the statement numbers they cite, every well-formed one in the answer (a stray
    bracket that breaks the whole JSON loses none of them); citations are checked by the caller."""
    if _NO_INSIGHT.fullmatch(text.strip()):  # the answer says the statements support no insight
        return []
    found = [i for i in items_of(text, Insight) if i.insight.strip()]
    if found:
        return found
    out = []
    for line in text.splitlines():
        item = _LIST_ITEM.match(line)
        body = item.group(1) if item else line.strip()
        m = _BECAUSE.match(body)
        if m:
            numbers = [int(n) for n in re.findall(r"\d+", m.group(2))]
            out.append(Insight(insight=m.group(1).strip(), because=numbers))
        elif item:
            out.append(Insight(insight=body, because=[]))
    if not out:
        raise StructuredOutputError(f"no insights found in the answer (began {text[:60]!r})")
    return out


register_answer_schema(prompts.QUESTIONS_PURPOSE, Questions)
register_answer_schema(prompts.INSIGHTS_PURPOSE, Insights)
