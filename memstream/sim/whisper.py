"""Whispers: memories an experimenter puts into an agent's mind, as the paper's "inner voice".

A run keeps them in its directory (:class:`memstream.sim.rundir.RunDir` reads and appends them);
the simulation gives each to its agent when the clock reaches its time (a ``thought``, its
importance rated by the model), so a run resumed or forked carries every whisper, and the stream
file is never written behind the run's back.
"""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from memstream.stream import MemoryText
from memstream.timeutil import require_aware


class Whisper(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int = Field(ge=1)
    agent: str = Field(min_length=1)
    text: MemoryText = Field(min_length=1, max_length=10_000)
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
