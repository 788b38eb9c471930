"""Every option of the commands that read or change memory, given generated values (#45): no traceback, an
exit of 0, 1 or 2, and nothing written on a refusal.

Each command starts from a call that works and is quick (a small run, a stream, a facts and a profile file
made once); hypothesis then gives one of the command's options a value drawn from text (any unicode, control
and invisible characters), numbers (negative, huge, not finite), times (impossible dates, no zone) and paths
(a folder, a missing file, a file that is not the kind asked for). The options are read from the parser
itself, so a new option is fuzzed the day it is added. A call that is accepted and runs longer than
``SECONDS`` is stopped (it was accepted: that is not a failure). ``sweep`` is given only values it must
refuse, and its ``--out`` only empty ones (any other name is a folder it may make): an accepted sweep starts
its workers, which takes far longer than a test may and cannot be stopped from inside.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import build_parser, main

SECONDS = 4
HASH = ["--embedder", "hash:64"]
AGENT = "Isabella Rodriguez"
#: Options that name where the output goes or how long to wait: fuzzed elsewhere, or they would only wait.
SKIP = {"-h", "--help", "--address", "--timeout", "--concurrency"}


class TookTooLong(BaseException):  # (not an Exception: nothing on the way may take it for a failure)
    pass


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise TookTooLong

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One of each thing the commands read: a run, a stream, a facts file, a profile file, a sweep spec."""
    from memstream.sim.run.launch import RunConfig, start_run

    root = tmp_path_factory.mktemp("made")
    run = root / "run"
    start_run(RunConfig(agents=2, start=datetime.fromisoformat("2023-02-13T06:00:00-08:00"), hours=0.1,
                        embedder="hash:64"), run, progress=False)
    stream = root / "s.db"
    assert main(["add", str(stream), "--agent", "ann", "--text", "Ann is planning a party", "--at",
                 "2023-02-13T08:00:00+00:00", *HASH]) == 0
    facts = root / "f.db"
    assert main(["facts", "add", str(facts), "--agent", "ann", "--as-is", "--text", "Ann lives in Lisbon",
                 "--at", "2023-02-13T08:00:00+00:00", *HASH]) == 0
    spec = root / "spec.yaml"
    spec.write_text('base: {agents: 2, hours: 0.05, embedder: "hash:64"}\ngrid: {seed: [0, 1]}\n', encoding="utf-8")
    from memstream.designs import ProfileStore

    ProfileStore(root / "p.db").close()
    folder = root / "a-folder"
    folder.mkdir()
    (root / "notes.txt").write_text("not a store\n", encoding="utf-8")
    return {"root": root, "run": run, "stream": stream, "facts": facts, "spec": spec}


def bases(m: dict[str, Path], out: Path) -> dict[str, list[str]]:
    """A quick call that works, per command (and subcommand)."""
    run, stream, facts = str(m["run"]), str(m["stream"]), str(m["facts"])
    return {
        "run": ["run", "--agents", "2", "--hours", "0.02", *HASH, "--out", str(out / "r")],
        "whisper": ["whisper", run, "--agent", AGENT, "a thought"],
        "recall": ["recall", stream, "--agent", "ann", "--query", "party", "--no-touch"],
        "eval": ["eval", "scenarios", "--design", "full", *HASH],
        "facts add": ["facts", "add", facts, "--agent", "ann", "--as-is", "--text", "Ann has a cat", *HASH],
        "facts history": ["facts", "history", facts, "--agent", "ann"],
        "facts as-of": ["facts", "as-of", facts, "--agent", "ann", "2023-02-14T00:00:00+00:00"],
        "profile show": ["profile", "show", str(m["root"] / "p.db"), "--agent", "ann"],
        "sweep": ["sweep", str(m["spec"]), "--out", str(out / "sweep")],
        "measure network": ["measure", "network", run],
        "measure diffusion": ["measure", "diffusion", run, "--fact", "party"],
        "interview": ["interview", run, "What are you doing?", "--agent", AGENT],
    }


def options(words: list[str]) -> list[tuple[str, bool]]:
    """The options of the (sub)command ``words`` names: each spelling, and whether it takes a value."""
    parser, _ = build_parser()
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return [(spelling, action.nargs != 0) for action in parser._actions for spelling in action.option_strings
            if spelling not in SKIP]


TEXT = st.text(max_size=12) | st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zs", "Co"]), max_size=4)
NUMBER = st.sampled_from(["0", "-1", "1e309", "nan", "inf", "-0.0", "99999999999999999999", "٣", "1_000", "0x10"])
TIME = st.sampled_from(["2023-02-30T08:00:00+00:00", "2023-02-13T08:00:00", "yesterday", "9999-12-31T23:59:59+14:00",
                        "0001-01-01T00:00:00+00:00", "2023-13-01", ""])
PATHS = st.sampled_from(["a-folder", "missing.db", "notes.txt", "no/such/folder/x.db", "s.db", "run"])
REFUSED = st.sampled_from(["", "-1", "0", "nan", "1e309", "\x00", "\u202e", "٣"])


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(("-wal", "-shm"))}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "whisper", "recall", "eval", "facts add", "facts history", "facts as-of",
                                     "profile show", "sweep", "measure network", "measure diffusion", "interview"])
@settings(max_examples=int(os.environ.get("MEMSTREAM_FUZZ_CASES", "12")), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_option_given_any_value_is_a_clean_exit(made: dict[str, Path], tmp_path_factory, capsys, monkeypatch,
                                                      command: str, data: st.DataObject) -> None:
    out = tmp_path_factory.mktemp("out")
    monkeypatch.chdir(made["root"])
    argv = bases(made, out)[command]
    fuzzed = [(o, takes) for o, takes in options(command.split()) if takes or command != "sweep"]  # (--resume runs)
    option, takes = data.draw(st.sampled_from(fuzzed), label="option")
    values = (st.sampled_from(["", " "]) if option == "--out" else REFUSED) if command == "sweep" \
        else TEXT | NUMBER | TIME | PATHS
    argv = [*argv, option, data.draw(values, label="value")] if takes else [*argv, option]
    before = digest(made["root"]), digest(out)
    try:
        with at_most(SECONDS):
            code = main(argv)
    except TookTooLong:  # accepted, and working: what it wrote is its own
        capsys.readouterr()
        return
    err = capsys.readouterr().err
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        errors = [line for line in err.splitlines() if line.startswith("memstream: error")]
        assert len(errors) == 1, (argv, err)  # one line (after any warnings), naming the problem
        assert (digest(made["root"]), digest(out)) == before, (argv, err)
