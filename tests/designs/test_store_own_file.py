"""The stream and facts designs in a design store: their memory in files of their own kind beside it.

What the row designs promise holds for them too: a write is there once acknowledged and once only, the
context is the in-memory design's, many processes write one owner, and forgetting an owner leaves no byte of
their text in any file (the store, ``PATH.stream``/``PATH.facts``, their write-ahead logs, the call cache).
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from contextlib import AbstractContextManager, closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.designs import BoundDesign, Context, Entry, MemoryDesign, entry, make_design, open_design
from memstream.designs.store import check, own_file_path
from memstream.errors import MemstreamError
from memstream.models import CachedChatModel, ChatModel, HashEmbedder, OfflineChatModel

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LATER = T0 + timedelta(days=30)
NAMES = ("stream", "facts")
#: Settings the store records (the stream reflects early, so insights are part of what is checked).
SETTINGS: dict[str, dict] = {"stream": {"reflect_threshold": 8}, "facts": {}}
SECRET = "Quetzalcoatlus"
QUESTION = "What does she keep at the lake house?"


def emb() -> HashEmbedder:
    return HashEmbedder(64)


def turns(owner: str, n: int = 6, secret: str = "") -> list[Entry]:
    things = ["kayaks", "oars", "fishing rods", "life vests", "paddles", "tents", "lanterns", "ropes"]
    return [entry(text=f"user: {owner} keeps {i + 2} {things[i % len(things)]} at the lake house"
                  f"{' named ' + secret if secret and i % 2 == 0 else ''}.", at=T0 + timedelta(hours=i), session="s1")
            for i in range(n)]


def bound(name: str, at: Path, chat: ChatModel | None = None, **extra: object) -> AbstractContextManager[BoundDesign]:
    return open_design(name, store=at, embedder=emb(), chat=chat, **{**SETTINGS[name], **extra})


def shown(d: BoundDesign | MemoryDesign, owner: str) -> tuple[str, Context]:
    """A context as text and as the whole value (blocks, lines, provenance)."""
    c = d.context(owner, QUESTION, LATER, 300)
    return c.text, c


@pytest.mark.parametrize("name", NAMES)
def test_write_context_and_reopen_give_what_the_design_in_memory_gives(tmp_path: Path, name: str) -> None:
    memory = make_design(name, embedder=emb(), **SETTINGS[name])
    chat = OfflineChatModel()
    written = memory.write("ana", turns("ana"), chat=chat)
    memory.consolidate("ana", LATER, chat=chat)
    with bound(name, tmp_path / "m.db", chat=OfflineChatModel()) as d:
        assert d.write("ana", turns("ana")) == written
        d.consolidate("ana", LATER)
        during = shown(d, "ana")
    with open_design(name, store=tmp_path / "m.db", embedder=emb()) as d:  # the store's settings
        assert shown(d, "ana") == during == shown(memory, "ana")
        assert [e.text for e in d.export("ana")] == [e.text for e in turns("ana")]
        assert d.owners() == ["ana"]
    assert Path(own_file_path(tmp_path / "m.db", name)).exists()
    assert check(tmp_path / "m.db") == []


@pytest.mark.parametrize("name", NAMES)
def test_export_gives_back_the_entries_and_import_replays_them_into_another_store(tmp_path: Path, name: str) -> None:
    given_ = [*turns("ana", 3), entry(text="user: the shed is blue.", at=T0, source="tool", kind="observation",
                                      session="s9", id="shed-1")]
    with bound(name, tmp_path / "a.db", chat=OfflineChatModel()) as d:
        d.write("ana", given_)
        exported = list(d.export("ana"))
    assert exported == given_
    with bound(name, tmp_path / "b.db", chat=OfflineChatModel()) as d:
        assert d.import_entries("ana", exported) == len(given_)
        assert d.import_entries("ana", exported) == 0
        assert list(d.export("ana")) == given_


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(NAMES), cut=st.integers(0, 5), again=st.lists(st.integers(0, 5), max_size=4))
def test_a_retried_write_is_stored_once(tmp_path_factory: pytest.TempPathFactory, name: str, cut: int,
                                        again: list[int]) -> None:
    path = tmp_path_factory.mktemp("retry") / "m.db"
    batch = turns("ana")
    with bound(name, path, chat=OfflineChatModel()) as d:
        first = d.write("ana", batch[:cut])
        retried = d.write("ana", [batch[i] for i in again] + batch)  # a retry, with some entries twice
        assert retried[len(again):][:cut] == first
        assert retried[:len(again)] == [retried[len(again) + i] for i in again]
        assert len(d.records("ana")) == len(batch) and len(set(d.held.entry_keys("ana").values())) == len(batch)


@pytest.mark.parametrize("name", NAMES)
def test_an_entry_id_written_again_with_other_words_is_stored_once(tmp_path: Path, name: str) -> None:
    with bound(name, tmp_path / "m.db", chat=OfflineChatModel()) as d:
        first = d.write("ana", [entry(text="user: I moved to Lisbon.", at=T0, id="m-1")])
        assert d.write("ana", [entry(text="user: I moved to Lisbon!", at=T0, id="m-1")]) == first
        assert [r.text for r in d.records("ana")] == ["user: I moved to Lisbon."]


def _files(path: Path, cache: Path) -> list[Path]:
    names = [path, Path(own_file_path(path, "stream")), Path(own_file_path(path, "facts")), cache]
    return [Path(f"{p}{end}") for p in names for end in ("", "-wal", "-shm") if Path(f"{p}{end}").exists()]


def _holding(files: list[Path], word: str) -> list[str]:
    return [f.name for f in files if word.lower().encode() in f.read_bytes().lower()]


#: Every row of a design's own file that is not the owner's ``?1`` (what forget must leave byte for byte).
OTHERS = {
    "stream": ["SELECT * FROM memories WHERE owner != ?1 ORDER BY id",
               "SELECT a.* FROM accesses a JOIN memories m ON m.id = a.memory_id WHERE m.owner != ?1 ORDER BY a.rowid"],
    "facts": ["SELECT * FROM facts WHERE owner != ?1 ORDER BY id", "SELECT * FROM sources WHERE owner != ?1 ORDER BY id",
              "SELECT p.* FROM provenance p JOIN facts f ON f.id = p.fact_id WHERE f.owner != ?1 ORDER BY 1, 2",
              "SELECT e.* FROM entities e JOIN facts f ON f.id = e.fact_id WHERE f.owner != ?1 ORDER BY 1, 2"],
}


def _other_rows(path: Path, name: str, owner: str) -> list[list[tuple]]:
    with sqlite3.connect(own_file_path(path, name)) as db:
        return [db.execute(sql, (owner,)).fetchall() for sql in OTHERS[name]]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_forget_leaves_no_trace_of_the_owner_and_the_others_as_they_were(tmp_path: Path, name: str) -> None:
    path, calls = tmp_path / "m.db", tmp_path / "calls.db"
    cache = CachedChatModel(OfflineChatModel(), calls)
    with bound(name, path, chat=cache) as d:
        for owner in ("ana", "bo", "cy"):
            d.write(owner, turns(owner, secret=SECRET if owner == "ana" else ""))
            d.consolidate(owner, LATER)
        before = {o: shown(d, o) for o in ("bo", "cy")}
        rows = _other_rows(path, name, "ana")
        assert rows[0], "other owners have memories to keep"
        assert _holding(_files(path, calls), SECRET[:11]), "the test's word must be stored before it is forgotten"
        gone = d.forget("ana", calls=cache)
        assert gone > 0 and d.owners() == ["bo", "cy"]
        assert {o: shown(d, o) for o in ("bo", "cy")} == before
        assert d.context("ana", QUESTION, LATER, 300).blocks == []
        assert [(e["design"], e["rows"]) for e in d.held.store.erasures()] == [(name, gone)]
    cache.close()
    assert _holding(_files(path, calls), SECRET[:11]) == []
    assert _holding(_files(path, calls), "ana keeps") == []
    assert _other_rows(path, name, "ana") == rows
    assert check(path) == []
    with bound(name, path) as d:
        assert {o: shown(d, o) for o in ("bo", "cy")} == before


@pytest.mark.parametrize("name", NAMES)
def test_an_owner_forgotten_by_another_connection_is_gone_from_what_this_one_holds(tmp_path: Path, name: str) -> None:
    path = tmp_path / "m.db"
    with bound(name, path, chat=OfflineChatModel()) as a, bound(name, path) as b:
        a.write("ana", turns("ana"))
        a.write("bo", turns("bo"))
        assert shown(b, "ana")[0] and (bo := shown(b, "bo"))  # b holds both (the stream: in its indexes)
        a.forget("ana")
        assert b.context("ana", QUESTION, LATER, 300).blocks == [] and b.owners() == ["bo"]
        assert shown(b, "bo") == bo
        a.write("ana", turns("ana", 1))  # written again after forgetting: new ids, nothing of before
        assert [r.text for r in b.records("ana")] == [turns("ana", 1)[0].text]


@pytest.mark.parametrize("name", NAMES)
def test_another_connection_writes_on_once_the_owner_with_the_newest_memory_is_forgotten(tmp_path: Path,
                                                                                      name: str) -> None:
    """The stream once handed out the forgotten memory's id again in every other process (which then saw each
    of its writes conflict, for good, and failed on an assertion)."""
    path = tmp_path / "m.db"
    with bound(name, path, chat=OfflineChatModel()) as a, bound(name, path, chat=OfflineChatModel()) as b:
        b.write("ana", turns("ana", 2))
        a.write("bo", turns("bo", 2))  # the newest memory is bo's
        a.forget("bo")
        made = turns("ana", 4)[2:]
        assert all(isinstance(i, int) for i in b.write("ana", made))
        assert [r.text for r in a.records("ana")] == [e.text for e in turns("ana", 4)]


@pytest.mark.parametrize("name", NAMES)
def test_a_forget_here_does_not_hide_one_made_by_another_connection_meanwhile(tmp_path: Path, name: str) -> None:
    """The stream took the erasure count after its own forget as seen, so a forget another process had made
    just before was never noticed here: this connection went on serving the forgotten owner's memories."""
    path = tmp_path / "m.db"
    with bound(name, path, chat=OfflineChatModel()) as a, bound(name, path, chat=OfflineChatModel()) as b:
        a.write("ana", turns("ana", 3))
        a.write("bo", turns("bo", 3))
        assert shown(a, "ana")[0]
        b.forget("ana")
        a.forget("bo")
        assert a.context("ana", QUESTION, LATER, 300).blocks == [] and a.records("ana") == []


def test_a_stream_whose_newest_memory_is_damaged_still_writes_its_other_owners(tmp_path: Path) -> None:
    """The damaged row is skipped yet its id is taken: the stream handed it out again, so every write of any
    owner conflicted for good. Now only the damaged owner is refused, in one line."""
    path = tmp_path / "m.db"
    with bound("stream", path, chat=OfflineChatModel()) as memory:
        memory.write("ana", turns("ana", 2))
        memory.write("bo", turns("bo", 2))
    with closing(sqlite3.connect(own_file_path(path, "stream"), isolation_level=None)) as db:
        db.execute("DROP TRIGGER memories_append_only_update")
        db.execute("UPDATE memories SET created_at='2026-02-30T09:00:00+00:00' WHERE id=(SELECT MAX(id) FROM memories)")
    assert any("creation time" in p for p in check(path))
    with bound("stream", path, chat=OfflineChatModel()) as memory:
        assert all(isinstance(i, int) for i in memory.write("ana", turns("ana", 3)[2:]))
        with pytest.raises(MemstreamError, match="'bo' is damaged.*memory check"):
            memory.write("bo", turns("bo", 3)[2:])
    with bound("stream", path) as memory:
        assert len(memory.records("ana")) == 3


@pytest.mark.parametrize("name", NAMES)
def test_scopes_keep_one_owners_memories_apart(tmp_path: Path, name: str) -> None:
    path = tmp_path / "m.db"
    with bound(name, path, chat=OfflineChatModel(), scope="acme") as a, \
            bound(name, path, chat=OfflineChatModel(), scope="globex") as g:
        a.write("ana", turns("ana", 2))
        g.write("ana", turns("Ann", 3))
        assert [r.text for r in a.records("ana")] == [e.text for e in turns("ana", 2)]
        assert [r.text for r in g.records("ana")] == [e.text for e in turns("Ann", 3)]
        assert a.owners() == g.owners() == ["ana"]
        a.forget("ana")
        assert a.owners() == [] and len(g.records("ana")) == 3
    with bound(name, path) as unscoped:
        assert unscoped.owners() == []


def test_a_path_or_tenant_for_facts_in_a_store_is_refused_in_one_line(tmp_path: Path) -> None:
    for setting in ({"path": str(tmp_path / "mine.facts")}, {"tenant": "acme"}):
        with pytest.raises(MemstreamError, match="is the store's") as e, bound("facts", tmp_path / "m.db", **setting):
            pass
        assert "\n" not in str(e.value)
    assert not (tmp_path / "mine.facts").exists() and not (tmp_path / "m.db").exists()


def test_a_stream_scope_or_owner_holding_the_scope_mark_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemstreamError, match="cannot hold"), bound("stream", tmp_path / "m.db", scope="a␟b"):
        pass
    with bound("stream", tmp_path / "m.db", chat=OfflineChatModel()) as d, pytest.raises(MemstreamError,
                                                                                         match="cannot hold"):
        d.write("a␟b", turns("ana", 1))


@given(scope=st.text(st.characters(categories=["Cc", "Cf", "Cs", "Co"]), min_size=1, max_size=4))
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_a_scope_with_a_control_invisible_or_surrogate_character_is_refused_before_the_store_opens(
        tmp_path_factory, scope: str) -> None:
    path = tmp_path_factory.mktemp("scope") / "m.db"
    for name in ("full", *NAMES):  # a design on the store's tables and the designs on their own files
        with pytest.raises(MemstreamError, match="a scope is plain text"), \
                open_design(name, store=path, embedder=emb(), scope=f"t{scope}"):
            pass
        assert not path.exists() and not Path(own_file_path(path, name)).exists()


@pytest.mark.parametrize("name", NAMES)
def test_a_read_only_store_reads_and_refuses_writes_changing_no_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / "m.db"
    with bound(name, path, chat=OfflineChatModel()) as d:
        d.write("ana", turns("ana", 2))
        text = shown(d, "ana")[0]
    files = {p: p.read_bytes() for p in (path, Path(own_file_path(path, name)))}  # a reader may add -shm
    with open_design(name, store=path, embedder=emb(), read_only=True, chat=OfflineChatModel()) as d:
        assert shown(d, "ana")[0] == text and d.owners() == ["ana"]
        with pytest.raises(MemstreamError, match="read-only"):
            d.write("ana", turns("bo", 1))
        with pytest.raises(MemstreamError, match="read-only"):
            d.forget("ana")
    assert {p: p.read_bytes() for p in files} == files
    Path(own_file_path(path, name)).unlink()  # a store whose design wrote nothing yet: an empty memory
    with open_design(name, store=path, embedder=emb(), read_only=True) as d:
        assert d.owners() == [] and d.records("ana") == []
    assert not Path(own_file_path(path, name)).exists()


def _writer(name: str, path: str, who: str, n: int) -> None:
    """One process's share: ``n`` entries of its own for ``ana`` in batches of three, and one shared entry."""
    shared = entry(text="user: ana keeps the shared boat key under the mat.", at=T0, id="shared")
    mine = [entry(text=f"user: ana told {who} fact {i} about the lake house.", at=T0 + timedelta(minutes=i))
            for i in range(n)]
    with bound(name, Path(path), chat=OfflineChatModel()) as d:
        for start in range(0, n, 3):
            d.write("ana", mine[start:start + 3] + ([shared] if start == 3 else []))


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_two_processes_writing_one_owner_keep_every_entry_once_in_order(tmp_path: Path, name: str) -> None:
    path, n = tmp_path / "m.db", 15
    with bound(name, path):
        pass  # made once, so the two processes open the same store
    spawn = multiprocessing.get_context("spawn")
    workers = [spawn.Process(target=_writer, args=(name, str(path), who, n)) for who in ("p1", "p2")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    with bound(name, path) as d:
        texts = [e.text for e in d.export("ana")]
    assert len(texts) == len(set(texts)) == 2 * n + 1
    for who in ("p1", "p2"):
        assert [t for t in texts if f"told {who}" in t] == [f"user: ana told {who} fact {i} about the lake house."
                                                              for i in range(n)]
    assert check(path) == []
