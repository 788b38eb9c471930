"""Flags, one meaning each: every command takes the canonical spellings (``--agent``, ``-k``,
``--json [FILE]``, ``-o/--output FILE``, ``--out DIR``, named ``--weights``), the old spellings still
work and say they are deprecated, and every error line of ours and argparse's starts the same way."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import _Prefixed, build_parser, main
from memstream.cli.outputs import STDOUT
from memstream.cli.weights import parse_weights
from memstream.models import HashEmbedder
from memstream.sim import RunConfig, start_run
from memstream.stream import MemoryStream, Weights

T0 = datetime(2023, 2, 13, 8, tzinfo=UTC)


def parse(capsys, *argv: str) -> tuple[argparse.Namespace | None, int, str]:
    """Parse as ``main`` does: the namespace (None if argparse stopped), the exit code, stderr."""
    parser, _ = build_parser()
    try:
        args, extra = parser.parse_known_args(list(argv))
        assert not extra, extra
    except SystemExit as stop:
        return None, int(stop.code or 0), capsys.readouterr().err
    return args, 0, capsys.readouterr().err


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("flags")
    db = root / "s.db"
    with MemoryStream(db, HashEmbedder(64)) as s:
        for i, text in enumerate(["Ann is planning a party", "Ann reads at the library", "Ann bakes bread"]):
            s.add("ann", text, at=T0 + timedelta(hours=i), importance=3 + i)
    run = root / "run"
    start_run(RunConfig(start=T0, hours=0.5, agents=2, embedder="hash"), run, progress=False)
    return {"root": root, "db": db, "run": run}


# --- one spelling per meaning, as --help shows it --------------------------------------------------

def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its name, e.g. ``recall`` and ``plot timeline``."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and name:
            found[name] = parser
        for sub in subs:
            for child, p in sub.choices.items():
                walk(p, f"{name} {child}".strip())

    walk(build_parser()[0], "")
    return found


def _shown(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions if a.help is not argparse.SUPPRESS for o in a.option_strings}


def test_every_command_shows_one_spelling_per_meaning() -> None:
    parsers = _parsers()
    assert len(parsers) > 25
    for name, parser in parsers.items():
        shown = _shown(parser)
        assert "--owner" not in shown and "--k" not in shown, name
        if "--out" in shown:  # a folder the command creates
            assert name in ("run", "sweep"), name
        if "-o" in shown:
            assert shown["-o"].option_strings == ["-o", "--output"], name
        if "--json" in shown:
            assert shown["--json"].nargs == "?" and shown["--json"].const == STDOUT, name
        for dest, flag in (("agent", "--agent"), ("k", "-k"), ("output", "-o")):
            spellings = {o for o, a in shown.items() if a.dest == dest}
            assert not spellings or flag in spellings, (name, spellings)
        if "--weights" in shown:
            assert "=" in shown["--weights"].metavar, name  # named components


CANONICAL = [
    ("add {db} --agent ann --text hi --importance 3", {"agent": "ann"}),
    ("recall {db} --agent ann --query q -k 3 --json --weights rel=2", {"agent": "ann", "k": 3, "json": STDOUT}),
    ("inspect {db} --agent ann --json {root}/i.json", {"agent": "ann", "json": "{root}/i.json"}),
    ("reflect {db} --agent ann --json", {"agent": "ann", "json": STDOUT}),
    ("tree {db} --agent ann --memory 1", {"agent": "ann"}),
    ("plan {db} --agent ann --identity x.json --day 2023-02-14+00:00 --json", {"agent": "ann", "json": STDOUT}),
    ("demo -o {root}/d.db", {"output": "{root}/d.db"}),
    ("run --out {root}/r --weights time=1", {"out": "{root}/r"}),
    ("whisper {run} --agent ann hello", {"agent": "ann"}),
    ("replay {run} --agent ann", {"agent": "ann"}),
    ("interview {run} --agent ann -k 4 --json a.json", {"agent": "ann", "k": 4, "json": "a.json"}),
    ("measure diffusion {run} --fact x --json", {"json": STDOUT}),
    ("measure interviews {run} -k 2 --json m.json", {"k": 2, "json": "m.json"}),
    ("sweep spec.yaml --out {root}/sw", {"out": "{root}/sw"}),
    ("view {run} --output p.html", {"output": "p.html"}),
    ("plot components {db} --agent ann --query q -k 2 --weights time=1 -o c.png", {"agent": "ann", "k": 2}),
    ("plot importance {db} -o i.png", {"agent": None, "output": "i.png"}),
    ("eval locomo x.json -k 5,10,20 --weights bm25=0,time=0 --json", {"k": [5, 10, 20], "json": STDOUT}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("line", "expected"), CANONICAL)
def test_every_command_takes_the_canonical_spellings(capsys, files, line: str, expected: dict) -> None:
    fill = {k: str(v) for k, v in files.items()}
    args, code, err = parse(capsys, *[w.format(**fill) for w in line.split()])
    assert code == 0 and err == "", err
    for key, value in expected.items():
        assert getattr(args, key) == (value.format(**fill) if isinstance(value, str) else value), key


OLD_AND_NEW = [
    ("recall {db} --owner ann --query q --k 3", "recall {db} --agent ann --query q -k 3", ["--owner", "--k"]),
    ("inspect {db} --owner ann", "inspect {db} --agent ann", ["--owner"]),
    ("add {db} --owner ann --text hi", "add {db} --agent ann --text hi", ["--owner"]),
    ("demo --out {root}/d.db", "demo -o {root}/d.db", ["--out"]),
    ("plot timeline {db} --agent ann --out t.png", "plot timeline {db} --agent ann -o t.png", ["--out"]),
    ("view {run} --out p.html", "view {run} -o p.html", ["--out"]),
    ("interview {run} q --agent ann --k 2", "interview {run} q --agent ann -k 2", ["--k"]),
    ("eval locomo x.json --k 5,10", "eval locomo x.json -k 5,10", ["--k"]),
    ("recall {db} --agent ann --query q --weights 1,2,3", "recall {db} --agent ann --query q --weights "
     "rec=1,imp=2,rel=3", ["--weights 1,2,3 by position"]),
    ("recall {db} --agent ann --query q --weights 0,0,1,2", "recall {db} --agent ann --query q --weights "
     "rec=0,imp=0,rel=1,time=2", ["--weights"]),
    # eval's 4th number was BM25 and its 5th TIME: the old meaning is kept, by position only
    ("eval locomo x.json --weights 1,1,1,0", "eval locomo x.json --weights bm25=0", ["--weights"]),
    ("eval locomo x.json --weights 0,0,1,2,3", "eval locomo x.json --weights rec=0,imp=0,rel=1,bm25=2,time=3",
     ["--weights"]),
    ("run --out {root}/r --weights 0.5,2,3", "run --out {root}/r --weights rec=0.5,imp=2,rel=3,time=0", ["--weights"]),
]


@pytest.mark.parametrize(("old", "new", "said"), OLD_AND_NEW)
def test_old_spellings_still_work_and_say_they_are_deprecated(capsys, files, old: str, new: str,
                                                              said: list[str]) -> None:
    fill = {k: str(v) for k, v in files.items()}
    was, code, err = parse(capsys, *[w.format(**fill) for w in old.split()])
    assert code == 0, err
    lines = err.splitlines()
    assert len(lines) == len(said) and all(line.startswith("memstream: warning: ") and "deprecated" in line
                                           for line in lines), err
    for line, flag in zip(lines, said, strict=True):
        assert f"warning: {flag}" in line, (line, flag)
    now, code, err = parse(capsys, *[w.format(**fill) for w in new.split()])
    assert code == 0 and err == "", err
    assert vars(was) == vars(now)


def test_a_deprecated_spelling_satisfies_a_required_flag_and_missing_both_names_the_new_one(capsys, files) -> None:
    assert main(["recall", str(files["db"]), "--owner", "ann", "--query", "party", "--no-touch"]) == 0
    out, err = capsys.readouterr()
    assert "ann recalls 'party'" in out and err.startswith("memstream: warning: --owner is deprecated; use --agent")
    assert main(["recall", str(files["db"]), "--query", "party"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memstream: error: the following arguments are required: --agent NAME") and err.count(
        "\n") == 1


# --- one error prefix --------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["nope"], ["recall"], ["plot", "timeline", "s.db", "--agent", "a"], ["recall", "s.db", "--agent", "a",
                                                                         "--query", "q", "-k", "zero"],
    ["eval", "locomo", "x.json", "-k", "0"], ["measure"], ["run", "--hours"], ["inspect", "s.db", "--bogus"],
    ["recall", "{db}", "--agent", "nobody", "--query", "q"],
])
def test_every_error_line_has_one_prefix(capsys, files, argv: list[str]) -> None:
    assert main([a.format(db=files["db"]) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memstream: error: ") and err.count("\n") == 1, err


def test_log_warnings_carry_the_warning_prefix() -> None:
    record = logging.LogRecord("memstream.sim", logging.WARNING, __file__, 1, "slow model", None, None)
    assert _Prefixed("%(message)s").format(record) == "memstream: warning: memstream.sim: slow model"


# --- --json [FILE] -----------------------------------------------------------------------------------

def _digest(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()
            and not p.name.endswith(("-wal", "-shm"))}


@pytest.mark.parametrize("argv", [
    ["recall", "{db}", "--agent", "ann", "--query", "party", "--no-touch"],
    ["inspect", "{db}"],
    ["inspect", "{db}", "--agent", "ann"],
    ["measure", "network", "{run}"],
])
def test_json_alone_prints_it_and_json_file_writes_it(capsys, files, tmp_path: Path, argv: list[str]) -> None:
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    assert main([*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)  # stdout is the JSON and nothing else
    out = tmp_path / "r.json"
    for _ in range(2):  # the second time over its own JSON file, which an output may replace
        assert main([*argv, "--json", str(out)]) == 0
        said = capsys.readouterr().out
    assert f"wrote {out}" in said and not said.lstrip().startswith(("[", "{"))  # the text, and the file
    written = json.loads(out.read_text())
    if argv[0] != "inspect" or "--agent" in argv:
        assert written == printed or [r.get("id") for r in written] == [r.get("id") for r in printed]


def test_an_output_never_overwrites_an_input_a_stream_or_a_run(capsys, files, tmp_path: Path) -> None:
    fake = tmp_path / "stream.json"
    fake.write_bytes(files["db"].read_bytes())  # a stream under a JSON name
    image = tmp_path / "stream.png"
    image.write_bytes(files["db"].read_bytes())  # and under an image's
    notes = tmp_path / "notes.json"
    notes.write_text("my notes, not JSON")
    run, db = files["run"], files["db"]
    cases = [
        (["measure", "network", str(run), "--json", str(run / "streams.db")], "name a .json file"),
        (["measure", "network", str(run), "--json", str(run / "config.json")], "inside the input"),
        (["measure", "network", str(run), "--json", str(fake)], "not a JSON file"),
        (["recall", str(db), "--agent", "ann", "--query", "q", "--json", str(db)], "name a .json file"),
        (["inspect", str(db), "--json", str(notes)], "not a JSON file"),
        (["inspect", str(db), "--json", str(tmp_path)], "name a .json file"),
        (["inspect", str(db), "--json", str(tmp_path / "no" / "x.json")], "does not exist"),
        (["interview", str(run), "--agent", "Isabella Rodriguez", "--json", "What now?"], "name a .json file"),
        (["plot", "timeline", str(db), "--agent", "ann", "-o", str(image)], "not a PNG or SVG file"),
        (["plot", "timeline", str(image), "--agent", "ann", "-o", str(image)], "the input"),
        (["measure", "network", str(run), "--plot", str(image)], "not a PNG or SVG file"),
        (["measure", "network", str(run), "--plot", str(tmp_path)], "must end in .png"),
    ]
    for argv, problem in cases:
        before = _digest(files["root"]) | _digest(tmp_path)
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        flag = next(a for a in reversed(argv) if a.startswith("-"))
        assert err.startswith("memstream: error: ") and problem in err and err.count("\n") == 1, err
        assert flag in err, (flag, err)
        assert _digest(files["root"]) | _digest(tmp_path) == before, argv


# --- --weights, read one way everywhere ---------------------------------------------------------------

STREAM_TAKES = ("rec", "imp", "rel", "time")
EVAL_TAKES = ("rec", "imp", "rel", "bm25", "time")
LONG = {"rec": "recency", "imp": "importance", "rel": "relevance", "time": "time", "bm25": "bm25"}
GOOD = st.one_of(st.integers(0, 10**6).map(str), st.floats(0, 1e6).map(repr), st.sampled_from(["0", "1.5", "2e3"]))
BAD = st.sampled_from(["-1", "nan", "inf", "1e7", "x", "", "1,", "0x1"])
NAMES = st.sampled_from([*EVAL_TAKES, "recency", "Relevance", "cosine", "", "rec rel"])


@st.composite
def weights_text(draw) -> tuple[str, list[tuple[str | None, str, bool]]]:
    """A --weights value, and its parts as (name or None, number, number is valid)."""
    named = draw(st.booleans())
    parts = draw(st.lists(st.tuples(NAMES if named else st.none(), st.one_of(GOOD.map(lambda v: (v, True)),
                                                                               BAD.map(lambda v: (v, False)))),
                          min_size=1, max_size=6))
    parts = [(n, v, ok) for n, (v, ok) in parts]
    text = ",".join(v if n is None else f"{n}={v}" for n, v, _ in parts)
    return text, parts


def expected(parts: list[tuple[str | None, str, bool]], takes: tuple[str, ...],
             defaults: dict[str, float], by_position: dict[str, float]) -> dict[str, float] | None:
    """What --weights must mean, or None where it must be refused (an oracle written from the rules)."""
    if not all(ok for _, _, ok in parts):
        return None
    values = dict(defaults)
    if parts[0][0] is None:
        if not 3 <= len(parts) <= len(takes):
            return None
        values.update(by_position)  # what the old positional form meant by the numbers left out
        values.update({name: float(v) for name, (_, v, _) in zip(takes, parts, strict=False)})
        return values
    shorts = [{v: k for k, v in LONG.items()}.get(n.lower(), n.lower()) for n, _, _ in parts]
    if len(set(shorts)) < len(shorts) or not set(shorts) <= set(takes):
        return None
    values.update({s: float(v) for s, (_, v, _) in zip(shorts, parts, strict=True)})
    return values


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=weights_text(), command=st.sampled_from(["recall", "interview", "eval"]))
def test_generated_weights_parse_to_the_right_weights_or_one_line_and_exit_2(capsys, case, command) -> None:
    text, parts = case
    argv = {"recall": ["recall", "s.db", "--agent", "a", "--query", "q"],
            "interview": ["interview", "run", "q", "--agent", "a"],
            "eval": ["eval", "locomo", "x.json"]}[command] + [f"--weights={text}"]
    takes = EVAL_TAKES if command == "eval" else STREAM_TAKES
    defaults = {n: 1.0 for n in takes} | ({"time": 0.0} if command == "recall" else {})
    want = expected(parts, takes, defaults, {"time": 0.0} if command == "interview" else {})
    args, code, err = parse(capsys, *argv)
    said = [line for line in err.splitlines() if not line.startswith("memstream: warning: ")]
    if want is None:
        assert code == 2 and len(said) == 1 and said[0].startswith("memstream: error: argument --weights: "), err
        assert "e.g. " in said[0] and ", ".join(takes) in said[0]  # names what this command takes
        return
    assert code == 0 and not said, err
    assert ("deprecated" in err) == (parts[0][0] is None)  # only the positional form is deprecated
    got = args.weights
    assert got == {LONG[n]: v for n, v in want.items()}
    if command != "eval":
        w = parse_weights(args)
        assert w == Weights(**{LONG[n]: v for n, v in want.items()}, decay=0.995)
        assert all(math.isfinite(getattr(w, LONG[n])) for n in takes)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text(max_size=30))
def test_any_weights_text_is_weights_or_one_line(capsys, text: str) -> None:
    args, code, err = parse(capsys, "recall", "s.db", "--agent", "a", "--query", "q", f"--weights={text}")
    said = [line for line in err.splitlines() if not line.startswith("memstream: warning: ")]
    assert (code == 0 and not said and isinstance(parse_weights(args), Weights)) or (
        code == 2 and len(said) == 1 and said[0].startswith("memstream: error: ")), err
