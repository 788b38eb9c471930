"""`memstream facts`: the commands work; every mistake is one line, exit 2, and writes nothing."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main

HASH = ["--embedder", "hash:64"]
AT = "2026-05-01T09:00:00+00:00"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def dump(db: str) -> list[str]:
    with closing(sqlite3.connect(db)) as c:
        return list(c.iterdump())


@pytest.mark.slow
def test_add_update_history_as_of_forget_delete_check(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "f.db")
    code, out, _ = run(capsys, "facts", "add", db, "--agent", "ann", "--text", "My project deadline is Thursday the "
                       "14th.", "--at", AT, *HASH, "--json")
    assert code == 0 and json.loads(out)[0]["text"] == "My project deadline is Thursday the 14th."
    code, out, _ = run(capsys, "facts", "add", db, "--agent", "ann", "--text", "Update: my project deadline is "
                       "now Friday the 15th.", "--at", "2026-05-03T09:00:00+00:00")
    assert code == 0, out
    code, out, _ = run(capsys, "facts", "as-of", db, "--agent", "ann", "2026-05-02T00:00:00+00:00", "--json")
    assert [f["text"] for f in json.loads(out)] == ["My project deadline is Thursday the 14th."]
    code, out, _ = run(capsys, "facts", "history", db, "--agent", "ann", "--fact", "1", "--json")
    versions = json.loads(out)
    assert [f["is_latest"] for f in versions] == [False, True] and versions[0]["valid_to"].startswith("2026-05-03")
    code, out, _ = run(capsys, "facts", "update", db, "--agent", "ann", "--fact", "1", "--text",
                       "My project deadline is Monday the 18th.", "--at", "2026-05-04T09:00:00+00:00")
    assert code == 0 and "fact 3 is the new version; fact 2 is kept" in out  # a stale id updates the latest
    assert run(capsys, "facts", "forget", db, "--agent", "ann", "--fact", "3")[0] == 0
    code, out, _ = run(capsys, "facts", "as-of", db, "--agent", "ann", "2026-05-05T00:00:00+00:00", "--json")
    assert json.loads(out) == []
    assert run(capsys, "facts", "forget", db, "--agent", "ann", "--fact", "3", "--restore")[0] == 0
    code, out, _ = run(capsys, "facts", "delete", db, "--agent", "ann", "--fact", "3")
    assert code == 0 and out.startswith("deleted 3 fact(s)")
    assert b"deadline" not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert run(capsys, "facts", "check", db)[1].endswith(": ok\n")


def test_an_expiring_fact_and_the_sweeper(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "f.db")
    run(capsys, "facts", "add", db, "--agent", "ann", "--text", "Ann is in Oslo", "--as-is", "--expires",
        "2026-05-05T00:00:00+00:00", "--at", AT, *HASH)
    code, out, _ = run(capsys, "facts", "as-of", db, "--agent", "ann", "2026-05-06T00:00:00+00:00", "--json")
    assert json.loads(out) == []
    code, out, _ = run(capsys, "facts", "forget", db, "--agent", "ann", "--expired", "--at", "2026-05-06T00:00:00+00:00")
    assert out.startswith("1 expired fact(s) swept")


@pytest.mark.parametrize(("argv", "problem"), [
    (["history", "{db}", "--agent", "ann"], "give --fact ID or --query TEXT"),
    (["history", "{db}", "--agent", "ann", "--fact", "99"], "no fact 99"),
    (["delete", "{db}", "--agent", "ann"], "name either --source KEY or --fact ID"),
    (["delete", "{db}", "--agent", "bob", "--fact", "1"], "no fact 1 of 'bob'"),
    (["delete", "{db}", "--agent", "ann", "--source", "nope"], "no source 'nope'"),
    (["forget", "{db}", "--agent", "bob", "--fact", "1"], "not one of 'bob'"),
    (["forget", "{db}", "--agent", "ann"], "name the facts to forget"),
    (["update", "{db}", "--agent", "bob", "--fact", "1", "--text", "x"], "not one of 'bob'"),
    (["as-of", "{db}", "--agent", "ann", "yesterday"], "not an ISO-8601 time"),
    (["add", "{db}", "--agent", "ann", "--text", "x", "--kind", "rumour", "--as-is"], "unknown fact kind"),
    (["add", "{db}", "--agent", "ann", "--text", "x", "--expires", "2026-01-01T00:00:00+00:00"], "go with --as-is"),
    (["add", "{db}", "--agent", "ann", "--text", "x", "--as-is", "--embedder", "hash:32"], "hash-64 embedder"),
    (["as-of", "{other}", "--agent", "ann", "2026-05-06T00:00:00+00:00"], "no facts file"),
])
def test_mistakes_are_one_line_exit_2_and_change_nothing(capsys, tmp_path: Path, argv: list[str],
                                                         problem: str) -> None:
    db = str(tmp_path / "f.db")
    run(capsys, "facts", "add", db, "--agent", "ann", "--text", "Ann likes tea", "--as-is", "--at", AT, *HASH)
    before = dump(db)
    code, out, err = run(capsys, "facts", *[a.format(db=db, other=tmp_path / "other.db") for a in argv])
    assert code == 2 and problem in err and err.count("\n") == 1 and err.startswith("memstream: error:"), err
    assert not (tmp_path / "other.db").exists()
    assert json.loads(run(capsys, "facts", "history", db, "--agent", "ann", "--fact", "1", "--json")[1])[0][
        "text"] == "Ann likes tea"
    assert dump(db) == before


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=60))
def test_any_text_is_stored_or_refused_in_one_line(capsys, tmp_path_factory, text: str) -> None:
    db = str(tmp_path_factory.mktemp("f") / "f.db")
    code, out, err = run(capsys, "facts", "add", db, "--agent", "ann", "--text", text, "--as-is", "--at", AT, *HASH)
    if code == 0:
        code, out, _ = run(capsys, "facts", "as-of", db, "--agent", "ann", "2026-05-02T00:00:00+00:00", "--json")
        assert [f["text"] for f in json.loads(out)] == [" ".join(text.split())]
    else:
        assert code == 2 and err.count("\n") == 1 and not Path(db).exists()


def test_an_earlier_message_added_again_after_its_correction_does_not_come_back(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "f.db")
    later = "2026-05-03T09:00:00+00:00"
    paris = ["facts", "add", db, "--agent", "ann", "--text", "I live in Paris", "--as-is", "--at", AT, *HASH]
    assert run(capsys, *paris)[0] == 0
    code, out, _ = run(capsys, "facts", "update", db, "--agent", "ann", "--fact", "1", "--text", "I live in Berlin",
                       "--at", "2026-05-02T09:00:00+00:00")
    assert code == 0 and "fact 2 is the new version" in out
    assert run(capsys, *paris)[0] == 0  # the first message again, as it was
    code, out, _ = run(capsys, "facts", "as-of", db, "--agent", "ann", later, "--json")
    assert [f["text"] for f in json.loads(out)] == ["I live in Berlin"]
    assert run(capsys, "facts", "check", db)[1].endswith(": ok\n")
    code, out, _ = run(capsys, "facts", "update", db, "--agent", "ann", "--fact", "2", "--text", "I live in Paris",
                       "--at", later)  # said again later: a new version, superseding Berlin
    assert code == 0 and "fact 3 is the new version; fact 2 is kept" in out
    code, out, _ = run(capsys, "facts", "history", db, "--agent", "ann", "--fact", "1", "--json")
    assert [(f["text"], f["is_latest"]) for f in json.loads(out)] == [
        ("I live in Paris", False), ("I live in Berlin", False), ("I live in Paris", True)]
    assert run(capsys, "facts", "check", db)[1].endswith(": ok\n")


def test_the_readmes_changed_mind_example_through_the_cli(capsys, tmp_path: Path) -> None:
    """The README's "Friday only": the later statement replaces the earlier one, as through the library."""
    db = str(tmp_path / "f.db")
    assert run(capsys, "facts", "add", db, "--agent", "ann", "--text", "user: my deadline is Thursday the 14th",
               "--at", AT, *HASH)[0] == 0
    assert run(capsys, "facts", "add", db, "--agent", "ann", "--text", "user: my deadline moved to Friday the 15th",
               "--at", "2026-05-02T09:00:00+00:00")[0] == 0
    code, out, _ = run(capsys, "facts", "as-of", db, "--agent", "ann", "2026-05-03T00:00:00+00:00", "--json")
    assert code == 0 and [f["text"] for f in json.loads(out)] == ["my deadline moved to Friday the 15th"]


HIDDEN = st.text(alphabet=st.characters(categories=["Cc", "Cf"]), min_size=1, max_size=3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(st.just(""), st.just("   "), st.builds(lambda a, h, b: a + h + b, st.text(max_size=3), HIDDEN,
                                                                st.text(max_size=3))),
       where=st.sampled_from(["--agent", "--tenant"]))
def test_an_empty_or_hidden_agent_or_tenant_is_one_line_and_writes_nothing(capsys, tmp_path: Path, name: str,
                                                                           where: str) -> None:
    if where == "--tenant" and not name.strip():
        return  # an empty tenant is "none", allowed
    db = tmp_path / "f.db"
    flags = {"--agent": "ann", "--tenant": "", where: name}
    code, out, err = run(capsys, "facts", "add", str(db), "--text", "I like tea", "--as-is", "--at", AT,
                         *(x for flag, value in flags.items() for x in (flag, value)))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert not db.exists()


@pytest.mark.parametrize("fact", [str(2**63), str(2**64 + 5)])
def test_a_fact_id_beyond_what_sqlite_holds_is_one_line(capsys, tmp_path: Path, fact: str) -> None:
    code, _, err = run(capsys, "facts", "history", str(tmp_path / "f.db"), "--agent", "ann", "--fact", fact)
    assert code == 2 and err.count("\n") == 1 and "largest id" in err, err


def test_expires_before_at_is_refused_and_writes_nothing(capsys, tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    code, _, err = run(capsys, "facts", "add", str(db), "--agent", "ann", "--as-is", "--text", "x is y", "--at",
                       "2026-01-02T00:00:00+00:00", "--expires", "2026-01-01T00:00:00+00:00")
    assert code == 2 and err.count("\n") == 1 and "--expires" in err and not db.exists(), err
