"""Who an agent is: the short description planning starts from (a pydantic model, loaded from JSON)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memstream.files import read_model
from memstream.stream import normalise_owner


class RoutineItem(BaseModel):
    """One habitual activity: at ``time`` (HH:MM), ``activity`` at ``location``."""

    model_config = ConfigDict(extra="forbid")

    time: str = Field(pattern=r"^([01]?\d|2[0-3]):[0-5]\d$")
    activity: str = Field(min_length=1)
    location: str = Field(min_length=1)


class Identity(BaseModel):
    """Name, age, traits, lifestyle and current situation, as in the paper's seed descriptions."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    age: int = Field(ge=0, le=150)
    traits: list[str] = Field(default_factory=list)
    lifestyle: str = ""
    situation: str = ""
    occupation: str = ""
    home: str = "home"
    workplace: str = ""
    wake: str = Field(default="07:00", pattern=r"^([01]?\d|2[0-3]):[0-5]\d$")
    sleep: str = Field(default="23:00", pattern=r"^([01]?\d|2[0-3]):[0-5]\d$")
    routine: list[RoutineItem] = Field(default_factory=list)
    relationships: dict[str, str] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return normalise_owner(value)  # the name is the agent's owner key in the stream

    @model_validator(mode="after")
    def _wake_before_sleep(self) -> Identity:
        if _minutes(self.wake) >= _minutes(self.sleep):
            raise ValueError(f"wake {self.wake} must come before sleep {self.sleep}")
        return self

    def known_places(self) -> tuple[str, ...]:
        """The places this agent knows by name, which its plans' locations must be among; none outside a
        town (a bare identity's places are free text). A town's resident knows some (spatial memory)."""
        return ()

    def describe(self) -> str:
        """The paper-style seed paragraph that prompts start from."""
        parts = [f"Name: {self.name} (age: {self.age})"]
        if self.traits:
            parts.append("Innate traits: " + ", ".join(self.traits))
        if self.occupation:
            parts.append(f"Occupation: {self.occupation}" + (f" at {self.workplace}" if self.workplace else ""))
        if self.lifestyle:
            parts.append(f"Lifestyle: {self.lifestyle}")
        parts.append(f"Usually wakes at {self.wake} and goes to bed at {self.sleep}; lives at {self.home}")
        if self.routine:
            parts.append("Routine: " + "; ".join(f"{r.time} {r.activity} ({r.location})" for r in self.routine))
        if self.relationships:
            parts.append("Knows: " + "; ".join(f"{k} ({v})" for k, v in self.relationships.items()))
        if self.situation:  # last: it is revised each morning (what never changes first, for a prefix cache)
            parts.append(f"Currently: {self.situation}")
        return "\n".join(parts)


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def load_identity(path: str | Path) -> Identity:
    """An :class:`Identity` from a YAML or JSON file, checked by its schema (one clear error for a bad file)."""
    return read_model(path, Identity, "identity",
                      "needs name, age; optional traits, lifestyle, situation, wake, sleep, ...")
