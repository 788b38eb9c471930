"""One current version per fact: a superseded version never becomes current again, whatever is written
after it (the same message added again, the old text said again, forget and restore), and ``check``
proves it, one line per fact that breaks it."""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.facts import (
    Change,
    FactStore,
    NewFact,
    Source,
    apply,
    check_facts_file,
    forget,
    recall,
    restore,
    versions,
)
from memstream.models import HashEmbedder

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
EMBED = HashEmbedder(64)


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


def add(s: FactStore, key: str, text: str, when: datetime, *, action: str = "new", target: int | None = None):
    return apply(s, "ann", Source(key, text, when), [Change(action, NewFact(text), target)])[0]


def current(s: FactStore) -> list[str]:
    return sorted(h.fact.text for h in recall(s, "ann", "", at(100), k=100))


def test_an_earlier_message_added_again_after_its_correction_stays_history(tmp_path: Path) -> None:
    s = FactStore(tmp_path / "f.db", EMBED)
    paris = add(s, "m1", "I live in Paris", at(0)).fact_id
    berlin = add(s, "m2", "I live in Berlin", at(1), action="update", target=paris).fact_id
    again = add(s, "m1", "I live in Paris", at(0))  # the same message, added again
    assert (again.action, again.fact_id, again.written) == ("duplicate", berlin, False)
    assert current(s) == ["I live in Berlin"] and [f.is_latest for f in versions(s, paris)] == [False, True]
    s.close()
    assert check_facts_file(tmp_path / "f.db") == []


def test_the_old_text_said_again_later_is_a_new_version_that_supersedes_the_correction() -> None:
    s = FactStore(":memory:", EMBED)
    paris = add(s, "m1", "I live in Paris", at(0)).fact_id
    berlin = add(s, "m2", "I live in Berlin", at(1), action="update", target=paris).fact_id
    back = add(s, "m3", "I live in Paris", at(2))  # moved back: the user said it again
    assert (back.action, back.closed) == ("update", berlin)
    assert current(s) == ["I live in Paris"]
    assert [(f.text, f.is_latest) for f in versions(s, paris)] == [
        ("I live in Paris", False), ("I live in Berlin", False), ("I live in Paris", True)]


def test_a_forgotten_latest_version_is_superseded_so_restoring_it_brings_back_history() -> None:
    s = FactStore(":memory:", EMBED)
    paris = add(s, "m1", "I live in Paris", at(0)).fact_id
    forget(s, "ann", [paris], at(1))
    rome = add(s, "m2", "I live in Rome", at(2), action="update", target=paris)
    assert (rome.action, rome.closed) == ("update", paris)
    restore(s, "ann", [paris], at(3))
    assert current(s) == ["I live in Rome"]


def _broken(tmp_path: Path, sql: list[str]) -> Path:
    path = tmp_path / "f.db"
    s = FactStore(path, EMBED)
    paris = add(s, "m1", "I live in Paris", at(0)).fact_id
    add(s, "m2", "I live in Berlin", at(1), action="update", target=paris)
    add(s, "m3", "Ann has a cat", at(1))
    s.close()
    with closing(sqlite3.connect(path)) as db:
        for statement in sql:
            db.execute(statement)
        db.commit()
    return path


def test_check_reports_a_chain_with_two_latest_versions_in_one_line(tmp_path: Path) -> None:
    # a second version (the cat fact, 3) updating fact 1 beside fact 2: a branch with two heads
    path = _broken(tmp_path, ["INSERT INTO edges VALUES (3, 'UPDATES', 1)"])
    assert check_facts_file(path) == ["fact 1: its chain (1, 2, 3) has 2 latest versions (2, 3), not one"]


def test_check_reports_a_superseded_version_marked_latest(tmp_path: Path) -> None:
    path = _broken(tmp_path, ["UPDATE facts SET is_latest=1 WHERE id=1"])
    assert check_facts_file(path) == ["fact 1: its chain (1, 2) has 2 latest versions (1, 2), not one"]


def test_check_reports_the_old_text_current_again_beside_its_correction(tmp_path: Path) -> None:
    # what the write path once did: the first text again as a separate current fact, beside the correction
    path = _broken(tmp_path, [
        "INSERT INTO facts(tenant, owner, text, kind, salience, confidence, content_hash, created_s, valid_from_s, "
        "embedding) SELECT tenant, owner, text, kind, salience, confidence, content_hash, created_s, valid_from_s, "
        "embedding FROM facts WHERE id=1",
        "INSERT INTO provenance VALUES (4, 1)"])
    assert check_facts_file(path) == [
        "fact 1: 2 versions are current at once (2, 4); the same text is in two chains"]


TEXTS = ["I live in Paris", "I live in Berlin", "I live in Rome", "Ann has a cat", "Ann has a dog"]
steps = st.lists(st.tuples(st.sampled_from(["add", "update", "re-add", "forget", "restore"]),
                           st.integers(0, len(TEXTS) - 1), st.integers(0, 20)), min_size=1, max_size=14)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_any_sequence_of_writes_keeps_one_current_version_per_fact(plan: list[tuple[str, int, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.db"
        s = FactStore(path, EMBED)
        said: list[tuple[str, str, datetime]] = []
        superseded: set[int] = set()
        for day, (what, text, pick) in enumerate(plan, start=1):
            ids = [r[0] for r in s.db.execute("SELECT id FROM facts ORDER BY id")]
            if what == "add" or not ids and what != "re-add":
                said.append((f"m{day}", TEXTS[text], at(day)))
                add(s, *said[-1])
            elif what == "update":
                said.append((f"m{day}", TEXTS[text], at(day)))
                add(s, *said[-1], action="update", target=ids[pick % len(ids)])
            elif what == "re-add" and said:
                add(s, *said[pick % len(said)])  # an earlier message, exactly as it was
            elif what == "forget":
                forget(s, "ann", [ids[pick % len(ids)]], at(day))
            elif what == "restore":
                restore(s, "ann", [ids[pick % len(ids)]], at(day))
            rows = s.db.execute("SELECT id, is_latest FROM facts").fetchall()
            assert not superseded & {i for i, latest in rows if latest}, "a superseded version became current"
            superseded |= {i for i, latest in rows if not latest}
            shown = current(s)
            assert len(shown) == len(set(shown)), shown
        s.close()
        assert check_facts_file(path) == []
