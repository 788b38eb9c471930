"""The score's building blocks: normalisation, recency, deterministic top-k."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from memstream.stream.scoring import minmax, recency, top_k, top_k_rows

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@given(arrays(np.float64, st.integers(1, 50), elements=finite))
def test_minmax_stays_in_unit_interval_and_keeps_order(values: np.ndarray) -> None:
    out = minmax(values)
    assert np.all((out >= 0) & (out <= 1)) and not np.isnan(out).any()
    order = np.argsort(values, kind="stable")
    assert np.all(np.diff(out[order]) >= 0)


def test_constant_component_normalises_to_half() -> None:
    assert np.all(minmax(np.full(5, 3.0)) == 0.5)
    assert minmax(np.array([7.0]))[0] == 0.5
    rows = minmax(np.array([[1.0, 1.0], [0.0, 2.0]]))
    assert rows.tolist() == [[0.5, 0.5], [0.0, 1.0]]


def test_recency_is_decay_to_the_hours_since_access() -> None:
    last = np.array([0.0, 3600.0, 7200.0])
    r = recency(last, now_s=7200.0, decay=0.995)
    assert np.allclose(r, [0.995**2, 0.995, 1.0])
    # an access after `now` counts as now, never above 1
    assert recency(np.array([9000.0]), 7200.0, 0.995)[0] == 1.0


@given(st.lists(st.floats(0, 1e7), min_size=2, max_size=30), st.floats(0.5, 1.0))
def test_more_recent_access_never_has_lower_recency(lasts: list[float], decay: float) -> None:
    last = np.array(lasts)
    r = recency(last, now_s=1e7, decay=decay)
    order = np.argsort(last)
    assert np.all(np.diff(r[order]) >= 0)


def test_top_k_breaks_ties_toward_newer_position() -> None:
    scores = np.array([1.0, 2.0, 2.0, 0.5, 2.0])
    assert top_k(scores, 2).tolist() == [4, 2]
    assert top_k(scores, 10).tolist() == [4, 2, 1, 0, 3]


@pytest.mark.slow
@given(arrays(np.float64, st.integers(1, 60), elements=st.integers(0, 5).map(float)),
       st.integers(1, 70))
def test_top_k_matches_a_full_sort(scores: np.ndarray, k: int) -> None:
    expected = sorted(range(len(scores)), key=lambda i: (-scores[i], -i))[:k]
    assert top_k(scores, k).tolist() == expected


@pytest.mark.slow
@given(st.integers(1, 6).flatmap(lambda b: arrays(np.float64, st.tuples(st.just(b), st.integers(1, 40)),
                                                  elements=st.integers(0, 4).map(float))),
       st.integers(1, 45))
def test_top_k_of_every_row_at_once_equals_one_row_at_a_time(scores: np.ndarray, k: int) -> None:
    """The batched path (one partition for all rows, ties at the cut kept row by row) ranks each
    row as :func:`top_k` does; small integer scores make ties at the cut common."""
    got = top_k_rows(scores, k)
    assert got.shape == (len(scores), min(k, scores.shape[1]))
    assert [row.tolist() for row in got] == [top_k(row, k).tolist() for row in scores]
