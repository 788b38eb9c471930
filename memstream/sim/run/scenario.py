"""Scenarios: a town, a start, a duration and timed whispers, in a schema-checked YAML or JSON file.

``memstream run --scenario valentine`` runs the bundled set-up of the paper; ``--scenario FILE``
runs one of a user's own. The whispers go to the run's ``whispers.json`` (:mod:`memstream.sim.agents.whisper`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memstream.errors import MemstreamError
from memstream.files import Number, WholeNumber, not_a_file, read_model
from memstream.sim.agents.whisper import WhisperText
from memstream.timeutil import require_aware

BUNDLED = Path(__file__).parents[1] / "data" / "scenarios"


class ScenarioWhisper(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1)
    text: WhisperText
    at: datetime | None = None  # default: the scenario's start

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return None if value is None else require_aware(value, "a whisper's at")


class Scenario(BaseModel):
    """A bundled or user experiment: a town, a start, hours and whispers, as a scenario file holds them."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    town: str | None = None  # a town file, relative to the scenario file; None for the default town
    agents: WholeNumber | None = Field(default=None, gt=0)
    start: datetime
    hours: Number = Field(gt=0, le=24 * 366, allow_inf_nan=False)
    seed: WholeNumber = 0
    whispers: list[ScenarioWhisper] = Field(default_factory=list)

    @field_validator("start")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return require_aware(value, "start")

    @model_validator(mode="after")
    def _whispers_in_time(self) -> Scenario:
        end = self.start + timedelta(hours=self.hours)
        for w in self.whispers:
            if w.at is not None and not self.start <= w.at <= end:
                raise ValueError(f"the whisper to {w.agent} at {w.at.isoformat()} is outside the scenario "
                                 f"({self.start.isoformat()} to {end.isoformat()})")
        return self


def bundled() -> list[str]:
    return sorted(p.stem for p in BUNDLED.glob("*.yaml"))


def load_scenario(name_or_path: str) -> Scenario:
    """A bundled scenario by name, or a scenario file; one clear error naming what is wrong."""
    path = BUNDLED / f"{name_or_path}.yaml" if name_or_path in bundled() else Path(name_or_path)
    if path.exists() and not path.is_file():
        raise MemstreamError(not_a_file(path, "scenario file"))
    if not path.is_file():
        raise MemstreamError(f"no scenario {name_or_path!r}: name a file or one of {', '.join(bundled())}")
    scenario = read_model(path, Scenario, "scenario", "needs name, start with a zone, hours; optional town, "
                          "agents, seed, whispers of agent, text, at")
    if scenario.town and not Path(scenario.town).is_absolute():
        scenario = scenario.model_copy(update={"town": str(path.parent / scenario.town)})
    return scenario
