"""Forgetting an owner: the stream's explicit delete, in one transaction, leaving every other owner as it was."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.errors import MemstreamError
from memstream.models import HashEmbedder
from memstream.stream import MemoryStream, check_file
from tests.helpers import T0

EMBED = HashEmbedder(16)


def others(path: Path, owner: str) -> tuple[list, list, dict]:
    """Every row that is not ``owner``'s (memories, their accesses, the meta values that do not name them)."""
    with sqlite3.connect(path) as db:
        return (db.execute("SELECT * FROM memories WHERE owner != ? ORDER BY id", (owner,)).fetchall(),
                db.execute("SELECT a.rowid, a.* FROM accesses a JOIN memories m ON m.id = a.memory_id "
                           "WHERE m.owner != ? ORDER BY a.rowid", (owner,)).fetchall(),
                {k: v for k, v in db.execute("SELECT key, value FROM meta") if owner not in k
                 and k not in ("ids.through", "erasures")})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(["ann", "bob", "cy"]), st.booleans()), min_size=1, max_size=14))
def test_forget_removes_the_owner_and_leaves_every_other_row_and_passes_check(tmp_path: Path, steps: list) -> None:
    path = tmp_path / f"s{abs(hash(tuple(steps)))}.db"
    with MemoryStream(path, EMBED) as s:
        for n, (owner, read) in enumerate(steps):
            s.add(owner, f"{owner} saw the Zebulon lantern {n}", at=T0 + timedelta(minutes=n), importance=3)
            if read:
                s.retrieve(owner, "lantern", now=T0 + timedelta(minutes=n, seconds=30), k=2)
        s.mark_reflected("ann", s.last_id("ann"))
        kept, newest = others(path, "ann"), s.store.next_id()
        had = len(s.memories("ann")) if s.has("ann") else 0
        gone = s.forget("ann")
        assert gone >= had and not s.has("ann") and "ann" not in s.owners()
        assert s.store.next_id() == newest  # an id is never handed out twice
    assert others(path, "ann") == kept
    assert check_file(path) == []
    assert b"ann saw" not in b"".join(Path(f"{path}{e}").read_bytes() for e in ("", "-wal")
                                      if Path(f"{path}{e}").exists())


def test_the_file_stays_append_only_after_a_forget(tmp_path: Path) -> None:
    with MemoryStream(tmp_path / "s.db", EMBED) as s:
        s.add("ann", "ann's memory", at=T0, importance=3)
        s.add("bob", "bob's memory", at=T0, importance=3)
        s.forget("ann")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            s.store.db.execute("DELETE FROM memories WHERE owner='bob'")


def test_another_process_stream_drops_a_forgotten_owner_from_its_indexes(tmp_path: Path) -> None:
    with MemoryStream(tmp_path / "s.db", EMBED) as a, MemoryStream(tmp_path / "s.db", EMBED) as b:
        a.add("ann", "ann keeps a red kite", at=T0, importance=3)
        a.add("bob", "bob keeps a red kite too", at=T0, importance=3)
        assert b.retrieve("ann", "kite", now=T0, k=3, touch=False)
        bob = b.retrieve("bob", "kite", now=T0, k=3, touch=False)
        a.forget("ann")
        assert b.retrieve("ann", "kite", now=T0, k=3, touch=False) == [] and b.owners() == ["bob"]
        assert b.retrieve("bob", "kite", now=T0, k=3, touch=False) == bob
        a.add("ann", "ann again", at=T0, importance=3)
        assert [m.text for m in b.memories("ann")] == ["ann again"]


def test_forget_on_a_read_only_stream_is_refused(tmp_path: Path) -> None:
    with MemoryStream(tmp_path / "s.db", EMBED) as s:
        s.add("ann", "ann's memory", at=T0, importance=3)
    with MemoryStream(tmp_path / "s.db", EMBED, readonly=True) as s, pytest.raises(MemstreamError, match="read-only"):
        s.forget("ann")


def test_a_forget_that_fails_midway_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    with MemoryStream(path, EMBED) as s:
        s.add("ann", "ann's memory", at=T0, importance=3)
        before = others(path, "nobody")

        def fail(values: dict) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(s.store, "put_meta", fail)  # after the deletes, before the triggers are made again
        with pytest.raises(MemstreamError, match="was not forgotten .disk I/O error.; nothing of it was changed"):
            s.forget("ann")
    assert others(path, "nobody") == before
    assert check_file(path) == []  # the append-only triggers are all there
