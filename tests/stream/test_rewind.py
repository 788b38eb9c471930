"""Rewinding a stream to a mark: what a run resumed from its checkpoint takes back, and nothing else."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.models import HashEmbedder
from memstream.stream import MemoryStream, StreamMark, rewind_stream
from tests.helpers import T0

EMBED = HashEmbedder(16)


def rows(path: Path) -> tuple[list, list, dict]:
    with MemoryStream(path, EMBED, create=False, readonly=True) as s:
        db = s.store.db
        return (db.execute("SELECT id, owner, text, importance FROM memories ORDER BY id").fetchall(),
                db.execute("SELECT rowid, memory_id, accessed_at FROM accesses ORDER BY rowid").fetchall(),
                dict(db.execute("SELECT key, value FROM meta")))


# each step: write a memory for an owner, or retrieve for one (an access logged), or mark reflection done
STEPS = st.lists(st.tuples(st.sampled_from(["write", "read", "reflected"]), st.sampled_from(["ann", "bob"])),
                 min_size=1, max_size=12)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=STEPS, after=STEPS)
def test_a_rewound_stream_is_the_stream_as_it_stood_at_its_mark(tmp_path: Path, before: list, after: list) -> None:
    path = tmp_path / f"s{abs(hash((tuple(before), tuple(after))))}.db"

    def play(s: MemoryStream, steps: list, offset: int) -> None:
        for n, (what, owner) in enumerate(steps, offset):
            at = T0 + timedelta(minutes=n)
            if what == "write" or not s.has(owner):
                s.add(owner, f"{owner} note {n}", at=at, importance=1 + n % 10)
            elif what == "read":
                s.retrieve(owner, "note", now=at, k=2)
            else:
                s.mark_reflected(owner, s.last_id(owner))

    with MemoryStream(path, EMBED) as s:
        play(s, before, 0)
        mark = s.mark()
    expected = rows(path)
    with MemoryStream(path, EMBED) as s:
        play(s, after, len(before))
    rewind_stream(path, StreamMark.from_dict(mark.as_dict()))
    assert rows(path) == expected
    with MemoryStream(path, EMBED) as s, pytest.raises(Exception, match="append-only"):
        s.store.db.execute("DELETE FROM memories")  # the triggers stand again


def test_a_mark_the_file_never_reached_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with MemoryStream(path, EMBED) as s:
        s.add("ann", "one", at=T0, importance=3)
        mark = s.mark()
    before = rows(path)
    with pytest.raises(ValueError, match="not the checkpoint's"):
        rewind_stream(path, StreamMark(mark.memories_through + 1, mark.accesses_through, mark.meta))
    assert rows(path) == before


@pytest.mark.parametrize("data", [None, {}, {"meta": {}}, {"memories_through": -1, "accesses_through": 0, "meta": {}},
                                  {"memories_through": "3", "accesses_through": 0, "meta": {}}])
def test_what_is_not_a_mark_is_refused(data: object) -> None:
    with pytest.raises(ValueError):
        StreamMark.from_dict(data)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=STEPS, after=STEPS)
def test_a_look_back_reads_the_stream_as_it_stood_at_its_mark(tmp_path: Path, before: list, after: list) -> None:
    """A retrieval of the whole stream as it stood at an earlier time (``as_it_stood``, with the mark taken then
    or without) is that of the stream rewound to the mark: the memories made since left out, and every memory's
    recency from its last access *as of then* (an access after it does not count, where a plain retrieval at
    that time counts it as one at the query's time)."""
    path = tmp_path / f"s{abs(hash((tuple(before), tuple(after))))}.db"
    then = path.with_suffix(".then.db")

    def play(s: MemoryStream, steps: list, offset: int) -> None:
        for n, (what, owner) in enumerate(steps, offset):
            at = T0 + timedelta(hours=n)
            if what == "write" or not s.has(owner):
                s.add(owner, f"{owner} note {n}", at=at, importance=1 + n % 10)
            else:
                s.retrieve(owner, "note", now=at, k=1 + n % 3)

    with MemoryStream(path, EMBED) as s:
        play(s, before, 0)
        mark = s.mark()
        s.backup(then)
        play(s, after, len(before))
    rewind_stream(then, mark)
    at = T0 + timedelta(hours=len(before) - 1, minutes=30)  # between the last step before the mark and the next
    with (MemoryStream(path, EMBED, create=False, readonly=True) as whole,
          MemoryStream(then, EMBED, create=False, readonly=True) as past):
        for owner in ("ann", "bob"):
            expected = [r.as_row() for r in past.retrieve(owner, "note", now=at, k=5, touch=False)]
            for view in (whole.as_it_stood(at), whole.as_it_stood(at, mark)):
                assert [r.as_row() for r in view.retrieve(owner, "note", now=at, k=5, touch=False)] == expected
            view.close()  # a view's close leaves its stream open
            assert whole.count() >= past.count()
