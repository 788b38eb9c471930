"""The stream's contract: append-only, owner-scoped, paper-exact retrieval, persisted exactly."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.errors import MemstreamError
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.stream import MemoryStream, Weights, add_rated, new_memory
from tests.helpers import T0, hours


def test_ids_increase_and_fields_round_trip(stream: MemoryStream) -> None:
    a = stream.add("ann", "Ann is painting a portrait", at=T0, importance=4, metadata={"room": "studio"})
    b = stream.add("bob", "Bob is fixing the bike", at=hours(1), importance=3, kind="plan")
    assert (a.id, b.id) == (1, 2)
    got = stream.get("ann", 1)
    assert got.text == a.text and got.metadata == {"room": "studio"} and got.kind == "observation"
    assert got.created_at == T0 and got.last_accessed_at == T0


def test_importance_is_rated_by_the_chat_model_when_missing(stream: MemoryStream, chat: OfflineChatModel) -> None:
    routine = add_rated(stream, chat, "ann", "Ann is brushing her teeth", at=T0)
    big = add_rated(stream, chat, "ann", "Ann got engaged to Bob", at=T0)
    assert routine.importance <= 2 and big.importance >= 8
    assert chat.usage.by_purpose["importance"].calls == 2


def test_the_stream_holds_no_model_and_refuses_an_unrated_memory(stream: MemoryStream) -> None:
    with pytest.raises(MemstreamError, match="importance"):
        stream.extend([new_memory(owner="ann", text="Ann had tea", created_at=T0)])
    with pytest.raises(MemstreamError, match="importance"):
        stream.write(new_memory(owner="ann", text="Ann had tea", created_at=T0))
    assert stream.count() == 0 and not hasattr(stream, "chat")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"text": "  "}, "text is empty"),
        ({"importance": 11}, "importance"),
        ({"importance": 0}, "importance"),
        ({"at": datetime(2023, 2, 13, 8)}, "time zone"),
        ({"kind": "Not A Kind"}, "kind"),
        ({"owner": ""}, "owner"),
    ],
)
def test_bad_memories_are_rejected_with_a_reason(stream: MemoryStream, fields: dict, problem: str) -> None:
    args = {"owner": "ann", "text": "hello", "at": T0, "importance": 3} | fields
    owner, text, at = args.pop("owner"), args.pop("text"), args.pop("at")
    with pytest.raises(MemstreamError, match=problem):
        stream.add(owner, text, at=at, **args)
    assert stream.count() == 0


def test_cites_must_exist_and_share_the_owner(stream: MemoryStream) -> None:
    a = stream.add("ann", "Ann saw a fox", at=T0, importance=3)
    b = stream.add("bob", "Bob saw a fox", at=T0, importance=3)
    r = stream.add("ann", "Ann likes foxes", at=hours(1), importance=5, kind="reflection", cites=[a.id])
    assert r.cites == (a.id,)
    with pytest.raises(MemstreamError, match="does not exist"):
        stream.add("ann", "x", at=T0, importance=3, cites=[99])
    with pytest.raises(MemstreamError, match="another owner"):
        stream.add("ann", "x", at=T0, importance=3, cites=[b.id])


def test_rows_cannot_be_updated_or_deleted(stream: MemoryStream) -> None:
    stream.add("ann", "Ann saw a fox", at=T0, importance=3)
    stream.record_access("ann", [1], hours(1))
    for sql in ("UPDATE memories SET text='y'", "DELETE FROM memories",
                "UPDATE accesses SET accessed_s=0", "DELETE FROM accesses"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            stream.store.db.execute(sql + " WHERE 1")


def test_retrieval_never_crosses_owners(stream: MemoryStream) -> None:
    stream.add("ann", "the secret password is swordfish", at=T0, importance=9)
    stream.add("bob", "Bob had lunch", at=T0, importance=2)
    got = stream.retrieve("bob", "secret password swordfish", now=hours(1), k=10)
    assert [r.memory.owner for r in got] == ["bob"]
    assert stream.retrieve("carol", "anything", now=hours(1)) == []  # no memories yet: nothing, not an error
    with pytest.raises(MemstreamError, match="do not belong"):
        stream.record_access("bob", [1], hours(1))


def test_breakdown_is_the_papers_score(stream: MemoryStream) -> None:
    texts = ["coffee at the cafe", "a quiet walk in the park", "the cafe party tonight"]
    for i, t in enumerate(texts):
        stream.add("ann", t, at=hours(i), importance=[2, 5, 8][i])
    w = Weights(recency=0.5, importance=2.0, relevance=1.5, decay=0.99)
    got = stream.retrieve("ann", "party at the cafe", now=hours(10), k=3, weights=w, touch=False)
    for r in got:
        assert r.raw_recency == pytest.approx(0.99 ** (10 - (r.memory.id - 1)))
        assert r.raw_importance == r.memory.importance
        assert r.score == pytest.approx(0.5 * r.recency + 2 * r.importance + 1.5 * r.relevance)
    assert [r.rank for r in got] == [1, 2, 3]
    assert [r.score for r in got] == sorted((r.score for r in got), reverse=True)
    by_id = {r.memory.id: r for r in got}
    assert by_id[1].importance == 0 and by_id[3].importance == 1 and by_id[2].importance == 0.5
    assert by_id[1].recency == 0 and by_id[3].recency == 1


def test_a_more_recently_accessed_memory_never_has_lower_recency(stream: MemoryStream) -> None:
    # The reference code, as written, gives the least recently accessed memory the top recency.
    for i in range(5):
        stream.add("ann", f"event number {i}", at=hours(i), importance=5)
    stream.record_access("ann", [2], hours(20))
    got = stream.retrieve("ann", "event", now=hours(21), k=5, touch=False)
    by_last = sorted(got, key=lambda r: r.memory.last_accessed_at)
    assert all(a.raw_recency <= b.raw_recency for a, b in zip(by_last, by_last[1:], strict=False))
    assert by_last[-1].memory.id == 2


def test_touch_records_an_access_and_no_touch_does_not(stream: MemoryStream) -> None:
    for i in range(4):
        stream.add("ann", f"memory {i}", at=hours(i), importance=3)
    stream.retrieve("ann", "memory", now=hours(10), k=2, touch=False)
    assert stream.store.access_log("ann") == []
    got = stream.retrieve("ann", "memory", now=hours(10), k=2)
    log = stream.store.access_log("ann")
    assert sorted(mid for mid, _ in log) == sorted(r.memory.id for r in got)
    assert stream.get("ann", got[0].memory.id).last_accessed_at == hours(10)
    # the breakdown shows the state it was scored on, before this access
    assert got[0].memory.last_accessed_at < hours(10)


def test_ties_break_toward_the_newer_memory(stream: MemoryStream) -> None:
    for _ in range(3):
        stream.add("ann", "same text", at=T0, importance=5)
    got = stream.retrieve("ann", "same text", now=T0, k=3, touch=False)
    assert [r.memory.id for r in got] == [3, 2, 1]
    assert all(r.recency == r.importance == r.relevance == 0.5 for r in got)


def test_batched_retrieval_equals_one_by_one(stream: MemoryStream) -> None:
    rng = np.random.default_rng(0)
    words = ["cafe", "party", "park", "stove", "book", "paint", "music", "exam", "lunch", "friend"]
    for i in range(60):
        owner = ["ann", "bob", "cyd"][i % 3]
        stream.add(owner, " ".join(rng.choice(words, 4)), at=hours(i), importance=int(rng.integers(1, 11)))
    requests = [("ann", "party music"), ("bob", "exam lunch"), ("ann", "stove"), ("cyd", "paint")]
    batch = stream.retrieve_many(requests, now=hours(80), k=5, touch=False)
    for (owner, q), got in zip(requests, batch, strict=True):
        single = stream.retrieve(owner, q, now=hours(80), k=5, touch=False)
        assert [r.memory.id for r in got] == [r.memory.id for r in single]
        assert [r.score for r in got] == pytest.approx([r.score for r in single])


def test_reopen_gives_identical_retrieval(tmp_path) -> None:
    path = tmp_path / "s.db"
    rng = np.random.default_rng(1)
    words = ["cafe", "party", "park", "stove", "book", "paint", "music", "exam", "lunch", "friend"]
    with MemoryStream(path, HashEmbedder(64)) as s:
        for i in range(40):
            add_rated(s, OfflineChatModel(), "ann", " ".join(rng.choice(words, 5)), at=hours(i))
        s.retrieve("ann", "party", now=hours(41), k=4)
        before = [r.as_row() for r in s.retrieve("ann", "music exam", now=hours(50), k=8, touch=False)]
    with MemoryStream(path, create=False, embedder=HashEmbedder(64)) as s:
        after = [r.as_row() for r in s.retrieve("ann", "music exam", now=hours(50), k=8, touch=False)]
    assert before == after


def test_reopen_with_another_embedder_is_refused(tmp_path) -> None:
    path = tmp_path / "s.db"
    with MemoryStream(path, HashEmbedder(64)) as s:
        s.add("ann", "hello", at=T0, importance=3)
    with pytest.raises(MemstreamError, match="64-d vectors.*open it with --embedder hash-64"):
        MemoryStream(path, HashEmbedder(32))
    with MemoryStream(path) as s:  # its own embedder by default
        assert s.embedder.name == "hash-64"


def test_not_a_stream_is_refused(tmp_path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(MemstreamError, match="not a memstream stream"):
        MemoryStream(junk, HashEmbedder(8))
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t(x)")
    with pytest.raises(MemstreamError, match="not a memstream stream"):
        MemoryStream(other, HashEmbedder(8))
    with pytest.raises(MemstreamError, match="no stream at"):
        MemoryStream(tmp_path / "missing.db", HashEmbedder(8), create=False)


def test_state_round_trip(stream: MemoryStream) -> None:
    a = stream.add("ann", "Ann saw a fox", at=T0, importance=3)
    stream.add("ann", "Ann likes foxes", at=hours(1), importance=6, kind="reflection", cites=[a.id])
    stream.add("bob", "Bob cooks", at=hours(2), importance=2)
    stream.record_access("ann", [a.id], hours(5))
    copy = MemoryStream(":memory:", HashEmbedder(64))
    copy.set_state(stream.get_state())
    assert copy.get_state() == stream.get_state()
    assert copy.get("ann", a.id).last_accessed_at == hours(5)


def test_approximate_index_agrees_with_exact_on_a_small_stream() -> None:
    emb = HashEmbedder(64)
    exact = MemoryStream(":memory:", emb)
    approx = MemoryStream(":memory:", emb, index="hnsw")
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(200)]
    for s in (exact, approx):
        rng = np.random.default_rng(2)
        for i in range(300):
            s.add("ann", " ".join(rng.choice(words, 6)), at=hours(i), importance=int(rng.integers(1, 11)))
    e = exact.retrieve("ann", "w1 w2 w3", now=hours(400), k=10, touch=False)
    a = approx.retrieve("ann", "w1 w2 w3", now=hours(400), k=10, touch=False)
    overlap = len({r.memory.id for r in e} & {r.memory.id for r in a})
    assert overlap >= 8


def test_a_long_memory_is_found_by_its_best_window(tmp_path) -> None:
    from memstream.models.base import WINDOW_WORDS, windows
    from memstream.stream import Weights

    emb = HashEmbedder(256)
    filler = " ".join(["the weather was mild and the tea was warm"] * 34)  # 306 words
    long_text = filler + " my cat is named Biscuit"
    assert len(windows(long_text)) == -(-len(long_text.split()) // WINDOW_WORDS) == 3
    only_relevance = Weights(recency=0, importance=0, relevance=1)
    query = "what is my cat named"
    expected = float(np.max(emb.embed(windows(long_text)) @ emb.embed([query])[0]))
    whole = float(emb.embed([long_text])[0] @ emb.embed([query])[0])
    assert expected > whole + 0.2  # one vector for all 311 words would drown the fact
    path = tmp_path / "s.db"
    words = [f"w{i}" for i in range(200)]
    for kind in ("flat", "hnsw"):
        with MemoryStream(path if kind == "flat" else ":memory:", emb, index=kind) as s:
            s.add("ann", long_text, at=hours(0), importance=5)
            rng = np.random.default_rng(3)
            for i in range(150):  # enough for HNSW's candidate rounds to matter
                s.add("ann", " ".join(rng.choice(words, 6)), at=hours(i + 1), importance=5)
            top = s.retrieve("ann", query, now=hours(200), k=3, weights=only_relevance, touch=False)
            assert top[0].memory.text == long_text
            assert top[0].raw_relevance == pytest.approx(expected, abs=1e-5)
    with MemoryStream(path, create=False) as s:  # the keys come back from the file
        top = s.retrieve("ann", query, now=hours(200), k=1, weights=only_relevance, touch=False)
        assert top[0].memory.text == long_text and top[0].raw_relevance == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_the_time_weight_lifts_memories_in_the_span_the_query_names(kind: str) -> None:
    s = MemoryStream(":memory:", HashEmbedder(64), index=kind)
    for day in (0, 1, 12):  # the same words on 13, 14 and 25 February; the 25th is the newest
        s.add("ann", "Ann planted tomatoes in the garden", at=hours(24 * day + 10), importance=4)
    now = hours(24 * 29)
    query = "What did Ann plant in the garden on 14 February 2023?"
    assert s.retrieve("ann", query, now=now, k=1, touch=False)[0].memory.created_at == hours(24 * 12 + 10)
    timed = Weights(recency=0, importance=0, relevance=1, time=1)
    top = s.retrieve("ann", query, now=now, k=3, weights=timed, touch=False)
    assert top[0].memory.created_at == hours(24 + 10) and top[0].time == 1.0
    assert [r.time for r in top[1:]] == [0.0, 0.0] and top[0].score == pytest.approx(top[1].score + 1)
    assert top[0].as_row()["time"] == 1.0
    # "three weeks ago" from 14 March: two to four weeks back, plus a week for retelling: 14 Feb to 8 March
    weeks = s.retrieve("ann", "What did Ann plant three weeks ago?", now=now, k=3, weights=timed, touch=False)
    assert [r.time for r in weeks] == [1.0, 1.0, 0.0] and weeks[-1].memory.created_at == hours(10)
    # no span named: the time weight changes nothing
    plain = s.retrieve("ann", "tomatoes in the garden", now=now, k=3, weights=timed, touch=False)
    assert [r.time for r in plain] == [0.0, 0.0, 0.0] and plain[0].memory.created_at == hours(24 * 12 + 10)


def test_a_full_memory_cache_never_drops_a_memory_a_retrieval_needs(monkeypatch) -> None:
    """A 1,000-agent day filled the cache of read memories; trimming it dropped old ones the same
    retrieval had just found in it (a KeyError ten simulated hours in)."""
    from datetime import datetime, timedelta

    from memstream.models import HashEmbedder
    from memstream.stream import MemoryStream
    from memstream.stream import stream as stream_module

    monkeypatch.setattr(stream_module, "MEMORY_CACHE_SIZE", 3)
    t = datetime(2023, 2, 13, 8, tzinfo=UTC)
    s = MemoryStream(":memory:", HashEmbedder(64))
    for i in range(20):
        s.add("ann", f"memory number {i} about the cafe", at=t + timedelta(minutes=i), importance=1 + i % 10)
    for k in (2, 5, 10, 20):  # cached rows first, then more than the cache holds
        assert len(s.retrieve("ann", "cafe", now=t + timedelta(hours=1), k=k)) == k


def test_a_recalled_memory_is_shared_read_only_and_shows_its_own_access() -> None:
    """Retrieval hands out the same memory to every read (cached), so nothing may change it: its
    metadata refuses writes (and still pickles and prints as JSON); a later access makes a new
    memory with the new access time and leaves the one handed out before as it was."""
    import json
    import pickle
    from datetime import datetime, timedelta

    import pytest

    from memstream.models import HashEmbedder
    from memstream.stream import MemoryStream

    t = datetime(2023, 2, 13, 8, tzinfo=UTC)
    s = MemoryStream(":memory:", HashEmbedder(64))
    s.add("ann", "the cafe opens at eight", at=t, importance=3, metadata={"plan": {"day": "2023-02-13"}})
    first = s.retrieve("ann", "cafe", now=t + timedelta(hours=1), touch=False)[0].memory
    again = s.retrieve("ann", "cafe", now=t + timedelta(hours=1), touch=False)[0].memory
    assert again is first and first.last_accessed_at == t
    for change in (lambda m: m.metadata.update(x=1), lambda m: m.metadata.__setitem__("x", 1),
                   lambda m: m.metadata["plan"].pop("day"), lambda m: m.metadata.clear()):
        with pytest.raises(TypeError, match="read-only"):
            change(first)
    assert first.metadata == {"plan": {"day": "2023-02-13"}}
    assert pickle.loads(pickle.dumps(first)) == first and json.loads(json.dumps(first.metadata)) == first.metadata
    touched = s.retrieve("ann", "cafe", now=t + timedelta(hours=2))[0].memory  # accessed at 10:00 now
    later = s.retrieve("ann", "cafe", now=t + timedelta(hours=3), touch=False)[0].memory
    assert later.last_accessed_at == t + timedelta(hours=2) and first.last_accessed_at == t
    assert touched.last_accessed_at == t and later.metadata == first.metadata


def test_lookups_by_many_ids_stay_under_sqlites_limit_on_parameters(tmp_path) -> None:
    """A 1,000-agent day logged accesses to 925,620 memories; reopening its stream asked SQLite for
    all their owners in one statement, over the limit on a statement's parameters ("too many SQL
    variables"). Here the limit is lowered to 100 and 1,000 ids are asked for."""
    import sqlite3
    from datetime import UTC, datetime

    from memstream.models import HashEmbedder
    from memstream.stream import MemoryStream, new_memory

    t = datetime(2023, 2, 13, 8, tzinfo=UTC)
    with MemoryStream(tmp_path / "big.db", HashEmbedder(8)) as s:
        written = s.extend([new_memory(owner=f"a{i % 7}", text=f"m {i}", created_at=t, importance=1)
                            for i in range(1_000)])
        s.store.db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 100)
        ids = [m.id for m in written]
        assert len(s.store.rows(ids)) == 1_000 and len(s.store.owners_of(ids)) == 1_000


@pytest.mark.slow
@given(st.lists(st.tuples(st.sampled_from(["ann", "bob", "cy"]), st.sampled_from(["observation", "dialogue", "thought"]),
                          st.integers(1, 10), st.sampled_from(["none", "trigger", "read"])), min_size=1, max_size=25))
@settings(max_examples=60, deadline=None)
def test_buffered_writes_read_as_if_written_at_once(ops: list[tuple[str, str, int, str]]) -> None:
    """Ids follow the order of writing; the trigger's sums and an owner's last id count what waits in
    the buffer; a read of an owner sees everything written before it."""
    s = MemoryStream(":memory:", HashEmbedder(32))
    kinds = ("observation", "dialogue")
    for i, (owner, kind, importance, check) in enumerate(ops):
        assert s.write(new_memory(owner=owner, text=f"{owner} {kind} {i}", kind=kind, created_at=hours(i),
                                  importance=importance)) == i + 1
        mine = [(n + 1, op) for n, op in enumerate(ops[: i + 1]) if op[0] == owner]
        if check == "trigger":
            assert s.importance_since(owner, kinds, 0) == sum(op[2] for _, op in mine if op[1] in kinds)
            assert s.last_id(owner) == mine[-1][0]
        elif check == "read":
            assert [m.id for m in s.memories(owner)] == [n for n, _ in mine]
    s.flush()
    assert [m.id for o in s.owners() for m in s.memories(o)] != [] and s.count() == len(ops)


def test_a_reader_sees_one_moment_of_a_file_another_process_is_writing(tmp_path) -> None:
    """A memory and an access to it committed between the reader's two catch-up queries: the reader
    sees neither until its next look (it once indexed the access before the memory, an IndexError)."""
    path = tmp_path / "s.db"
    writer = MemoryStream(path, HashEmbedder(64))
    writer.add("alice", "one", at=T0, importance=3)
    reader = MemoryStream(path, HashEmbedder(64), readonly=True)
    accesses_after = reader.store.accesses_after

    def racing(rowid: int):
        m = writer.add("alice", "two", at=T0, importance=3)
        writer.record_access("alice", [m.id], hours(1))
        return accesses_after(rowid)

    reader.store.accesses_after = racing
    writer.add("alice", "zero", at=T0, importance=3)
    assert reader.count("alice") == 2  # one and zero: the moment the reader looked
    reader.store.accesses_after = accesses_after
    assert [m.text for m in reader.memories("alice")] == ["one", "zero", "two"]


def test_a_buffered_write_that_could_not_be_written_later_is_refused_at_once(tmp_path) -> None:
    s = MemoryStream(tmp_path / "s.db", HashEmbedder(32))
    first = s.write(new_memory(owner="alice", text="a1", created_at=T0, importance=3))
    with pytest.raises(MemstreamError, match="not an earlier memory of its own"):
        s.write(new_memory(owner="bob", text="b1", created_at=T0, importance=3, cites=(first,)))
    s.close()
    with MemoryStream(tmp_path / "s.db", HashEmbedder(32)) as again:  # alice's memory was kept
        assert [m.text for m in again.memories("alice")] == ["a1"] and not again.has("bob")
        readonly = MemoryStream(tmp_path / "s.db", HashEmbedder(32), readonly=True)
        with pytest.raises(MemstreamError, match="read-only"):
            readonly.write(new_memory(owner="carol", text="c1", created_at=T0, importance=3))
        with pytest.raises(MemstreamError, match="read-only"):
            readonly.mark_reflected("alice", 1)
        assert not readonly.has("carol") and readonly.reflected_through("alice") == 0


def test_a_failed_flush_of_a_full_buffer_is_not_doubled_by_a_retry(tmp_path, monkeypatch) -> None:
    import memstream.stream.stream as stream_module

    monkeypatch.setattr(stream_module, "WRITE_BUFFER_MAX", 2)
    emb = HashEmbedder(32)
    s = MemoryStream(tmp_path / "s.db", emb)
    s.write(new_memory(owner="ann", text="a1", created_at=T0, importance=3))
    s.write(new_memory(owner="ann", text="a2", created_at=T0, importance=3))
    real = emb.embed
    monkeypatch.setattr(emb, "embed", lambda texts: (_ for _ in ()).throw(MemstreamError("embedding server down")))
    with pytest.raises(MemstreamError, match="server down"):
        s.write(new_memory(owner="ann", text="a3", created_at=T0, importance=3))
    monkeypatch.setattr(emb, "embed", real)
    assert s.write(new_memory(owner="ann", text="a3", created_at=T0, importance=3)) == 3  # the retry
    assert [m.text for m in s.memories("ann")] == ["a1", "a2", "a3"]


def test_an_owner_with_no_memories_yet_retrieves_nothing(stream: MemoryStream) -> None:
    """An agent loop's first turn needs no special case: retrieval is empty, as the designs' context is."""
    assert stream.retrieve("ann", "anything", now=T0) == []  # an empty stream
    stream.add("bob", "Bob had lunch", at=T0, importance=2)
    got = stream.retrieve_many([("ann", "lunch"), ("bob", "lunch")], now=hours(1), k=3)
    assert got[0] == [] and [r.memory.owner for r in got[1]] == ["bob"]
    assert stream.search("ann", stream.embedder.embed(["lunch"]), now=hours(1)) == [[]]
    assert stream.count() == 1 and not stream.has("ann")  # nothing was written for ann, no access either
    with pytest.raises(MemstreamError, match="unknown owner 'ann'"):
        stream.require_owner("ann")  # for a caller that expects the owner to exist (the CLI's --agent)
    with pytest.raises(MemstreamError, match="unknown owner 'ann'"):
        stream.memories("ann")  # reads of an owner's own memories still name the problem


@pytest.mark.parametrize("name", ["", "   ", "ann\x00", "a\nb"])
def test_a_bad_owner_name_is_still_one_clear_error(stream: MemoryStream, name: str) -> None:
    with pytest.raises(MemstreamError):
        stream.retrieve(name, "anything", now=T0)
    with pytest.raises(MemstreamError):
        stream.retrieve_many([("ann", "x"), (name, "anything")], now=T0)


def test_a_naive_now_is_still_refused_for_an_owner_with_no_memories(stream: MemoryStream) -> None:
    with pytest.raises(MemstreamError, match="now"):
        stream.retrieve("ann", "anything", now=T0.replace(tzinfo=None))
