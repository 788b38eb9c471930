"""Property tests: bounds, monotonicity of each component, owner isolation, persistence."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.models import HashEmbedder
from memstream.stream import MemoryStream
from tests.helpers import hours

EMB = HashEmbedder(32)
WORDS = st.sampled_from(["cafe", "party", "park", "stove", "book", "paint", "music", "exam", "lunch", "friend"])
SHORT = st.lists(WORDS, min_size=1, max_size=5).map(" ".join)
# past the embedding window (WINDOW_WORDS), so a memory has several keys
LONG = st.tuples(SHORT, st.integers(40, 90), SHORT).map(lambda t: " ".join([t[0]] * t[1] + ["then"] * 150 + [t[2]]))
TEXTS = SHORT
memory = st.tuples(st.sampled_from(["ann", "bob", "cyd"]), st.one_of(SHORT, SHORT, LONG), st.integers(0, 500),
                   st.integers(1, 10))
SETTINGS = settings(max_examples=40, deadline=None)


def _fill(stream: MemoryStream, memories: list[tuple[str, str, int, int]]) -> None:
    for owner, text, hour, imp in memories:
        stream.add(owner, text, at=hours(hour), importance=imp)


@pytest.mark.slow
@SETTINGS
@given(st.lists(memory, min_size=1, max_size=30), TEXTS, st.integers(1, 40))
def test_components_are_normalised_and_results_stay_with_their_owner(memories, query, k) -> None:
    s = MemoryStream(":memory:", EMB)
    _fill(s, memories)
    for owner in s.owners():
        got = s.retrieve(owner, query, now=hours(600), k=k, touch=False)
        assert len(got) == min(k, s.count(owner))
        assert {r.memory.owner for r in got} == {owner}
        for r in got:
            assert all(0.0 <= c <= 1.0 for c in (r.recency, r.importance, r.relevance))


@SETTINGS
@given(st.lists(st.integers(1, 10), min_size=2, max_size=12))
def test_score_rises_with_importance_alone(importances: list[int]) -> None:
    s = MemoryStream(":memory:", EMB)
    _fill(s, [("ann", "the same text", 0, imp) for imp in importances])
    got = s.retrieve("ann", "text", now=hours(1), k=len(importances), touch=False)
    ordered = sorted(got, key=lambda r: r.memory.importance)
    assert all(a.score <= b.score for a, b in zip(ordered, ordered[1:], strict=False))


@SETTINGS
@given(st.lists(st.integers(0, 1000), min_size=2, max_size=12))
def test_score_rises_with_recency_alone(times: list[int]) -> None:
    s = MemoryStream(":memory:", EMB)
    _fill(s, [("ann", "the same text", h, 5) for h in times])
    got = s.retrieve("ann", "text", now=hours(1001), k=len(times), touch=False)
    ordered = sorted(got, key=lambda r: r.memory.last_accessed_at)
    assert all(a.score <= b.score for a, b in zip(ordered, ordered[1:], strict=False))


@pytest.mark.slow
@SETTINGS
@given(st.lists(TEXTS, min_size=2, max_size=12), TEXTS)
def test_score_rises_with_relevance_alone(texts: list[str], query: str) -> None:
    s = MemoryStream(":memory:", EMB)
    _fill(s, [("ann", t, 0, 5) for t in texts])
    got = s.retrieve("ann", query, now=hours(1), k=len(texts), touch=False)
    ordered = sorted(got, key=lambda r: r.raw_relevance)
    assert all(a.score <= b.score + 1e-9 for a, b in zip(ordered, ordered[1:], strict=False))


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(st.lists(memory, min_size=1, max_size=20), st.lists(st.tuples(st.integers(0, 19), st.integers(0, 900))))
def test_persistence_round_trip(memories, accesses) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.db"
        with MemoryStream(path, EMB) as s:
            _fill(s, memories)
            for i, hour in accesses:
                if i < len(memories):
                    owner = memories[i][0]
                    s.record_access(owner, [i + 1], hours(hour))
            state = s.get_state()
            before = {o: [r.as_row() for r in s.retrieve(o, "party", now=hours(999), k=5, touch=False)]
                      for o in s.owners()}
        with MemoryStream(path, create=False) as s:
            assert s.get_state() == state
            after = {o: [r.as_row() for r in s.retrieve(o, "party", now=hours(999), k=5, touch=False)]
                     for o in s.owners()}
        assert before == after


def _reference_top(stream: MemoryStream, owner: str, query: str, now_h: float, k: int, w
                   ) -> tuple[list[int], dict[int, float]]:
    """The paper's score written plainly, one memory at a time (no caching, no affine tricks),
    plus the time term: ``w.time`` for a memory created inside the span the query names. A memory
    created after ``now`` does not exist yet."""
    import numpy as np

    from memstream.models.base import windows
    from memstream.stream.timescope import time_scope

    q = stream.embedder.embed([query])[0]
    mems = [m for m in stream.memories(owner) if m.created_at <= hours(now_h)]  # the past only
    if not mems:
        return [], {}
    scope = time_scope(query, hours(now_h))

    best_key = [max(float(np.dot(v, q)) for v in stream.embedder.embed(windows(m.text))) for m in mems]
    rec = [w.decay ** max(0.0, now_h - (m.last_accessed_at - hours(0)).total_seconds() / 3600) for m in mems]
    imp = [float(m.importance) for m in mems]
    rel = best_key

    def norm(xs: list[float], tolerance: float = 0.0) -> list[float]:
        lo, hi = min(xs), max(xs)
        return [(x - lo) / (hi - lo) if hi - lo > tolerance else 0.5 for x in xs]

    # float32 cosines: a spread under 1e-6 is rounding noise and counts as constant
    rec, imp, rel = norm(rec), norm(imp), norm(rel, 1e-6)
    in_span = [float(scope is not None and scope.start <= m.created_at <= scope.end) for m in mems]
    total = [w.recency * a + w.importance * b + w.relevance * c + w.time * d
             for a, b, c, d in zip(rec, imp, rel, in_span, strict=True)]
    order = sorted(range(len(mems)), key=lambda i: (-round(total[i], 9), -mems[i].id))
    return [mems[i].id for i in order[:k]], {m.id: t for m, t in zip(mems, total, strict=True)}


WHEN = st.sampled_from(["", " yesterday", " today", " two days ago", " last week", " a week ago", " this week"])


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(memory, min_size=1, max_size=25),
       st.lists(st.tuples(st.tuples(TEXTS, WHEN).map("".join), st.integers(0, 700), st.booleans()),
                min_size=1, max_size=6),
       st.floats(0.5, 1.0), st.tuples(st.floats(0, 3), st.floats(0, 3), st.floats(0, 3), st.floats(0, 3)),
       st.sampled_from(["flat", "hnsw"]))
def test_retrieval_matches_a_plain_reference_through_adds_and_touches(memories, queries, decay, ws, kind) -> None:
    from memstream.stream import Weights

    w = Weights(recency=ws[0], importance=ws[1], relevance=ws[2], time=ws[3], decay=decay)
    s = MemoryStream(":memory:", EMB, index=kind)  # HNSW is exact on a stream this small
    _fill(s, memories)
    for query, hour, touch in queries:
        owner = memories[0][0]
        got = s.retrieve(owner, query, now=hours(hour), k=5, weights=w, touch=False)
        expected, ref = _reference_top(s, owner, query, hour, 5, w)
        got_ids = [r.memory.id for r in got]
        # the same ranking, up to the order of scores equal within float rounding
        assert [round(ref[i], 9) for i in got_ids] == [round(ref[i], 9) for i in expected]
        assert [r.score for r in got] == pytest.approx([ref[i] for i in got_ids], abs=1e-6)
        if touch:
            s.retrieve(owner, query, now=hours(hour), k=2, weights=w)
        s.add(owner, query, at=hours(hour), importance=5)
