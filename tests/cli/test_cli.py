"""The CLI: the commands work, JSON has its keys, and every user mistake is one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memstream.cli import main

HASH = ["--embedder", "hash:256"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    lines = [
        {"owner": "ann", "text": "Ann is brushing her teeth", "created_at": "2023-02-13T07:00:00+00:00"},
        {"owner": "ann", "text": "Ann is planning a party at the cafe", "created_at": "2023-02-13T08:00:00+00:00"},
        {"owner": "ann", "text": "Ann got engaged to Bob", "created_at": "2023-02-13T09:00:00+00:00",
         "importance": 9},
        {"owner": "bob", "text": "Bob is reading at the library", "created_at": "2023-02-13T09:00:00+00:00",
         "kind": "observation", "metadata": {"place": "library"}},
        {"owner": "ann", "text": "Ann is excited about the party", "created_at": "2023-02-13T10:00:00+00:00",
         "kind": "reflection", "cites": [2]},
    ]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def test_import_recall_inspect(capsys, tmp_path: Path, jsonl: Path) -> None:
    db = str(tmp_path / "s.db")
    assert run(capsys, "import", db, str(jsonl), *HASH)[0] == 0
    code, out, _ = run(capsys, "recall", db, "--agent", "ann", "--query", "party at the cafe", "-k", "3",
                       "--no-touch", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 3 and {r["owner"] for r in rows} == {"ann"}
    for key in ("id", "owner", "kind", "text", "created_at", "last_accessed_at", "score", "recency",
                "importance", "relevance", "raw_recency", "raw_importance", "raw_relevance"):
        assert key in rows[0]
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    code, out, _ = run(capsys, "recall", db, "--agent", "ann", "--query", "planning a party", "--weights", "rec=0,imp=0,rel=1")
    assert code == 0 and "party" in out.splitlines()[2] and "weights rec 0 imp 0 rel 1" in out
    code, out, _ = run(capsys, "recall", db, "--agent", "ann", "--query", "what did Ann do today?",
                       "--weights", "rec=0,imp=0,rel=1,time=1", "--at", "2023-02-13T12:00:00+00:00", "--no-touch")
    assert code == 0 and "time 1" in out.splitlines()[0] and "span named: 2023-02-13T00:00:00+00:00" in out
    code, out, _ = run(capsys, "inspect", db, "--json")
    summary = json.loads(out)
    assert summary["owners"] == {"ann": 4, "bob": 1} and summary["embedder"] == "hash-256"
    code, out, _ = run(capsys, "inspect", db, "--agent", "ann")
    assert code == 0 and "cites [2]" in out


def test_add_rates_importance_and_records_it(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    code, out, _ = run(capsys, "add", db, "--agent", "ann", "--text", "Ann's grandmother died",
                       "--at", "2023-02-13T07:00:00+01:00", *HASH)
    assert code == 0 and "importance 9" in out
    code, out, _ = run(capsys, "add", db, "--agent", "ann", "--text", "Ann misses her", "--importance", "6",
                       "--cites", "1", "--kind", "reflection", "--at", "2023-02-13T08:00:00+01:00")
    assert code == 0 and "memory 2" in out


def test_recall_touch_moves_last_access(capsys, tmp_path: Path, jsonl: Path) -> None:
    db = str(tmp_path / "s.db")
    run(capsys, "import", db, str(jsonl), *HASH)
    at = "2023-02-14T10:00:00+00:00"
    run(capsys, "recall", db, "--agent", "bob", "--query", "library", "--at", at)
    rows = json.loads(run(capsys, "recall", db, "--agent", "bob", "--query", "x", "--no-touch", "--json")[1])
    assert rows[0]["last_accessed_at"] == at


@pytest.mark.parametrize(("argv", "problem"), [
    (["recall", "{db}", "--agent", "zed", "--query", "q"], "unknown owner 'zed'"),
    (["recall", "{db}", "--agent", "zed", "--query", "q", "--at", "2023-02-14T10:00:00+00:00"], "unknown owner 'zed'"),
    (["recall", "{db}", "--agent", "ann", "--query", "q", "-k", "0"], "positive integer"),
    (["recall", "{db}", "--agent", "ann", "--query", "q", "--at", "2023-02-13T07:00:00"], "no time zone"),
    (["recall", "{db}", "--agent", "ann", "--query", "q", "--at", "yesterday"], "not an ISO-8601 time"),
    (["recall", "{db}", "--agent", "ann", "--query", "q", "--embedder", "hash:128"], "--embedder hash-256"),
    (["recall", "{db}", "--agent", "ann", "--query", "q", "--weights", "rec=1,imp=x"], "--weights"),
    (["recall", "{db}", "--agent", "ann", "--query", "q", "--weights", "rel=1,bm25=1"], "rec, imp, rel, time"),
    (["recall", "{missing}", "--agent", "ann", "--query", "q"], "no stream at"),
    (["recall", "{jsonl}", "--agent", "ann", "--query", "q"], "not a memstream stream"),
    (["add", "{db}", "--agent", "ann", "--text", "x", "--importance", "11"], "importance"),
    (["add", "{db}", "--agent", "ann", "--text", " ", "--importance", "3"], "text is empty"),
    (["add", "{db}", "--agent", "ann", "--text", "x", "--importance", "3", "--cites", "99"], "does not exist"),
    (["add", "{db}", "--agent", "ann", "--text", "x", "--importance", "3", "--cites", "4"], "another owner"),
    (["import", "{db}", "{missing}"], "no such file"),
    (["recall", "{db}", "--agent", "ann", "--query", "q", "--llm", "gpt"], None),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path: Path, jsonl: Path, argv, problem) -> None:
    db = str(tmp_path / "s.db")
    run(capsys, "import", db, str(jsonl), *HASH)
    paths = {"db": db, "missing": str(tmp_path / "nope.db"), "jsonl": str(jsonl)}
    argv = [a.format(**paths) for a in argv]
    code, _, err = run(capsys, *argv) if problem else (0, "", "")
    if problem is None:
        return
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and problem in err


def test_a_bad_import_line_writes_nothing(capsys, tmp_path: Path, jsonl: Path) -> None:
    db = str(tmp_path / "s.db")
    run(capsys, "import", db, str(jsonl), *HASH)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl.read_text() + '{"owner": "ann", "text": "x", "created_at": "2023-02-13T10:00:00"}\n')
    code, _, err = run(capsys, "import", db, str(bad))
    assert code == 2 and "bad.jsonl:6" in err and "time zone" in err
    assert json.loads(run(capsys, "inspect", db, "--json")[1])["memories"] == 5


@pytest.mark.slow
def test_usage_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    for argv in (["recall"], ["recall", str(tmp_path / "x.db"), "--agent", "a", "--query", "q"]):
        proc = subprocess.run([sys.executable, "-m", "memstream.cli", *argv], capture_output=True, text=True)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_demo_runs_offline(capsys) -> None:
    code, out, _ = run(capsys, "demo", *HASH)
    assert code == 0 and "Built a stream of 27 memories" in out and "total" in out


def test_demo_will_not_append_to_an_existing_file(capsys, tmp_path: Path) -> None:
    out = str(tmp_path / "demo.db")
    assert run(capsys, "demo", "-o", out, *HASH)[0] == 0
    code, _, err = run(capsys, "demo", "-o", out, *HASH)
    assert code == 2 and "already exists" in err


def _demo_stream(capsys, tmp_path: Path) -> str:
    db = str(tmp_path / "demo.db")
    assert run(capsys, "demo", "-o", db, *HASH)[0] == 0
    return db


@pytest.mark.slow
def test_reflect_tree_and_plan(capsys, tmp_path: Path) -> None:
    db = _demo_stream(capsys, tmp_path)
    owner = "Isabella Rodriguez"
    code, out, _ = run(capsys, "reflect", db, "--agent", owner, "--json")
    result = json.loads(out)
    assert code == 0 and len(result["questions"]) == 3 and result["insights"]
    top = result["insights"][0]
    code, out, _ = run(capsys, "tree", db, "--agent", owner, "--memory", str(top["memory_id"]))
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"[{top['memory_id']}] reflection")
    assert len(lines) == 1 + len(top["cites"]) and all(line.startswith("  [") for line in lines[1:])
    identity = tmp_path / "isabella.json"
    identity.write_text(json.dumps({"name": owner, "age": 34, "occupation": "cafe owner", "workplace": "Hobbs Cafe",
                                    "wake": "06:00", "sleep": "22:00"}))
    code, out, _ = run(capsys, "plan", db, "--agent", owner, "--identity", str(identity), "--day", "2023-02-14-08:00")
    assert code == 0 and out.startswith("Plan for Tuesday 14 February 2023")
    assert "06:00-07:00" in out and "+15 min" in out
    code, out, _ = run(capsys, "plan", db, "--agent", owner, "--identity", str(identity),
                       "--day", "2023-02-15T00:00:00-08:00", "--json", "--decompose-all")
    plan = json.loads(out)
    assert code == 0 and all(b["actions"] for b in plan["blocks"] if b["activity"] != "sleeping")


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "problem"), [
    (["reflect", "{db}", "--agent", "Nobody"], "unknown owner 'Nobody'"),
    (["tree", "{db}", "--agent", "Isabella Rodriguez", "--memory", "999"], "no memory 999"),
    (["plan", "{db}", "--agent", "Isabella Rodriguez", "--identity", "{bad}", "--day", "2023-02-14+00:00"],
     "bad identity"),
    (["plan", "{db}", "--agent", "Isabella Rodriguez", "--identity", "{good}", "--day", "2023-02-14"],
     "no time zone"),
    (["plan", "{db}", "--agent", "Someone Else", "--identity", "{good}", "--day", "2023-02-14+00:00"],
     "not --agent"),
])
def test_reflection_and_planning_bad_input(capsys, tmp_path: Path, argv, problem) -> None:
    db = _demo_stream(capsys, tmp_path)
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text(json.dumps({"name": "Isabella Rodriguez"}))
    good.write_text(json.dumps({"name": "Isabella Rodriguez", "age": 34}))
    code, _, err = run(capsys, *[a.format(db=db, bad=bad, good=good) for a in argv])
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1


def test_version_comes_from_one_source(capsys) -> None:
    import tomllib

    import memstream

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"memstream {memstream.__version__}"
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]  # pyproject reads memstream.__version__
