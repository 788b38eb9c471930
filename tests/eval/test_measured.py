"""The eval's designs through a design store: the same ids and contexts as the designs alone, every entry kept
once (a repeated turn too), the store gone when the eval ends, and every design the store keeps written there."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memstream.eval.answers as answers
from memstream.designs import DESIGNS, DesignStore, Entry, entry, make_design, storable
from memstream.designs.store.store import OwnerKey
from memstream.eval import evaluate_designs, load_locomo
from memstream.eval.measured import MeasuredDesign, eval_store, measured_design
from memstream.models import HashEmbedder, OfflineChatModel, run_direct
from tests.helpers import T0, offline_models, tiny_locomo

KEPT = [name for name in DESIGNS if storable(name)]
WORDS = ["cat", "Lisbon", "pottery", "race", "sister", "Pixel", "Tuesday", "moved", "grey"]


def test_the_designs_that_give_their_memory_as_rows_are_the_storable_ones() -> None:
    assert {"full", "vector", "buffer-summary"} <= set(KEPT)
    assert not storable("no-such-design")


#: Sessions of turns: few words and repeated times, so the same turn said twice at once is common.
conversations = st.lists(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
                                            st.integers(0, 3)), min_size=1, max_size=6), min_size=1, max_size=4)


def _sessions(drawn: list[list[tuple[list[str], int]]]) -> list[list[Entry]]:
    """The drawn turns as the harness gives them: each with its position as its id."""
    out, position = [], 0
    for s, turns in enumerate(drawn):
        out.append([])
        for words, minutes in turns:
            out[-1].append(entry(text=" ".join(words), at=T0 + timedelta(days=s, minutes=minutes),
                                 session=f"s{s}", id=str(position)))
            position += 1
    return out


@pytest.mark.parametrize("name", KEPT)
@settings(max_examples=15, deadline=None)
@given(drawn=conversations, query=st.sampled_from(WORDS), budget=st.integers(5, 200))
def test_a_design_through_the_store_answers_as_the_design_alone(name: str, drawn, query: str, budget: int) -> None:
    chat, embedder = OfflineChatModel(), HashEmbedder(32)
    sessions = _sessions(drawn)
    with eval_store() as store, measured_design(name, store, embedder=embedder, settings={}, scope="s") as kept:
        alone = MeasuredDesign(make_design(name, embedder=embedder))
        for entries in sessions:
            ids = [run_direct(m.remember_stage("ana", entries), chat) for m in (kept, alone)]
            assert ids[0] == ids[1] and None not in ids[0] and len(set(ids[0])) == len(entries)
            made = [run_direct(m.consolidate_stage("ana", entries[-1].at), chat) for m in (kept, alone)]
            assert made[0] == made[1]
        now = sessions[-1][-1].at + timedelta(hours=1)
        got = [m.context("ana", query, now, budget) for m in (kept, alone)]
        assert (got[0].text, got[0].ids) == (got[1].text, got[1].ids)
        assert len(store.known_keys(OwnerKey(name, "s", "ana"), [e.key for s in sessions for e in s])) == \
            sum(map(len, sessions))
        path = Path(store.path)
    assert not path.parent.exists()  # the eval's store is removed with its folder


def test_the_eval_writes_every_design_the_store_keeps_there_and_the_others_alone(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    kept_at = tmp_path / "kept.db"

    @contextmanager
    def kept_store() -> Iterator[DesignStore]:
        store = DesignStore(kept_at)
        yield store
        store.close()

    monkeypatch.setattr(answers, "eval_store", kept_store)
    names = [*KEPT, *[n for n in DESIGNS if not storable(n)][:1]]
    dataset = load_locomo(tiny_locomo(tmp_path))
    rows = evaluate_designs(dataset, names, [400], offline_models(), progress=False)
    assert {r["design"] for r in rows} == set(names)
    held = DesignStore(kept_at, read_only=True)
    try:
        assert set(held.designs()) == set(KEPT)
        for name in KEPT:
            assert held.owners(name, "haystack 0") == ["c1"]
            (count,) = held.db.execute("SELECT COUNT(*) FROM design_records WHERE design=? AND key IS NOT NULL",
                                       (name,)).fetchone()
            assert count == len(dataset.haystacks[0].memories) == 18
    finally:
        held.close()
