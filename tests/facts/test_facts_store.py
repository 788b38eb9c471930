"""The facts store: versions, expiry, soft and hard delete, idempotent writes, snapshots, owner scope."""

from __future__ import annotations

import multiprocessing
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.errors import MemstreamError
from memstream.facts import (
    Change,
    Decay,
    FactStore,
    NewFact,
    ReadPolicy,
    Source,
    apply,
    check_facts_file,
    erase_facts,
    erase_owner,
    erase_source,
    forget,
    profile,
    recall,
    restore,
    sweep,
    touch,
    versions,
)
from memstream.models import HashEmbedder

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
EMBED = HashEmbedder(64)


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


def store(tmp_path: Path | None = None) -> FactStore:
    return FactStore(tmp_path / "facts.db" if tmp_path else ":memory:", EMBED)


def add(s: FactStore, owner: str, key: str, text: str, when: datetime, *, action: str = "new",
        target: int | None = None, **fields) -> int:
    return apply(s, owner, Source(key, text, when), [Change(action, NewFact(text, **fields), target)])[0].fact_id


def texts(hits) -> list[str]:
    return [h.fact.text for h in hits]


# -- versions ------------------------------------------------------------------------------------

values = st.lists(st.sampled_from(["Monday", "Tuesday", "Friday", "the 3rd", "next week", "noon"]), min_size=1,
                  max_size=6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_a_corrected_fact_never_comes_back_as_current(days: list[str]) -> None:
    s = store()
    first = add(s, "ann", "m0", f"The project deadline is {days[0]}", at(0))
    add(s, "ann", "other", "Ann's cat is called Miso", at(0))
    for i, day in enumerate(days[1:], start=1):
        add(s, "ann", f"m{i}", f"The project deadline is {day}", at(i), action="update", target=first)
    last = f"The project deadline is {days[-1]}"
    for query in ("what is the project deadline", "deadline", f"is the deadline {days[0]}", ""):
        found = [t for t in texts(recall(s, "ann", query, at(len(days)), k=50)) if "deadline" in t]
        assert found == [last], (query, found)
    chain = versions(s, first)
    assert [f.is_latest for f in chain].count(True) == 1 and chain[-1].text == last
    # as of each past day, the version current then
    for i, day in enumerate(days):
        now = [t for t in texts(recall(s, "ann", "deadline", at(i) + timedelta(hours=1), view="as-of")) if "deadline" in t]
        assert len(now) == 1 and now[0] == f"The project deadline is {day}" or (
            now == [] and f"The project deadline is {day}" in {f"The project deadline is {d}" for d in days[:i]})
    s.close()


def test_history_shows_earlier_versions_only_when_asked() -> None:
    s = store()
    first = add(s, "ann", "m1", "The deadline is Thursday", at(0))
    add(s, "ann", "m2", "The deadline is Friday", at(1), action="update", target=first)
    assert texts(recall(s, "ann", "deadline", at(2))) == ["The deadline is Friday"]
    old = [h.fact for h in recall(s, "ann", "deadline", at(2), view="history") if not h.fact.is_latest]
    assert [f.text for f in old] == ["The deadline is Thursday"] and old[0].valid_to_s == at(1).timestamp()


def test_an_update_of_a_superseded_version_updates_the_latest() -> None:
    s = store()
    first = add(s, "ann", "m1", "Lives in Oslo", at(0))
    second = add(s, "ann", "m2", "Lives in Bergen", at(1), action="update", target=first)
    third = add(s, "ann", "m3", "Lives in Tromso", at(2), action="update", target=first)  # a stale target
    assert [f.id for f in versions(s, first)] == [first, second, third]
    assert [f.is_latest for f in versions(s, first)] == [False, False, True]


def test_a_facts_text_is_never_edited() -> None:
    s = store()
    fid = add(s, "ann", "m1", "Likes tea", at(0))
    with pytest.raises(sqlite3.IntegrityError, match="never edited"), s.writing() as db:
        db.execute("UPDATE facts SET text='Likes coffee' WHERE id=?", (fid,))
    assert s.fact(fid).text == "Likes tea"


# -- expiry, soft delete, decay -------------------------------------------------------------------


def test_an_expired_fact_disappears_when_its_time_passes() -> None:
    s = store()
    add(s, "ann", "m1", "Ann is travelling in Lisbon this week", at(0), expires_at=at(7))
    assert texts(recall(s, "ann", "where is Ann travelling", at(6.9))) == ["Ann is travelling in Lisbon this week"]
    assert recall(s, "ann", "where is Ann travelling", at(7)) == []
    assert texts(recall(s, "ann", "travelling", at(3), view="as-of")) == ["Ann is travelling in Lisbon this week"]
    assert sweep(s, at(6)) == 0 and sweep(s, at(8)) == 1
    assert s.fact(1).deleted_why == "expired" and sweep(s, at(9)) == 0


def test_a_soft_delete_is_reversible() -> None:
    s = store()
    fid = add(s, "ann", "m1", "Ann prefers window seats", at(0), kind="preference")
    assert profile(s.db, "", "ann")[0] == "Ann prefers window seats."
    assert forget(s, "ann", [fid], at(1)) == 1
    assert recall(s, "ann", "seats", at(2)) == [] and recall(s, "ann", "seats", at(2), view="history") == []
    assert profile(s.db, "", "ann") == ("", [])
    assert restore(s, "ann", [fid], at(3)) == 1
    back = recall(s, "ann", "seats", at(4))
    assert [(h.fact.id, h.fact.text) for h in back] == [(fid, "Ann prefers window seats")]
    assert profile(s.db, "", "ann")[1] == [fid]
    with pytest.raises(MemstreamError, match="not one of 'bob'"):
        forget(s, "bob", [fid], at(5))


def test_decay_hides_old_rarely_recalled_low_salience_episodes() -> None:
    s = store()
    fid = add(s, "ann", "m1", "Ann had a sandwich at the station", at(0), kind="episode", salience=0.1)
    add(s, "ann", "m2", "Ann's sister is a surgeon at the station hospital", at(0), kind="fact", salience=0.1)
    policy = ReadPolicy(decay=Decay(older_than_days=30))
    assert "Ann had a sandwich at the station" in texts(recall(s, "ann", "station", at(10), policy=policy))
    assert texts(recall(s, "ann", "station", at(40), policy=policy)) == [
        "Ann's sister is a surgeon at the station hospital"]
    touch(s, [fid])
    touch(s, [fid])
    assert len(recall(s, "ann", "station", at(40), policy=policy)) == 2


# -- hard delete -----------------------------------------------------------------------------------


def _files(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("facts.db"))


def test_a_hard_delete_leaves_nothing_derived_anywhere(tmp_path: Path) -> None:
    s = store(tmp_path)
    secret_old, secret_new = "Ann's locker code is Quokkavelvet 1234", "Ann's locker code is Quokkavelvet 9876"
    first = add(s, "ann", "m1", secret_old, at(0), kind="preference", entities=("Quokkavelvet",))
    second = add(s, "ann", "m2", secret_new, at(1), kind="preference", action="update", target=first)
    apply(s, "ann", Source("m3", "Ann also likes quokkavelvet scarves", at(1)),
          [Change("extend", NewFact("Ann likes Quokkavelvet scarves", kind="preference"), second)])
    kept = add(s, "ann", "m4", "Ann likes green tea", at(2), kind="preference")
    add(s, "bob", "b1", "Bob likes green tea too", at(2))
    vectors = [np.frombuffer(v, dtype=np.float32).tobytes() for (v,) in s.db.execute(
        "SELECT embedding FROM facts WHERE id IN (?,?)", (first, second))]
    assert b"Quokkavelvet" in _files(tmp_path)
    # derived from m2: the new version, through UPDATES the old one; m1 left with no fact goes too
    erased = erase_source(s, "ann", "m2", at(3))
    assert set(erased.facts) == {first, second} and erased.wal_clean and erased.sources == 2
    s.close()
    blob = _files(tmp_path)
    for needle in (b"9876", b"1234", b"locker"):
        assert needle not in blob and needle not in blob.lower(), needle
    assert all(v not in blob for v in vectors)
    s = FactStore(tmp_path / "facts.db", EMBED, readonly=True)
    left = {h.fact.id for h in recall(s, "ann", "tea scarves locker", at(4), view="history", k=50)}
    assert kept in left and not left & {first, second}
    assert "locker" not in profile(s.db, "", "ann")[0] and "green tea" in profile(s.db, "", "ann")[0]
    action, detail = s.db.execute("SELECT action, detail FROM audit WHERE action='hard-delete'").fetchone()
    assert str(first) in detail and "locker" not in detail
    assert check_facts_file(tmp_path / "facts.db") == []
    s.close()
    # and the extension itself, named by id
    s = store(tmp_path)
    ext = [h.fact.id for h in recall(s, "ann", "scarves", at(4))]
    erase_facts(s, "ann", ext, at(5))
    s.close()
    assert b"uokkavelvet" not in _files(tmp_path).lower()


def test_a_hard_delete_of_an_unknown_source_changes_nothing(tmp_path: Path) -> None:
    s = store(tmp_path)
    add(s, "ann", "m1", "Ann likes tea", at(0))
    with pytest.raises(MemstreamError, match="no source 'nope'"):
        erase_source(s, "ann", "nope", at(1))
    with pytest.raises(MemstreamError, match="no fact 1 of 'bob'"):
        erase_facts(s, "bob", [1], at(1))
    assert texts(recall(s, "ann", "tea", at(2))) == ["Ann likes tea"]


# -- writes -----------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh XYZ.", min_size=1, max_size=40).filter(lambda t: t.strip()),
                min_size=1, max_size=5), st.integers(1, 3))
def test_a_retried_write_is_idempotent(facts: list[str], retries: int) -> None:
    s = store()
    changes = [Change("new", NewFact(t)) for t in facts]
    first = apply(s, "ann", Source("msg-1", " / ".join(facts), at(0)), changes)
    counts = [s.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("facts", "sources", "provenance")]
    for _ in range(retries):
        again = apply(s, "ann", Source("msg-1", " / ".join(facts), at(0)), changes)
        assert [a.fact_id for a in again] == [a.fact_id for a in first] and not any(a.written for a in again)
    assert counts == [s.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("facts", "sources",
                                                                                       "provenance")]


def test_a_retried_update_writes_no_second_version() -> None:
    s = store()
    first = add(s, "ann", "m1", "The deadline is Thursday", at(0))
    for _ in range(3):
        add(s, "ann", "m2", "The deadline is Friday", at(1), action="update", target=first)
    assert len(versions(s, first)) == 2


def _writer(path: str, rounds: int) -> None:
    s = FactStore(path, EMBED)
    fid = 1
    for i in range(rounds):
        fid = add(s, "ann", f"m{i + 1}", f"The meeting room is number {i + 1}", at(i + 1), action="update", target=fid)
    s.close()


def test_a_reader_during_writes_sees_before_or_after_never_half(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    s = store(tmp_path)
    add(s, "ann", "m0", "The meeting room is number 0", at(0))
    reader = FactStore(path, EMBED, readonly=True)
    rounds = 60
    writer = multiprocessing.get_context("fork").Process(target=_writer, args=(str(path), rounds))
    writer.start()
    seen = set()
    while writer.is_alive() or not seen:
        current = [h.fact for h in recall(reader, "ann", "meeting room", at(rounds + 1), k=50)]
        assert len(current) == 1, [f.text for f in current]  # one current version, always
        with reader.snapshot() as db:
            latest = db.execute("SELECT COUNT(*) FROM facts WHERE is_latest=1").fetchone()[0]
            edges = db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
            total = db.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
        assert latest == 1 and edges == total - 1
        seen.add(current[0].text)
    writer.join()
    assert writer.exitcode == 0
    assert texts(recall(reader, "ann", "meeting room", at(rounds + 1))) == [f"The meeting room is number {rounds}"]
    reader.close()
    s.close()


# -- scope -------------------------------------------------------------------------------------------


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["bob", "Zoë", "Ann", "team-7"]), st.integers(40, 80))
def test_another_owners_facts_never_appear(other: str, crowd: int) -> None:
    s = store()
    mine = add(s, "ann", "a1", "Ann once mentioned the budget in passing", at(0))
    for i in range(crowd):  # facts that would rank above Ann's for the query, were scope applied after ranking
        add(s, other, f"o{i}", f"The quarterly budget review for budget item {i} is due", at(0))
    apply(s, "ann", Source("x", "same name, other tenant", at(0)),
          [Change("new", NewFact("The quarterly budget review is due"))], tenant="acme")
    for view in ("current", "history", "as-of"):
        hits = recall(s, "ann", "quarterly budget review due", at(1), k=10, view=view,
                      policy=ReadPolicy(candidates=20))
        assert [h.fact.id for h in hits] == [mine]
        assert all(h.fact.owner == "ann" and h.fact.tenant == "" for h in hits)
    assert texts(recall(s, "ann", "budget", at(1), tenant="acme")) == ["The quarterly budget review is due"]


# -- files -------------------------------------------------------------------------------------------


def test_files_are_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(MemstreamError, match="no facts file"):
        FactStore(tmp_path / "none.db", EMBED, create=False)
    with closing(sqlite3.connect(tmp_path / "other.db")) as db:
        db.execute("CREATE TABLE x(y)")
    with pytest.raises(MemstreamError, match="not a memstream facts file"):
        FactStore(tmp_path / "other.db", EMBED)
    s = store(tmp_path)
    add(s, "ann", "m1", "Ann likes tea", at(0))
    s.close()
    with pytest.raises(MemstreamError, match="hash-32 embedder|hash-64 embedder"):
        FactStore(tmp_path / "facts.db", HashEmbedder(32))
    ro = FactStore(tmp_path / "facts.db", EMBED, readonly=True)
    with pytest.raises(MemstreamError, match="read-only"):
        add(ro, "ann", "m2", "Ann likes coffee", at(1))
    assert check_facts_file(tmp_path / "other.db")[0].startswith("not a memstream facts file")


@pytest.mark.parametrize("bad", [dict(text=""), dict(text="x", kind="rumour"), dict(text="x", salience=2.0),
                                 dict(text="x\x00y"), dict(text="x", expires_at=datetime(2026, 1, 1))])
def test_a_bad_fact_is_refused_in_one_line(bad: dict) -> None:
    with pytest.raises(MemstreamError) as e:
        NewFact(**bad)
    assert "\n" not in str(e.value)


def test_check_finds_an_index_out_of_step_and_an_edge_to_nowhere(tmp_path: Path) -> None:
    s = store(tmp_path)
    add(s, "ann", "m1", "Ann likes tea", at(0))
    s.close()
    with closing(sqlite3.connect(tmp_path / "facts.db")) as db:
        db.execute("DROP TRIGGER facts_fts_delete")
        db.execute("INSERT INTO edges VALUES (1, 'EXTENDS', 99)")
        db.execute("DELETE FROM facts WHERE id = 1")
        db.commit()
    problems = check_facts_file(tmp_path / "facts.db")
    assert any("FTS index" in p for p in problems) and any("edges name facts" in p for p in problems)
    assert any("trigger facts_fts_delete is missing" in p for p in problems)


@pytest.mark.slow
def test_a_hard_delete_says_when_a_reader_keeps_the_wal_from_emptying(tmp_path: Path) -> None:
    s = store(tmp_path)
    add(s, "ann", "m1", "Ann's passport number is Zebraquill 77", at(0))
    with closing(sqlite3.connect(tmp_path / "facts.db", isolation_level=None)) as reader:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM facts").fetchone()  # an old snapshot held open
        erased = erase_source(s, "ann", "m1", at(1))
        assert not erased.wal_clean
        reader.execute("COMMIT")
    from memstream.facts import purge_file

    assert purge_file(s)
    s.close()
    assert b"ebraquill" not in _files(tmp_path).lower()


def test_erase_owner_leaves_nothing_of_them_and_everything_of_the_others(tmp_path: Path) -> None:
    s = store(tmp_path)
    first = add(s, "ann", "m1", "Ann's locker code is Quokkavelvet 1234", at(0), kind="preference",
                entities=("Quokkavelvet",))
    add(s, "ann", "m2", "Ann's locker code is Quokkavelvet 9876", at(1), kind="preference", action="update",
        target=first)
    add(s, "bob", "b1", "Bob likes green tea", at(2), kind="preference")
    bob = (recall(s, "bob", "tea", at(3)), profile(s.db, "", "bob"))
    gone = erase_owner(s, "ann", at(3))
    assert gone >= 4 and recall(s, "ann", "locker code", at(4), view="history") == []
    assert (recall(s, "bob", "tea", at(3)), profile(s.db, "", "bob")) == bob
    assert s.db.execute("SELECT COUNT(*) FROM audit WHERE owner='ann'").fetchone() == (0,)
    s.close()
    assert b"uokkavelvet" not in _files(tmp_path).lower() and b"locker" not in _files(tmp_path)
    assert check_facts_file(tmp_path / "facts.db") == []
