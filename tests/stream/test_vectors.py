"""``vectors="fp16"``: half the bytes, the same top k as float32 except at near-ties, and a bounded score difference."""

from __future__ import annotations

import faiss
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memstream.models import HashEmbedder
from memstream.stream import MemoryStream, Weights
from memstream.stream.index import OwnerIndex
from tests.helpers import hours

EMB = HashEmbedder(32)
WORDS = st.sampled_from(["cafe", "party", "park", "stove", "book", "paint", "music", "exam", "lunch", "friend",
                         "valentine", "isabella", "klaus", "maria", "garden", "library"])
TEXT = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)
MEMORY = st.tuples(TEXT, st.integers(0, 500), st.integers(1, 10))
#: Rounding a unit vector's components to float16 moves its inner product with a unit query by at most
#: sum |q_i x_i| 2**-11 <= 2**-11 (Cauchy-Schwarz); float32 summation adds rounding far below that.
RAW_ERROR = 2.0**-11 + 1e-6


def _pair(memories: list[tuple[str, int, int]], path: str = ":memory:") -> tuple[MemoryStream, MemoryStream]:
    streams = MemoryStream(":memory:", EMB), MemoryStream(path, EMB, vectors="fp16")
    for s in streams:
        for text, hour, imp in memories:
            s.add("ann", text, at=hours(hour), importance=imp)
    return streams


@settings(max_examples=60, deadline=None)
@given(st.lists(MEMORY, min_size=2, max_size=40), TEXT, st.integers(1, 12),
       st.tuples(st.floats(0, 3), st.floats(0, 3), st.floats(0.1, 3)), st.sampled_from(["flat", "hnsw"]))
def test_fp16_top_k_is_float32_top_k_except_at_near_ties(memories, query, k, ws, kind) -> None:
    w = Weights(recency=ws[0], importance=ws[1], relevance=ws[2])
    f32 = MemoryStream(":memory:", EMB)
    f16 = MemoryStream(":memory:", EMB, index=kind, vectors="fp16")  # HNSW is exact on a stream this small
    for s in (f32, f16):
        for text, hour, imp in memories:
            s.add("ann", text, at=hours(hour), importance=imp)
    everything = f32.retrieve("ann", query, now=hours(600), k=len(memories), weights=w, touch=False)
    raw = [r.raw_relevance for r in everything]
    spread = max(raw) - min(raw)
    assume(spread == 0 or spread > 10 * RAW_ERROR)  # a spread near the rounding is blown up by min-max normalisation
    # min-max normalised relevance moves by at most (2e + 2e) / (spread - 2e), e the raw error
    bound = 0.0 if spread == 0 else w.relevance * 4 * RAW_ERROR / (spread - 2 * RAW_ERROR) + 1e-9
    exact = everything[:k]
    got = f16.retrieve("ann", query, now=hours(600), k=k, weights=w, touch=False)
    assert len(got) == len(exact)
    by_id = {r.memory.id: r for r in everything}
    for r in got:  # every memory's score moves by at most the bound
        assert abs(r.score - by_id[r.memory.id].score) <= bound
        assert abs(r.raw_relevance - by_id[r.memory.id].raw_relevance) <= RAW_ERROR
    # a memory float32 ranks in the top k and fp16 does not was within twice the bound of the cut
    cut = exact[-1].score
    for r in exact:
        if r.memory.id not in {g.memory.id for g in got}:
            assert r.score <= cut + 2 * bound


def test_fp16_holds_half_the_bytes_and_reads_them_in_place() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((50, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(1, 51)
    times = np.arange(50, dtype=np.float64)
    indexes = {kind: OwnerIndex(32, "flat", kind) for kind in ("float32", "fp16")}
    for ix in indexes.values():
        ix.add(ids, vectors, times, np.ones(50))
    assert indexes["fp16"].vectors().dtype == np.float16
    assert indexes["fp16"].vectors().nbytes * 2 == indexes["float32"].vectors().nbytes
    q = vectors[:3]
    assert np.abs(indexes["fp16"]._products(q) - q @ vectors.T).max() <= RAW_ERROR
    # FAISS's codes are IEEE halves: read in place, they are what FAISS itself decodes
    decoded = indexes["fp16"].index.sa_decode(indexes["fp16"].vectors().view(np.uint8))
    assert np.array_equal(decoded, indexes["fp16"].vectors().astype(np.float32))


def test_fp16_survives_reopening_and_looks_back_in_time(tmp_path) -> None:
    path = str(tmp_path / "s.db")
    memories = [(f"isabella plans the valentine party {i % 7} at the cafe", i, 1 + i % 10) for i in range(60)]
    f32, f16 = _pair(memories, path)
    f16.close()
    reopened = MemoryStream(path, EMB, vectors="fp16")
    for now in (hours(30), hours(600)):  # at hour 30 half the memories are not there yet
        a = [r.memory.id for r in f32.retrieve("ann", "valentine party cafe", now=now, k=8, touch=False)]
        b = [r.memory.id for r in reopened.retrieve("ann", "valentine party cafe", now=now, k=8, touch=False)]
        assert a == b
    assert reopened._owners["ann"].vectors().dtype == np.float16


def test_unknown_vectors_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown vectors"):
        MemoryStream(":memory:", EMB, vectors="int4")  # type: ignore[arg-type]


def _address(pointer) -> int:
    return faiss.rev_swig_ptr(pointer, 1).__array_interface__["data"][0]


@pytest.mark.parametrize("kind", ["float32", "fp16"])
def test_storage_grows_by_a_quarter_and_keeps_every_vector(kind) -> None:
    from memstream.stream.index import GROWTH

    rng = np.random.default_rng(1)
    ix = OwnerIndex(16, "flat", kind)
    added = []
    for i in range(300):
        rows = rng.standard_normal((1 + i % 3, 16)).astype(np.float32)
        ix.add(np.array([i + 1]), rows, np.array([float(i)]), np.array([5.0]), keys=np.array([len(rows)]))
        added.append(rows)
        codes = ix.index.codes  # FAISS reads its codes through its own pointer: the vector swapped in
        assert _address(codes.data()) == _address(codes.owned_data.data())
        held = ix.n_keys * ix.index.code_size
        assert held <= ix._capacity <= max(held + 3 * ix.index.code_size, GROWTH * held + ix.index.code_size)
    everything = np.vstack(added)
    expected = everything if kind == "float32" else ix.index.sa_decode(ix.index.sa_encode(everything))
    assert np.array_equal(ix.vectors().astype(np.float32), expected)


def test_memories_with_one_key_hold_no_key_columns_until_one_has_several() -> None:
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((13, 8)).astype(np.float32)
    keys = np.array([1] * 5 + [3] + [1] * 5)
    one_go, stepwise = OwnerIndex(8), OwnerIndex(8)
    one_go.add(np.arange(1, 12), vectors, np.arange(11.0), np.ones(11), keys=keys)
    for first, count in ((0, 5), (5, 1), (6, 5)):
        rows = slice(int(keys[:first].sum()), int(keys[:first + count].sum()))
        stepwise.add(np.arange(first + 1, first + count + 1), vectors[rows], np.arange(first, first + count, dtype=float),
                     np.ones(count), keys=keys[first:first + count])
        if first == 0:
            assert stepwise._key_start is None and stepwise._key_owner is None
    assert np.array_equal(stepwise.key_start(), one_go.key_start())
    assert np.array_equal(stepwise.key_owner(np.arange(13)), one_go.key_owner(np.arange(13)))
    q = vectors[6:8]
    assert np.array_equal(stepwise._best_key(stepwise._products(q)), one_go._best_key(one_go._products(q)))
