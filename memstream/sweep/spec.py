"""A sweep's specification: a base run, a grid of changes (their cross product is the set of runs) and
the measures to take of each, in a schema-checked YAML or JSON file.

    {"base": {"scenario": "valentine", "hours": 6},
     "grid": {"seed": [0, 1], "ablate": [[], ["reflection"]]},
     "measures": [{"diffusion": {"fact": "Valentine's Day party"}}, {"network": {}}]}

The ``replicate`` option (``seed`` by default) is what a grid cell is aggregated over: the runs that
differ only in it are one cell, reported with a mean, a spread and a 95% interval.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memstream.errors import MemstreamError
from memstream.files import JsonObject, problem, read_model
from memstream.sim import DEFAULT_HOURS, DEFAULT_START, RunConfig, Whisper, check_town, load_scenario
from memstream.stream import Weights
from memstream.weight_text import WeightTextError, named_weights

#: The options of ``memstream run`` a sweep may set, in its base or its grid.
RUN_OPTIONS = ("agents", "hours", "seed", "scenario", "ablate", "weights", "llm", "start", "town", "embedder",
               "step_seconds", "timeout", "concurrency", "keep_every", "design", "design_config", "recall_tokens")
MEASURE_NAMES = ("diffusion", "network", "attendance")
#: Runs a sweep may make unless ``--max-runs`` says more: a grid is a cross product, and a typo in it
#: (a long list, one more option) multiplies the runs; a million runs would take this machine years.
DEFAULT_MAX_RUNS = 1000
#: The most ``--max-runs`` may allow: the runs' settings are all made and checked before the first starts, and
#: a grid past this (a huge one once grew to 19.5 GB in two minutes) is a mistake, not a study.
MAX_RUNS = 100_000


class SweepSpec(BaseModel):
    """A sweep's file: base settings, a grid of values crossed into runs, the measures taken of each."""

    model_config = ConfigDict(extra="forbid")

    base: JsonObject = Field(default_factory=dict)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    measures: list[dict[str, JsonObject]] = Field(default_factory=list)
    replicate: str = "seed"

    @field_validator("base", "grid")
    @classmethod
    def _options(cls, value: JsonObject) -> JsonObject:
        unknown = sorted(set(value) - set(RUN_OPTIONS))
        if unknown:
            raise ValueError(f"unknown run option {unknown[0]!r}; one of {', '.join(RUN_OPTIONS)}")
        return value

    @field_validator("grid")
    @classmethod
    def _values(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        empty = [k for k, v in value.items() if not v]
        if empty:
            raise ValueError(f"the grid's {empty[0]!r} has no values")
        for option, values in value.items():
            seen: set[str] = set()
            for v in values:
                key = json.dumps(v, sort_keys=True, default=str)
                if key in seen:
                    raise ValueError(f"the grid's {option!r} repeats the value {key[:40]}; each value is one run "
                                     "(replicates differ by seed)")
                seen.add(key)
        return value

    def size(self) -> int:
        """How many runs the grid makes, counted without making them."""
        return math.prod(len(v) for v in self.grid.values())

    @field_validator("measures")
    @classmethod
    def _measures(cls, value: list[dict[str, JsonObject]]) -> list[dict[str, JsonObject]]:
        for m in value:
            if len(m) != 1 or next(iter(m)) not in MEASURE_NAMES:
                raise ValueError(f"a measure is one of {', '.join(MEASURE_NAMES)} with its options, e.g. "
                                 '{"diffusion": {"fact": "..."}}')
            name, options = next(iter(m.items()))
            needed = {"diffusion": {"fact"}, "network": set(), "attendance": {"place", "from", "to"}}[name]
            allowed = needed | ({"invited_fact"} if name == "attendance" else set())
            if not isinstance(options, dict) or not needed <= set(options) <= allowed:
                raise ValueError(f"{name} takes {', '.join(sorted(allowed)) or 'no options'}"
                                 + (f" ({', '.join(sorted(needed))} required)" if needed else ""))
        return value

    def cells(self) -> list[JsonObject]:
        """Every combination of the grid's values (one run each), in the grid's order."""
        keys = list(self.grid)
        return [dict(zip(keys, values, strict=True)) for values in itertools.product(*self.grid.values())]


def load_spec(path: str | Path, *, max_runs: int = DEFAULT_MAX_RUNS) -> SweepSpec:
    """A sweep spec from YAML or JSON, checked (schema, grid size, towns that resolve) before any run starts."""
    spec = read_model(path, SweepSpec, "sweep spec", "needs base, grid, measures; see memstream sweep --help")
    check_size(spec, max_runs)
    made: dict[str, JsonObject] = {}
    towns: set[tuple[str | None, int | None]] = set()
    for params in spec.cells() or [{}]:
        config, _ = config_of(spec, params)  # every run's settings are checked before anything runs
        same = made.setdefault(config.model_dump_json(), params)
        if same is not params:
            raise MemstreamError(f"{path}: the grid's runs {run_name(same)} and {run_name(params)} are the same run "
                                 "(their settings are equal); remove one of the values")
        if (config.town, config.agents) not in towns:  # and every town file, once
            towns.add((config.town, config.agents))
            try:
                check_town(config)
            except MemstreamError as e:
                raise MemstreamError(f"the sweep's run {run_name(params)}: {e}") from None
    return spec


def check_size(spec: SweepSpec, max_runs: int) -> None:
    """Refuse a grid of more than ``max_runs`` runs, before any of them is made."""
    if not 1 <= max_runs <= MAX_RUNS:
        raise MemstreamError(f"--max-runs {max_runs:,} is over the maximum of {MAX_RUNS:,} runs in one sweep; "
                             "split the grid into several sweeps")
    if spec.size() > max_runs:
        sizes = " x ".join(f"{len(v)} {k}" for k, v in spec.grid.items())
        raise MemstreamError(f"the sweep's grid makes {spec.size():,} runs ({sizes}), over the limit of {max_runs:,}; "
                             "make the grid smaller, or raise the limit with --max-runs N")


#: Characters of a run's readable name kept in its folder name (the hash beside it keeps it unique).
NAME_CHARS = 80


def run_name(params: JsonObject) -> str:
    """A run's folder name from its grid values: ``seed=1,ablate=reflection-3f2a9c01d4``, a readable
    part and a short hash of the values, so distinct settings never share a folder (the readable part
    alone could: "a b" and "a_b" read alike) and the same settings always get the same one."""
    parts = [f"{k}={_text(v)}" for k, v in params.items()]
    readable = re.sub(r"[^A-Za-z0-9.=,_+-]", "_", ",".join(parts))[:NAME_CHARS] or "base"
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{readable}-{digest}"


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "+".join(map(str, value)) or "none"
    if isinstance(value, dict):
        return "+".join(f"{k}{v}" for k, v in value.items())
    return str(value)


def _weights(value: Any) -> Weights:
    """A grid's weights: ``rec=1,imp=2`` as the CLI's ``--weights`` reads it, numbers by position, or a mapping."""
    if isinstance(value, str) and "=" in value:
        try:
            return Weights(**named_weights(value))
        except WeightTextError as e:
            raise ValueError(f"weights {value!r} {e}") from None
    if isinstance(value, str):
        value = [float(x) for x in value.split(",")]
    if isinstance(value, list):
        return Weights(**dict(zip(("recency", "importance", "relevance", "time"), value, strict=False)))
    return Weights.model_validate(value)


def config_of(spec: SweepSpec, params: JsonObject) -> tuple[RunConfig, list[Whisper]]:
    """The run's settings (base, then the grid's values) and its whispers (from its scenario)."""
    options = {**spec.base, **params}
    try:
        if isinstance(options.get("ablate"), str):
            options["ablate"] = [a for a in options["ablate"].split(",") if a]
        if "weights" in options:
            options["weights"] = _weights(options["weights"])
        whispers: list[Whisper] = []
        if options.get("scenario"):
            scenario = load_scenario(options.pop("scenario"))
            options = {"town": scenario.town, "agents": scenario.agents, "start": scenario.start,
                       "hours": scenario.hours, "seed": scenario.seed, "scenario": scenario.name, **options}
            whispers = [Whisper(id=i, agent=w.agent, text=w.text, at=w.at or scenario.start)
                        for i, w in enumerate(scenario.whispers, 1)]
        options.setdefault("start", DEFAULT_START)
        options.setdefault("hours", DEFAULT_HOURS)
        return RunConfig(**options), whispers
    except ValidationError as e:
        raise MemstreamError(f"the sweep's run {run_name(params)} has a bad setting: {problem(e)[:150]}") from None
    except (ValueError, TypeError) as e:
        raise MemstreamError(f"the sweep's run {run_name(params)} has a bad setting: {str(e)[:150]}") from None

