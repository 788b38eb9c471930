"""`memstream memory`: every subcommand end to end over a design store; every mistake one line, exit 2, nothing
written (the store's bytes unchanged); generated options never end in a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memstream.sqlite
from memstream.cli import main
from memstream.designs import DESIGNS as ALL_DESIGNS
from memstream.designs import MemoryDesign, entry, make_design, open_design, save_state
from memstream.models import HashEmbedder, make_chat_model

#: The designs that keep their memory as rows today (the others join as they do).
DESIGNS = ("full", "vector", "buffer-summary")
HASH = ["--embedder", "hash:64"]
AT = "2026-05-01T09:00:00+00:00"
#: buffer-summary with a small window, so a few entries already summarise.
SMALL = {"buffer-summary": ["--design-config", "turns=2,batch=2"]}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv: str) -> str:
    """The one error line of a refused command (exit 2)."""
    code, out, err = run(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert err.count("\n") == 1 and err.startswith("memstream: error: ") and "Traceback" not in err, err
    return err


def files(folder: Path) -> dict[str, bytes]:
    """Every file's bytes (SQLite's shared-memory index and an empty write-ahead log aside: they hold no data)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.endswith("-shm") and not (p.name.endswith("-wal") and not p.stat().st_size)}


def jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def said(n: int, start: int = 0) -> list[dict]:
    base = datetime(2026, 5, 1, 9, tzinfo=UTC)
    return [{"text": f"Note {i}: Ann walked to the harbour with parcel {i}", "at": (base + timedelta(hours=i)).isoformat()}
            for i in range(start, start + n)]


def where(store: Path, design: str, *rest: str) -> list[str]:
    return ["--store", str(store), "--design", design, *rest, *(HASH if design == "vector" else [])]


@pytest.mark.parametrize("design", DESIGNS)
def test_remember_context_consolidate_owners_export_check(capsys, tmp_path: Path, design: str) -> None:
    store = tmp_path / "memory.db"
    code, out, err = run(capsys, "memory", "remember", *where(store, design, "--agent", "ann"), *SMALL.get(design, []),
                         "I moved to Lisbon in May", "--at", AT, "--json")
    assert code == 0, err
    first = json.loads(out)
    assert first["new"] == first["ids"] and len(first["ids"]) == 1
    code, out, err = run(capsys, "memory", "remember", *where(store, design, "--agent", "ann"), "--file",
                         jsonl(tmp_path / "e.jsonl", said(5)))
    assert code == 0 and out.startswith("remembered 5 new entries for ann"), (out, err)
    code, out, _ = run(capsys, "memory", "remember", *where(store, design, "--agent", "ann"), "I moved to Lisbon in May",
                       "--at", AT)  # written again: stored once
    assert code == 0 and "0 new" in out and "1 already there" in out and f"record {first['ids'][0]}" in out
    assert run(capsys, "memory", "consolidate", *where(store, design, "--agent", "ann"), "--at", AT)[0] == 0
    code, out, _ = run(capsys, "memory", "context", *where(store, design, "--agent", "ann"), "where does Ann live?",
                       "--at", "2026-06-01T00:00:00+00:00", "--budget", "400", "--json")
    context = json.loads(out)
    assert code == 0 and context["blocks"] and context["tokens"] <= 400
    assert all({"tier", "text", "tokens", "ids"} <= set(b) for b in context["blocks"])
    assert first["ids"][0] in {i for b in context["blocks"] for i in b["ids"]} or context["cut"]
    code, out, _ = run(capsys, "memory", "context", *where(store, design, "--agent", "ann"), "Lisbon", "--at", AT)
    assert code == 0 and "(records " in out and "tokens" in out.splitlines()[-1]
    assert json.loads(run(capsys, "memory", "owners", "--store", str(store), "--json")[1]) == {design: ["ann"]}
    code, out, _ = run(capsys, "memory", "export", *where(store, design, "--agent", "ann"))
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 6 and lines[0]["text"] == "I moved to Lisbon in May"
    assert run(capsys, "memory", "check", "--store", str(store), *HASH)[1] == f"{store}: ok\n"


def test_export_then_import_into_another_design(capsys, tmp_path: Path) -> None:
    store, other = tmp_path / "a.db", tmp_path / "b.db"
    run(capsys, "memory", "remember", *where(store, "full", "--agent", "ann"), "--file", jsonl(tmp_path / "e.jsonl",
                                                                                            said(4)))
    run(capsys, "memory", "remember", *where(store, "full", "--agent", "ann"), "Keep the receipts", "--id", "r-1",
        "--at", AT, "--source", "assistant", "--kind", "observation", "--session", "s2")
    exported = tmp_path / "ann.jsonl"
    code, out, _ = run(capsys, "memory", "export", *where(store, "full", "--agent", "ann"), "-o", str(exported))
    assert code == 0 and out == f"wrote 5 entries of ann to {exported}\n"
    for target, design in ((other, "vector"), (store, "buffer-summary"), (other, "full")):
        code, out, _ = run(capsys, "memory", "import", *where(target, design, "--agent", "ann"), str(exported))
        assert code == 0 and out.startswith("imported 5 entries"), out
        again = run(capsys, "memory", "export", *where(target, design, "--agent", "ann"))[1]
        assert again == exported.read_text(encoding="utf-8")  # the same entries, ids and sessions kept
    code, out, _ = run(capsys, "memory", "import", *where(other, "vector", "--agent", "ann"), str(exported))
    assert code == 0 and "imported 0 entries" in out and "5 were already there" in out


def _state_files(tmp_path: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """A state file per design (two owners each), written by save_state, and each design's contexts."""
    chat = make_chat_model("offline")
    paths, contexts = {}, {}
    for name, config in (("full", {}), ("buffer-summary", {"turns": 2, "batch": 2})):
        design = make_design(name, **config)
        for owner in ("ann", "bob"):
            design.write(owner, [entry(**e) for e in said(5, 10 if owner == "bob" else 0)], chat=chat)
            design.consolidate(owner, datetime(2026, 6, 1, tzinfo=UTC), chat=chat)
        paths[name] = save_state(design, tmp_path / f"{name}.json")
        contexts[name] = design.context("ann", "harbour", datetime(2026, 6, 1, tzinfo=UTC), 300).text
    return paths, contexts


def test_import_state_files_of_two_designs(capsys, tmp_path: Path) -> None:
    paths, contexts = _state_files(tmp_path)
    store = tmp_path / "memory.db"
    for name, path in paths.items():
        code, out, err = run(capsys, "memory", "import", "--store", str(store), "--state", str(path))
        assert code == 0 and out.startswith(f"imported 2 owner(s) of {name}") and "as the file held them" in out, err
        with open_design(name, store=store, read_only=True) as memory:
            assert memory.owners() == ["ann", "bob"]
            assert memory.context("ann", "harbour", datetime(2026, 6, 1, tzinfo=UTC), 300).text == contexts[name]
    assert run(capsys, "memory", "check", "--store", str(store))[0] == 0
    before = files(tmp_path)
    err = refused(capsys, "memory", "import", "--store", str(store), "--state", str(paths["full"]))
    assert "--replay" in err and files(tmp_path) == before  # its ids are taken: nothing written
    code, out, _ = run(capsys, "memory", "import", "--store", str(store), "--state", str(paths["full"]), "--replay")
    assert code == 0 and "10 record(s), their entries written again" in out  # each entry once, not twice
    assert "buffer-summary" in refused(capsys, "memory", "import", "--store", str(store), "--state",
                                       str(paths["buffer-summary"]), "--design", "full")


def test_forget_asks_first_and_leaves_no_trace(capsys, tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "memory.db"
    for owner, text in (("ann", "Ann's locker code is 7351"), ("bob", "Bob likes chess")):
        run(capsys, "memory", "remember", *where(store, "full", "--agent", owner), text, "--at", AT)
    bob = run(capsys, "memory", "context", *where(store, "full", "--agent", "bob"), "chess", "--at", AT)[1]
    before = files(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert "--yes" in refused(capsys, "memory", "forget", *where(store, "full", "--agent", "ann"))
    assert files(tmp_path) == before

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr("builtins.input", lambda question: "n")
    assert run(capsys, "memory", "forget", *where(store, "full", "--agent", "ann"))[:2] == (1, "nothing was forgotten\n")
    assert files(tmp_path) == before
    monkeypatch.setattr("builtins.input", lambda question: "yes")
    code, out, _ = run(capsys, "memory", "forget", *where(store, "full", "--agent", "ann"))
    assert code == 0 and out.startswith("forgot ann in full")
    assert b"7351" not in b"".join(files(tmp_path).values())
    assert run(capsys, "memory", "context", *where(store, "full", "--agent", "bob"), "chess", "--at", AT)[1] == bob
    assert "nothing to forget" in refused(capsys, "memory", "forget", *where(store, "full", "--agent", "ann"), "--yes")


@pytest.mark.parametrize("design", ["full", "vector", "recent"])
def test_update_and_delete_one_record(capsys, tmp_path: Path, design: str) -> None:
    store = tmp_path / "memory.db"
    for text in ("Ann's locker code is 7351", "Ann lives in Lisbon", "Ann likes tea"):
        assert run(capsys, "memory", "remember", *where(store, design, "--agent", "ann"), text, "--at", AT)[0] == 0
    code, out, err = run(capsys, "memory", "update", *where(store, design, "--agent", "ann"), "--record", "2",
                         "Ann lives in Porto", "--json")
    assert code == 0 and json.loads(out)["id"] == 2 and json.loads(out)["text"] == "Ann lives in Porto", err
    code, out, err = run(capsys, "memory", "delete", *where(store, design, "--agent", "ann"), "--record", "1", "--yes")
    assert code == 0 and out.startswith("deleted record 1 of ann"), err
    exported = [json.loads(line)["text"] for line in run(capsys, "memory", "export",
                                                          *where(store, design, "--agent", "ann"))[1].splitlines()]
    assert exported == ["Ann lives in Porto", "Ann likes tea"]
    context = run(capsys, "memory", "context", *where(store, design, "--agent", "ann"), "where does Ann live?", "--at",
                  AT, "--json")[1]
    assert "Porto" in context and "Lisbon" not in context and "7351" not in context
    assert b"7351" not in b"".join(files(tmp_path).values())  # the deleted text is gone from the file itself
    assert run(capsys, "memory", "check", "--store", str(store), *HASH)[1] == f"{store}: ok\n"
    assert "no record 1" in refused(capsys, "memory", "delete", *where(store, design, "--agent", "ann"), "--record",
                                    "1", "--yes")


def test_a_design_that_builds_on_its_records_refuses_update_and_delete_in_one_line(capsys, tmp_path: Path,
                                                                                   monkeypatch) -> None:
    store = tmp_path / "memory.db"
    run(capsys, "memory", "remember", *where(store, "buffer-summary", "--agent", "ann"), "Ann likes tea", "--at", AT)
    run(capsys, "memory", "remember", *where(store, "full", "--agent", "ann"), "Ann likes tea", "--at", AT)
    before = files(tmp_path)
    for verb, rest in (("update", ["Ann likes coffee"]), ("delete", ["--yes"])):
        err = refused(capsys, "memory", verb, *where(store, "buffer-summary", "--agent", "ann"), "--record", "1", *rest)
        assert "running summary" in err and "forget the owner" in err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    for argv in (["update", *where(store, "full", "--agent", "ann"), "--record", "9", "x"],
                 ["update", *where(store, "full", "--agent", "ann"), "--record", "1", " "],
                 ["update", *where(store, "full", "--agent", "ann"), "--record", "1", "a\x00b"],
                 ["update", *where(store, "full", "--agent", "bob"), "--record", "1", "x"],
                 ["delete", *where(store, "full", "--agent", "ann"), "--record", "0", "--yes"],
                 ["delete", *where(store, "full", "--agent", "ann"), "--record", "1"],  # no terminal to ask, no --yes
                 ["delete", *where(store, "vector", "--agent", "ann"), "--record", "1", "--yes"]):
        refused(capsys, "memory", *argv)
        assert files(tmp_path) == before, argv


def test_check_lists_the_problems_of_a_damaged_store(capsys, tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    run(capsys, "memory", "remember", *where(store, "full", "--agent", "ann"), "hello there", "--at", AT)
    with closing(sqlite3.connect(store)) as db:
        db.execute("UPDATE design_records SET at='not a time'")
        db.commit()
    code, out, _ = run(capsys, "memory", "check", "--store", str(store))
    assert code == 1 and "is not a time" in out


def test_a_read_only_store_is_read_not_written(capsys, tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "memory.db"
    run(capsys, "memory", "remember", *where(store, "full", "--agent", "ann"), "hello there", "--at", AT)
    before = files(tmp_path)
    real = os.access
    monkeypatch.setattr(memstream.sqlite.os, "access", lambda p, mode: mode != os.W_OK and real(p, mode))
    assert "cannot write" in refused(capsys, "memory", "remember", *where(store, "full", "--agent", "ann"), "more",
                                     "--at", AT)
    assert "hello there" in run(capsys, "memory", "context", *where(store, "full", "--agent", "ann"), "hi")[1]
    assert run(capsys, "memory", "check", "--store", str(store))[0] == 0
    monkeypatch.setenv("MEMSTREAM_READ_IMMUTABLE", "1")  # media SQLite cannot tell are read-only
    assert "hello there" in run(capsys, "memory", "export", *where(store, "full", "--agent", "ann"))[1]
    assert files(tmp_path) == before


def _bad_inputs(tmp_path: Path, store: Path) -> list[list[str]]:
    (tmp_path / "notes.txt").write_text("just text\n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    stream = tmp_path / "stream.db"
    run_main("add", str(stream), "--agent", "ann", "--text", "hi", "--importance", "3", *HASH)
    newer = tmp_path / "newer.db"
    with open_design("full", store=newer) as memory:
        memory.write("ann", [entry(text="hi", at=datetime(2026, 5, 1, tzinfo=UTC))])
    with closing(sqlite3.connect(newer)) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        db.commit()
    bad = {2: '{"text": "no time"}', 3: "[1, 2]", 4: "{nope", 5: '{"text": "x", "at": "2026-05-01T09:00:00+00:00", '
           '"owner": "bob"}', 6: '{"text": "", "at": "2026-05-01T09:00:00+00:00"}'}
    good = json.dumps(said(1)[0])
    lines = {n: jsonl(tmp_path / f"bad{n}.jsonl", []) for n in bad}
    for n, line in bad.items():
        Path(lines[n]).write_text("\n".join([good] * (n - 1) + [line]) + "\n", encoding="utf-8")
    remember = ["memory", "remember", *where(store, "full", "--agent", "ann")]
    context = ["memory", "context", *where(store, "full", "--agent", "ann"), "q"]
    cases = [["memory", verb, "--store", str(tmp_path / name), "--design", "full", "--agent", "ann", *rest]
             for name in ("notes.txt", "folder", "stream.db", "newer.db")
             for verb, rest in (("remember", ["hi"]), ("context", ["q"]), ("export", []), ("forget", ["--yes"]))]
    cases += [["memory", "check", "--store", str(tmp_path / name)] for name in ("notes.txt", "folder", "stream.db",
                                                                                "newer.db", "missing.db")]
    cases += [[*remember, "--file", lines[n]] for n in bad]
    cases += [
        ["memory", "context", *where(store, "buffer-summary", "--agent", "ann"), "q"],  # a design it does not hold
        ["memory", "export", *where(store, "vector", "--agent", "ann")],
        ["memory", "consolidate", *where(store, "buffer-summary", "--agent", "ann")],
        ["memory", "consolidate", *where(store, "full", "--agent", "nobody")],
        ["memory", "owners", "--store", str(store), "--design", "vector"],
        ["memory", "context", *where(tmp_path / "missing.db", "full", "--agent", "ann"), "q"],
        [*remember, "hi", "--design-config", "window_tokens=500"],  # other settings than the store's
        [*remember, "hi", "--design-config", "no_such=1"], [*remember, "hi", "--design-config", "window_tokens"],
        [*remember, "hi", "--design-config", "window_tokens=-5", "--reconfigure"],
        ["memory", "remember", *where(store, "no-such-design", "--agent", "ann"), "hi"],
        ["memory", "remember", "--store", str(store), "--design", "full", "--agent", "", "hi"],
        ["memory", "remember", "--store", str(store), "--design", "full", "--agent", "a\x1b[2Jb", "hi"],
        [*remember, "hi", "--at", "yesterday"], [*remember, "hi", "--at", "2026-05-01T09:00:00"],
        [*remember, "hi", "--scope", "x\x00y"], [*remember, "   "], [*remember], [*remember, "hi", "--file", lines[2]],
        [*remember, "--file", lines[2], "--id", "x"], [*remember, "--file", str(tmp_path / "missing.jsonl")],
        [*context, "--budget", "0"], [*context, "--budget", "-3"], [*context, "--budget", str(10**30)],
        [*context, "--budget", "１０"], [*context, "--at", "13 May"],
        ["memory", "export", *where(store, "full", "--agent", "ann"), "-o", str(store)],
        ["memory", "export", *where(store, "full", "--agent", "ann"), "-o", str(tmp_path / "out.txt")],
        ["memory", "export", *where(store, "full", "--agent", "nobody")],
        ["memory", "import", *where(store, "full", "--agent", "ann")],
        ["memory", "import", "--store", str(store), "--state", str(tmp_path / "notes.txt")],
        ["memory", "import", "--store", str(store), "--state", lines[2], "--agent", "ann"],
    ]
    unkept = [n for n, kind in ALL_DESIGNS.items()
              if not kind.keeps_own_file and kind.owner_rows is MemoryDesign.owner_rows]
    cases += [["memory", "remember", *where(target, name, "--agent", "ann"), "hi"]  # none soon
              for name in unkept[:1] for target in (store, tmp_path / "new.db")]
    cases += [["memory", "remember", *where(tmp_path / "new.db", "full", "--agent", "ann"), *rest]  # no store made
              for rest in (["hi", "--at", "soon"], ["--file", lines[4]], ["hi", "--design-config", "no_such=1"])]
    return cases


def run_main(*argv: str) -> int:
    return main(list(argv))


def test_every_bad_input_is_one_line_and_writes_nothing(capsys, tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    run(capsys, "memory", "remember", *where(store, "full", "--agent", "ann"), "hello there", "--at", AT)
    cases = _bad_inputs(tmp_path, store)
    capsys.readouterr()
    before = files(tmp_path)
    for argv in cases:
        refused(capsys, *argv)
        assert files(tmp_path) == before, argv


TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
#: Any text at all, lone surrogates included (as undecodable bytes in argv arrive, or JSON's \\ud800 escapes).
ANY = st.text(max_size=8)
OPTION = st.one_of(TEXT, ANY, st.integers(-10**12, 10**12).map(str),
                   st.sampled_from(["", " ", "\x00", "\x1b[2J", "\u202e", "\udcff"]))


def mostly(good: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A good value three times in four, else anything: most cases reach the store, the rest are refused."""
    return st.integers(0, 3).flatmap(lambda i: good if i else OPTION)


LINE = st.dictionaries(st.sampled_from(["text", "at", "source", "kind", "session", "id", "owner"]),
                       st.one_of(ANY, st.integers(), st.just(AT), st.none()))


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("MEMSTREAM_FUZZ_CASES", "60")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(agent=mostly(st.sampled_from(["ann", "bob", " ann "])), at=mostly(st.just(AT)), budget=mostly(st.just("300")),
       design=mostly(st.sampled_from(DESIGNS)), scope=mostly(st.just("")), text=mostly(st.just("Ann likes tea")),
       source=mostly(st.just("user")), session=mostly(st.just("s1")),
       lines=st.lists(st.one_of(st.just({"text": "Ann likes tea", "at": AT}), LINE, TEXT.map(json.dumps), TEXT),
                      max_size=3),
       verb=st.sampled_from(["remember", "remember-file", "context", "export", "consolidate"]))
def test_generated_options_exit_0_1_or_2_and_a_refusal_writes_nothing(
        tmp_path_factory, agent: str, at: str, budget: str, design: str, scope: str, text: str, source: str,
        session: str, lines: list, verb: str) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    store = folder / "memory.db"
    for name in DESIGNS:
        with open_design(name, store=store, embedder=HashEmbedder(64)) as memory:
            memory.write("ann", [entry(text="Ann walked to the harbour", at=datetime(2026, 5, 1, tzinfo=UTC))])
    entries = folder / "entries.jsonl"
    entries.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines), encoding="utf-8")
    options = ["--store", str(store), "--design", design, "--agent", agent, "--scope", scope]
    when = ["--at", at, *(["--source", source, "--session", session] if verb.startswith("remember") else [])]
    argv = {"remember": ["remember", *options, *when, text],
            "remember-file": ["remember", *options, *when, "--file", str(entries)],
            "context": ["context", *options, *when, "q", "--budget", budget], "export": ["export", *options],
            "consolidate": ["consolidate", *options, *when]}[verb]
    before = files(folder)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main(["memory", *argv, *HASH])
    assert code in (0, 1, 2) and "Traceback" not in stderr.getvalue()
    if code == 2:
        assert stderr.getvalue().count("\n") == 1, stderr.getvalue()
        assert files(folder) == before, argv


def test_reconfigure_records_the_new_settings(capsys, tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    remember = ["memory", "remember", *where(store, "buffer-summary", "--agent", "ann"), "--at", AT]
    assert run(capsys, *remember, "one", "--design-config", "turns=4")[0] == 0
    refused(capsys, *remember, "two", "--design-config", "turns=3")
    assert run(capsys, *remember, "two", "--design-config", "turns=3", "--reconfigure")[0] == 0
    assert run(capsys, *remember, "three", "--design-config", "turns=3")[0] == 0  # now the store's
    with closing(sqlite3.connect(store)) as db:
        config, changes = db.execute("SELECT config, changes FROM design_settings").fetchone()
    assert json.loads(config)["turns"] == 3 and [c["from"]["turns"] for c in json.loads(changes)] == [4]


def test_settings_pairs_keep_a_json_value_whole() -> None:
    from memstream.cli.flags import settings_pairs

    assert settings_pairs('turns=10, weights={"rec": 1, "rel": 2},batch=5') == {
        "turns": "10", "weights": '{"rec": 1, "rel": 2}', "batch": "5"}
