"""Importance rated a round at a time (compared, not one by one), and re-planning read against the model's
own scale of ratings (``memstream.sim.agents.poignancy``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.errors import StructuredOutputError
from memstream.models import run_direct
from memstream.sim import RunConfig, start_run
from memstream.sim.agents.poignancy import (
    REACT_IMPORTANCE,
    REACT_MIN_RATINGS,
    REACT_TOP_SHARE,
    PoignancyTally,
    perceived,
)
from memstream.stream import MemoryStream
from memstream.stream.importance import FALLBACK_IMPORTANCE, importance_stage, parse_ratings
from memstream.stream.prompts import IMPORTANCE_PURPOSE, ROUND_PURPOSE, ROUND_SIZE, round_texts_of
from memstream.testing import ScriptedChat

START = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)
ratings = st.lists(st.integers(1, 10), min_size=1, max_size=ROUND_SIZE)


@given(ratings)
def test_a_rounds_ratings_read_back_as_json_or_a_numbered_list(values: list[int]) -> None:
    assert parse_ratings(json.dumps({"ratings": values}), len(values)) == values
    assert parse_ratings("\n".join(f"{i}. {v}" for i, v in enumerate(values, 1)), len(values)) == values


@given(ratings, st.integers(1, 3))
def test_a_round_with_too_few_or_too_many_ratings_is_refused_saying_how_many(values: list[int], off: int) -> None:
    for n in (len(values) + off, max(len(values) - off, 0)):
        if n != len(values) and n > 0:
            with pytest.raises(StructuredOutputError, match=f"where {n} were asked"):
                parse_ratings(json.dumps({"ratings": values}), n)


@pytest.mark.parametrize("n", [1, 3, ROUND_SIZE, ROUND_SIZE + 1, 2 * ROUND_SIZE + 3])
def test_a_round_is_asked_in_parts_of_round_size_and_one_memory_alone(n: int) -> None:
    texts = [f"memory number {i}" for i in range(n)]
    chat = ScriptedChat({ROUND_PURPOSE: lambda m: json.dumps({"ratings": [3] * len(round_texts_of(m))}),
                         IMPORTANCE_PURPOSE: lambda m: "4"})
    assert run_direct(importance_stage(texts), chat) == [4 if n == 1 else 3] * n
    purposes = [p for p, _ in chat.calls]
    assert purposes == ([IMPORTANCE_PURPOSE] if n == 1 else [ROUND_PURPOSE] * -(-n // ROUND_SIZE))
    if n > 1:  # every memory listed once, in order, across the parts
        assert [t for _, m in chat.calls for t in round_texts_of(m)] == texts


def test_a_short_round_is_retried_then_salvaged_and_the_rest_fall_back() -> None:
    chat = ScriptedChat({ROUND_PURPOSE: lambda m: '{"ratings": [9]}'})
    assert run_direct(importance_stage(["a", "b", "c"]), chat) == [9, FALLBACK_IMPORTANCE, FALLBACK_IMPORTANCE]
    usage = chat.usage.by_purpose[ROUND_PURPOSE]
    assert usage.retried == 1 and usage.partial == 1
    assert "1 rating(s)" in chat.calls[-1][1][-1]["content"]  # the retry named the problem


def test_a_model_that_rates_routine_high_does_not_replan_over_routine() -> None:
    """A rating most observations get is routine on this model's scale, however high."""
    tally = PoignancyTally([10] * 30 + [2] * 60 + [9] * 5)
    assert not tally.poignant(10)          # 30 of 95 observations rated 10
    assert tally.poignant(9) is False      # 35 of 95 at 9 or more
    rare = PoignancyTally([1] * 90 + [2] * 8 + [8])
    assert rare.poignant(8) and not rare.poignant(REACT_IMPORTANCE - 1)


@given(st.lists(st.integers(1, 10), max_size=200), st.integers(1, 10))
def test_poignant_means_high_and_in_the_runs_top_share(history: list[int], rating: int) -> None:
    tally = PoignancyTally(history)
    if tally.poignant(rating):
        assert rating >= REACT_IMPORTANCE
        top = sum(r >= rating for r in history) / max(len(history), 1)
        assert len(history) < REACT_MIN_RATINGS or top <= REACT_TOP_SHARE
    assert sum(tally.histogram().values()) == len(history)


@pytest.mark.slow
def test_metrics_report_the_observations_ratings_and_a_resume_rebuilds_them(tmp_path: Path) -> None:
    out = tmp_path / "run"
    start_run(RunConfig(agents=3, start=START, hours=1, embedder="hash"), out, progress=False)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    histogram = metrics["importance_histogram"]
    with MemoryStream(out / "streams.db", create=False, readonly=True) as stream:
        written = [m.importance for o in stream.owners() for m in stream.memories(o) if perceived(m)]
        assert histogram == {str(r): written.count(r) for r in range(1, 11)} and written
        assert PoignancyTally.from_stream(stream, stream.owners()).histogram() == histogram
