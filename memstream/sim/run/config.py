"""A run's settings (kept in its run directory, :mod:`memstream.sim.run.rundir`), the format they carry, and what a
run returns.

The format names its version (``memstream-run/3``) so that a directory written by another
memstream is refused in one line instead of being misread: version 2 added the one-writer lock
and whispers delivered to a running run; version 3 checkpoints whose agents' states refer to parts kept once
(``checkpoint/parts.db``, :mod:`memstream.sim.run.parts`). A version 2 directory is read as it is (its
checkpoints hold their states whole, or a stream copy) and becomes version 3 when a run next writes it, so an
older memstream refuses it from then on instead of misreading its new checkpoints.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from memstream.errors import MemstreamError
from memstream.files import Number, WholeNumber
from memstream.models import check_embedder, check_llm
from memstream.sim.engine import ABLATIONS
from memstream.sim.memory import STREAM_DESIGN, TOKENS_PER_RECALL
from memstream.sim.talk.conversation import TALK_RULES
from memstream.stream import Weights
from memstream.timeutil import require_aware

FORMAT_NAME = "memstream-run"
FORMAT_VERSION = 3
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"
#: The versions this memstream reads (the older made the current by the next run that writes the directory).
READS = (f"{FORMAT_NAME}/2", FORMAT)
#: Where a run starts and for how long, when nothing says otherwise: the morning the paper's agents woke to.
DEFAULT_START = datetime.fromisoformat("2023-02-13T06:00:00-08:00")
DEFAULT_HOURS = 3.0
#: The longest run: ten simulated years.
MAX_HOURS = 24 * 366 * 10
#: Settings a fork may change; the others (town, agents, start, seed, step, embedder) make it another run.
FORK_CHANGES = ("hours", "weights", "llm", "ablate", "timeout", "concurrency", "max_calls", "keep_every", "gate",
                "critic", "design", "design_config", "recall_tokens")
#: ``gate`` values: the run's own model (its requests batched with the step's), the offline rules, or none.
GATE_LLM, GATE_OFFLINE, GATE_OFF = "llm", "offline", "off"


class RunConfig(BaseModel):
    """A run's settings as ``config.json`` holds them: town, agents, times, models, weights, ablations, seed."""

    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    town: str | None = None  # a town file; None for the default town
    agents: WholeNumber | None = Field(default=None, gt=0)
    start: datetime
    hours: Number = Field(gt=0, le=MAX_HOURS, allow_inf_nan=False)
    step_seconds: WholeNumber = Field(default=10, gt=0, le=3600)
    llm: str = "offline"
    embedder: str = "minilm"
    seed: WholeNumber = 0
    max_calls: WholeNumber | None = Field(default=None, gt=0)
    timeout: Number | None = Field(default=None, gt=0, allow_inf_nan=False)  # seconds per model answer
    concurrency: WholeNumber | None = Field(default=None, gt=0)  # model requests in flight
    weights: Weights = Field(default_factory=Weights)  # retrieval's weights for every agent (the paper's 1,1,1)
    ablate: list[str] = Field(default_factory=list)  # modules the agents go without (engine.ABLATIONS)
    scenario: str | None = None  # the scenario the run was made from, if any
    keep_every: WholeNumber = Field(default=12, ge=1, le=24 * 366)  # whole simulated hours between kept checkpoints
    forked_from: str | None = None  # RUN@TIME this run was forked from
    #: The write gate in front of every agent's stream (memstream.trust): offline (the rules, the default: they
    #: cost no model call), llm (the run's model, in the step's batches) or off.
    gate: str = GATE_OFFLINE
    critic: bool = True  # the critic in front of reflection insights (with the gate on)
    #: The conversation rules (memstream.sim.talk.conversation.TALK_RULES): a run recorded under older ones says so.
    talk_rules: WholeNumber = Field(default=TALK_RULES, ge=1, le=TALK_RULES)
    #: The agents' memory (memstream.sim.memory): the stream (today's town), or any registered design, with its
    #: settings (its Config's fields), kept in the run directory's design store.
    design: str = STREAM_DESIGN
    design_config: dict[str, JsonValue] = Field(default_factory=dict)
    #: Tokens of a design's context per memory a stage asks for (memstream.sim.memory.TOKENS_PER_RECALL).
    recall_tokens: WholeNumber = Field(default=TOKENS_PER_RECALL, gt=0, le=10_000)

    @field_validator("format")
    @classmethod
    def _this_format(cls, value: str) -> str:
        if value not in READS:
            raise ValueError(f"format {value!r} is not {FORMAT!r}")
        return FORMAT  # written back as the current version

    @field_validator("start")
    @classmethod
    def _fixed_offset(cls, value: datetime) -> datetime:
        """The start's zone as a fixed offset, however it was given (a ``timezone``, a zone by name, or read back
        from ``config.json``): a run started in Python and resumed from its settings formats its times alike (a
        design that writes ``%Z`` wrote "UTC-08:00" before a resume and "-08:00" after)."""
        offset = value.utcoffset()
        return value if offset is None else value.replace(tzinfo=timezone(offset))

    @field_validator("llm")
    @classmethod
    def _known_llm(cls, value: str) -> str:
        return _known(check_llm, value)

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, value: str) -> str:
        return _known(check_embedder, value)

    @field_validator("ablate")
    @classmethod
    def _ablations(cls, value: list[str]) -> list[str]:
        unknown = [a for a in value if a not in ABLATIONS]
        if unknown:
            raise ValueError(f"unknown ablation {unknown[0]!r}; choose from {', '.join(ABLATIONS)}")
        return sorted(set(value))

    @model_validator(mode="after")
    def _design(self) -> RunConfig:
        if self.design == STREAM_DESIGN:
            if self.design_config:
                raise ValueError("the stream design is the town's own stream: it takes --weights, not --design-config")
            return self
        from memstream.designs import DESIGNS, kept_designs, make_design  # checked before any folder is made

        if self.design not in DESIGNS:
            raise ValueError(f"unknown design {self.design!r}; use one of {', '.join(DESIGNS)}")
        if self.design not in kept_designs():
            raise ValueError(f"the {self.design} design cannot be kept in a run's design store yet; use one of "
                             f"{', '.join([STREAM_DESIGN, *(d for d in kept_designs() if d != STREAM_DESIGN)])}")
        try:
            make_design(self.design, embedder=None, **self.design_config)
        except MemstreamError as e:
            raise ValueError(str(e)) from None
        return self

    @model_validator(mode="after")
    def _gate(self) -> RunConfig:
        if self.gate == self.llm and self.gate not in (GATE_OFFLINE, GATE_OFF):  # the run's model by its spec
            self.gate = GATE_LLM
        if self.gate not in (GATE_LLM, GATE_OFFLINE, GATE_OFF):
            raise ValueError(f"gate {self.gate!r}: use off, offline, or the run's model ({self.llm}); the gate's "
                             "requests are batched with the step's, so it asks the model the agents ask")
        return self

    @field_validator("start")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return require_aware(value, "--start")

    @model_validator(mode="after")
    def _ends_in_time(self) -> RunConfig:
        require_aware(self.end, "the run's end (--start plus --hours)")
        return self

    @property
    def end(self) -> datetime:
        return self.start + timedelta(hours=self.hours)


def _known(check: Callable[[str], str], spec: str) -> str:
    """A model's spec checked as the run's settings are, before any folder is made for them."""
    try:
        return check(spec)
    except MemstreamError as e:
        raise ValueError(str(e)) from None


class RunResult(BaseModel):
    """How a run ended: its folder, why it stopped, the simulated time reached and its metrics."""

    out: str
    stopped: str  # "finished", "max-calls", "interrupted" (Ctrl-C), "terminated" (SIGTERM), "endpoint-failing"
    sim_time: datetime
    metrics: dict[str, Any]
