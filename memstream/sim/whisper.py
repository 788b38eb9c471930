"""Whispers: memories an experimenter puts into an agent's mind, as the paper's "inner voice".

A run keeps them in ``whispers.json``; the simulation gives each to its agent when the clock
reaches its time (a ``thought``, its importance rated by the model), so a run resumed or forked
carries every whisper, and the stream file is never written behind the run's back.
"""

from __future__ import annotations

import json
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from memstream.errors import MemstreamError
from memstream.stream import MemoryText
from memstream.timeutil import require_aware

FILE = "whispers.json"
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


def read_whispers(out: Path) -> list[Whisper]:
    path = out / FILE
    if not path.is_file():
        return []
    try:
        return _LIST.validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError, OSError):
        raise MemstreamError(f"{path} is damaged; restore it or remove the whispers that broke it") from None


def write_whispers(out: Path, whispers: list[Whisper]) -> None:
    """Replace the run's whispers (written aside, then renamed: a crash leaves the old file whole)."""
    tmp = out / (FILE + ".tmp")
    tmp.write_text(json.dumps([w.model_dump(mode="json") for w in whispers], indent=2), encoding="utf-8")
    tmp.replace(out / FILE)


def add_whisper(out: Path, agent: str, text: str, at: datetime) -> Whisper:
    whispers = read_whispers(out)
    whisper = Whisper(id=max((w.id for w in whispers), default=0) + 1, agent=agent, text=text, at=at)
    write_whispers(out, [*whispers, whisper])
    return whisper
