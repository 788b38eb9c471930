"""Whispers: memories an experimenter puts into an agent's mind, as the paper's "inner voice".

A run keeps them in its directory (:class:`memstream.sim.run.rundir.RunDir` reads and appends them);
the simulation gives each to its agent when the clock reaches its time (a ``thought``, its
importance rated by the model), so a run resumed or forked carries every whisper, and the stream
file is never written behind the run's back.
"""

from __future__ import annotations

import json
import unicodedata
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from memstream.stream import MemoryText
from memstream.timeutil import require_aware

#: Unicode categories a whisper may not hold (but for newlines and tabs): controls (a terminal escape
#: would recolour every replay of the run), invisible formatting and bidi marks, unassigned code points.
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def plain_text(text: str) -> str:
    """A whisper's text: refused, naming the first, if it holds a control or invisible character."""
    hidden = [c for c in text if unicodedata.category(c) in HIDDEN and c not in "\n\t"]
    if hidden:
        raise ValueError(f"the text holds control or invisible characters ({', '.join(repr(c) for c in hidden[:3])})"
                         "; write it as plain text")
    return text


#: A whisper's text as the schema reads it: a memory's text, at most 10,000 characters, plain.
WhisperText = Annotated[MemoryText, Field(min_length=1, max_length=10_000), AfterValidator(plain_text)]


class Whisper(BaseModel):
    """A memory put into one agent's mind at a time (``memstream whisper``), as ``whispers.json`` records it."""

    model_config = ConfigDict(extra="forbid")

    id: int = Field(ge=1)
    agent: str = Field(min_length=1)
    text: WhisperText
    at: datetime

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return require_aware(value, "the whisper's time")


_LIST = TypeAdapter(list[Whisper])


def parse_whispers(text: str) -> list[Whisper]:
    """The whispers in ``text`` (a JSON list); pydantic's ``ValidationError`` (a ``ValueError``) if damaged."""
    return _LIST.validate_json(text)


def dump_whispers(whispers: list[Whisper]) -> str:
    return json.dumps([w.model_dump(mode="json") for w in whispers], indent=2)
