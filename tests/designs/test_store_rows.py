"""Every design that keeps rows remembers the same through a design store as in memory alone.

A generated sequence of writes (one to three owners, batches of one to five entries, a consolidation now
and then) is run twice: through ``open_design`` on a temporary store that is closed and opened again at
generated points (so owners are read back from rows), and on a plain design in memory. Every owner's
contexts for a few queries must be the same ``Context`` (and the same text), and the designs' states equal
(but for the next ids: a store hands ids out a block at a time).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.designs import entry, make_design
from memstream.designs.store import open_design
from memstream.models import make_chat_model, make_embedder

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
WORDS = ("I live in", "I love", "actually I prefer", "my sister", "Lisbon", "cello", "Porto", "garden", "exam",
         "coffee", "train", "moved", "Tuesday")
QUERIES = ("where does she live?", "what does she play on Tuesday?", "coffee")
#: Each design with settings small enough that a few writes evict, summarise and consolidate.
DESIGNS: dict[str, dict[str, Any]] = {
    "full": {},
    "buffer-summary": {"turns": 3, "batch": 2},
    "vector": {},
    "tiered": {"window_turns": 3, "batch": 2, "retriever": "generative+bm25"},
    "letta": {"window_tokens": 1800, "summary_batch": 2, "sleeptime_turns": 4},
    "profile": {},
}

sentences = st.lists(st.sampled_from(WORDS), min_size=2, max_size=6).map(" ".join)
batches = st.lists(st.tuples(sentences, st.booleans()), min_size=1, max_size=5)
steps = st.lists(st.one_of(
    st.tuples(st.just("write"), st.integers(0, 2), batches),
    st.tuples(st.just("consolidate"), st.integers(0, 2), st.just([])),
    st.tuples(st.just("reopen"), st.just(0), st.just([]))), min_size=1, max_size=8)


def _entries(batch: list[tuple[str, bool]], first: int) -> list[Any]:
    return [entry(text=f"{text} ({first + k})", at=START + timedelta(minutes=first + k),
                  kind="pinned" if pinned and k == 0 else "turn", session=f"s{(first + k) // 6}")
            for k, (text, pinned) in enumerate(batch)]


def _comparable(state: Any) -> dict[str, Any]:
    """A state but for what two runs never share: the next ids, and when (wall clock) a profile version was made."""
    dumped: dict[str, Any] = state.model_dump(mode="json", exclude={"next_id", "next_block"})
    for owner in dumped["owners"].values():
        for version in owner.get("versions", []):
            version.pop("made_s")
    return dumped


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DESIGNS))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owners=st.integers(1, 3), plan=steps)
def test_a_store_remembers_what_memory_alone_does(name: str, owners: int, plan: list[Any], tmp_path: Path) -> None:
    chat, embedder = make_chat_model("offline"), make_embedder("hash")
    config = DESIGNS[name]
    path = tmp_path / f"{name}-{abs(hash(repr(plan))) % 10**9}-{owners}.db"
    plain = make_design(name, embedder=embedder, **config)
    names = ["ana", "bo", "cy"][:owners]
    written = 0
    opened = open_design(name, store=path, embedder=embedder, chat=chat, **config)
    stored = opened.__enter__()
    try:
        for what, who, batch in plan:
            owner = names[who % owners]
            if what == "reopen":
                opened.__exit__(None, None, None)
                opened = open_design(name, store=path, embedder=embedder, chat=chat)
                stored = opened.__enter__()
            elif what == "write":
                entries = _entries(batch, written)
                written += len(entries)
                assert stored.write(owner, entries) == plain.write(owner, entries, chat=chat)
            else:
                at = START + timedelta(minutes=written)
                assert stored.consolidate(owner, at) == plain.consolidate(owner, at, chat=chat)
        now = START + timedelta(minutes=written + 5)
        for owner in names:
            for query in QUERIES:
                for budget in (60, 400):
                    kept, alone = stored.context(owner, query, now, budget), plain.context(owner, query, now, budget)
                    assert kept == alone and kept.text == alone.text
        assert _comparable(stored.design.get_state()) == _comparable(plain.get_state())
    finally:
        opened.__exit__(None, None, None)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_forget_leaves_nothing_of_the_owner_and_the_others_as_they_were(name: str, tmp_path: Path) -> None:
    chat, embedder = make_chat_model("offline"), make_embedder("hash")
    path = tmp_path / "memory.db"
    now = START + timedelta(days=1)
    with open_design(name, store=path, embedder=embedder, chat=chat, **DESIGNS[name]) as memory:
        for k in range(6):
            memory.write("ana", _entries([("I live in Zanzibarquux with my sister", False), ("I love cello", False)],
                                         10 * k))
            memory.write("bo", _entries([("I live in Porto", False)], 10 * k + 5))
        memory.consolidate("ana", now)
        before = memory.context("bo", "where does he live?", now, 400)
        assert "Zanzibarquux" in memory.context("ana", "where does she live?", now, 400).text
        assert memory.forget("ana") > 0
        assert memory.owners() == ["bo"]
        assert memory.context("bo", "where does he live?", now, 400) == before
        held = memory.design.get_state().model_dump_json()
        assert "Zanzibarquux" not in held and '"ana"' not in held
        assert memory.context("ana", "where does she live?", now, 400).blocks == []
    assert not any(b"Zanzibarquux" in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    with open_design(name, store=path, embedder=embedder, chat=chat) as memory:
        assert memory.context("bo", "where does he live?", now, 400) == before


def test_a_letta_block_shared_by_two_owners_is_one_block_in_the_store(tmp_path: Path) -> None:
    """An edit of a shared block by one owner is seen by the other, read back from the store; forgetting one
    owner keeps the block the other still has."""
    chat, path = make_chat_model("offline"), tmp_path / "memory.db"
    with open_design("letta", store=path, chat=chat) as memory:
        block = memory.change(["ana", "bo"], lambda d: d.share_block("team", ["ana", "bo"], "the team meets on Mondays"))
        memory.write("bo", _entries([("I live in Porto", False)], 0))
    with open_design("letta", store=path, chat=chat) as memory:
        def edit(design: Any) -> None:
            design.store.get("ana", "team").value = "the team meets on Fridays"
        memory.change(["ana"], edit)
    with open_design("letta", store=path, chat=chat) as memory:
        seen = memory.context("bo", "when does the team meet?", START + timedelta(days=1), 2000).text
        assert "Fridays" in seen and "Mondays" not in seen
        memory.forget("ana")
        assert [b.label for b in memory.design.blocks_of("bo")] == ["persona", "human", "team"]
        assert memory.design.store.get("bo", "team").id == block.id
    with open_design("letta", store=path, chat=chat) as memory:
        assert "Fridays" in memory.context("bo", "team", START + timedelta(days=1), 2000).text
