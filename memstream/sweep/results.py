"""What a sweep writes: one run's result, a grid cell's intervals, the summary (``results.json``, ``runs.json``).

TypedDicts, not models: each is dumped to JSON as is, so the files keep their exact bytes, and each crosses
a Ray task's boundary as plain data.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memstream.files import JsonObject

#: A run's measures as numbers: ``{"diffusion: FACT": {"final_share": 0.5}, "network": {...}}``.
Measured = dict[str, dict[str, float]]


class RunResult(TypedDict):
    """One run of the sweep: its folder name, its grid values, what was measured and some of its metrics."""

    run: str
    params: JsonObject
    measures: Measured
    metrics: dict[str, float]
    cost: NotRequired[dict[str, float]]


class FailedRun(TypedDict):
    """A run that failed for good (its retries spent), and the last line of why."""

    run: str
    error: str


class Interval(TypedDict):
    """One measure over a cell's replicates: mean, sample standard deviation, a 95% t-interval, the values."""

    mean: float
    std: float
    ci95: list[float]
    n: int
    values: list[float]


class Cell(TypedDict):
    """One grid cell (runs that differ only in the replicate option): its values, its runs, its intervals."""

    params: JsonObject
    runs: list[str]
    measures: dict[str, dict[str, Interval]]
    cost: NotRequired[dict[str, Interval]]


class SweepSummary(TypedDict):
    """What :func:`memstream.sweep.run_sweep` returns: the cells, every finished run, the failed ones."""

    cells: list[Cell]
    runs: list[RunResult]
    failed: list[FailedRun]
