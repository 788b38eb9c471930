"""Checkpoints that write only what is new: a high-water mark of the stream, not a copy; exact resume from it,
from a checkpoint written the old way (a whole copy), and a clear line when the two do not fit."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.sim import RunConfig, RunDir, resume_run, start_run
from tests.helpers import contents

pytestmark = pytest.mark.slow

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)


def config(**kw: object) -> RunConfig:
    return RunConfig(**({"agents": 6, "start": START, "hours": 4, "embedder": "hash", "seed": 5, "keep_every": 1}
                        | kw))


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "run"
    start_run(config(), out, progress=False)
    return out


def checkpoint_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_a_checkpoint_holds_a_mark_of_the_stream_not_a_copy_and_does_not_grow_with_it(whole: Path) -> None:
    points = sorted(p for p in (whole / "checkpoint").iterdir() if p.is_dir())
    assert len(points) == 5 and not any((p / "streams.db").exists() for p in points)
    first, last = (json.loads((p / "state.json").read_text()) for p in (points[0], points[-1]))
    assert 0 < first["stream"]["memories_through"] < last["stream"]["memories_through"]
    with closing(sqlite3.connect(whole / "streams.db")) as db:
        assert last["stream"]["memories_through"] == db.execute("SELECT MAX(id) FROM memories").fetchone()[0]
    assert all(len(json.dumps(json.loads((p / "state.json").read_text())["stream"])) < 1000 for p in points)
    sizes = [checkpoint_bytes(p) for p in points]  # the agents' plans and the like, not what they remember
    assert max(sizes) < (whole / "streams.db").stat().st_size / 5, sizes


def test_a_run_resumed_from_an_earlier_mark_writes_what_the_whole_run_wrote(whole: Path, tmp_path: Path) -> None:
    """The stream rewound to a checkpoint two hours back (its later memories and accesses taken back), then on."""
    out = tmp_path / "run"
    shutil.copytree(whole, out)
    names = sorted(p.name for p in (out / "checkpoint").iterdir() if p.is_dir())
    (out / "checkpoint" / "LATEST").write_text(names[1])
    resume_run(out, progress=False)
    assert contents(out) == contents(whole)


def test_a_checkpoint_with_a_whole_stream_copy_still_resumes(whole: Path, tmp_path: Path) -> None:
    """Checkpoints written before the mark held a copy of the stream: the copy is restored, as then."""
    out = tmp_path / "run"
    shutil.copytree(whole, out)
    names = sorted(p.name for p in (out / "checkpoint").iterdir() if p.is_dir())
    point = out / "checkpoint" / names[1]
    state = json.loads((point / "state.json").read_text())
    with closing(sqlite3.connect(out / "streams.db")) as source, closing(sqlite3.connect(point / "streams.db")) as c:
        source.backup(c)
    with closing(sqlite3.connect(point / "streams.db")) as copy:  # the copy as the stream stood at the point
        copy.execute("DROP TRIGGER accesses_append_only_delete")
        copy.execute("DROP TRIGGER memories_append_only_delete")
        copy.execute("DELETE FROM accesses WHERE rowid > ?", (state["stream"]["accesses_through"],))
        copy.execute("DELETE FROM memories WHERE id > ?", (state["stream"]["memories_through"],))
        copy.commit()
    del state["stream"]
    (point / "state.json").write_text(json.dumps(state))
    (out / "checkpoint" / "LATEST").write_text(names[1])
    (out / "streams.db").write_bytes(b"")  # a copy needs nothing of the live file
    resume_run(out, progress=False)
    events, memories, accesses = contents(out)
    assert (events, memories, accesses) == contents(whole)


def test_a_stream_behind_its_checkpoint_is_one_line_and_changes_nothing(whole: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    shutil.copytree(whole, out)
    latest = out / "checkpoint" / (out / "checkpoint" / "LATEST").read_text().strip() / "state.json"
    state = json.loads(latest.read_text())
    state["stream"]["memories_through"] += 1000  # a mark the file never reached: another run's stream
    latest.write_text(json.dumps(state))
    before = (out / "streams.db").read_bytes()
    assert main(["run", "--resume", str(out), "--hours", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not match" in err[0] and "cannot be resumed" in err[0], err
    assert (out / "streams.db").read_bytes() == before


def test_a_fork_gets_its_own_stream_and_leaves_the_source_s_untouched(whole: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in whole.iterdir() if p.is_file()}
    at = RunDir.open(whole).checkpoints.times()[1]
    assert main(["run", "--fork", f"{whole}@{at.isoformat()}", "--out", str(tmp_path / "fork")]) == 0
    assert contents(tmp_path / "fork") == contents(whole)  # the same settings retrace the run
    assert {p.name: p.read_bytes() for p in whole.iterdir() if p.is_file()} == before


def test_the_run_s_memory_at_an_hour_is_its_stream_rewound_to_that_hour_s_mark(whole: Path, tmp_path: Path) -> None:
    """What a measure, an interview or the view reads "as it stood at hour H" (RunDir.memory_at) is the stream
    as the checkpoint at H marked it: the run's one file read at H (no copy), the same recalls as the file
    rewound to the mark, the accesses of later hours left out of recency."""
    from memstream.sim.analysis.measures import KNOWS_K, recalled
    from memstream.stream import MemoryStream, StreamMark, copy_stream, rewind_stream

    with RunDir.open(whole) as run:
        agents = run.agents
        requests = [(a, q) for a in agents for q in ("the party", "what did I do this morning")]
        checked = 0
        for at in run.checkpoints.times():
            state = run.checkpoints.at(at).state
            then = tmp_path / f"then-{checked}.db"
            copy_stream(whole / "streams.db", then)
            rewind_stream(then, StreamMark.from_dict(state["stream"]))
            found = recalled(run, requests, at)
            assert found is not None and found[0] == at
            with MemoryStream(then, run.stream.embedder, create=False, readonly=True) as past:
                assert all(past.has(a) for a in agents)  # the seed memories, from the start
                expected = [[r.memory for r in rs] for rs in past.retrieve_many(requests, now=at, k=KNOWS_K,
                                                                                   touch=False)]
            got = [[(m.id, m.last_accessed_at) for m in ms] for ms in found[1]]
            assert got == [[(m.id, m.last_accessed_at) for m in ms] for ms in expected]
            if at > START:  # an hour whose checkpoint was pruned: what was made by then is what it marked
                by_time = run.stream.as_it_stood(at).retrieve_many(requests, now=at, k=KNOWS_K, touch=False)
                assert [[(r.memory.id, r.memory.last_accessed_at) for r in rs] for rs in by_time] == got
            checked += 1
    assert checked == 5


def test_a_checkpoint_writes_the_parts_of_the_agents_states_that_changed_once(whole: Path, tmp_path: Path) -> None:
    """The agents' larger values (the day's plan and its blocks, what they have seen) are parts kept once in
    checkpoint/parts.db: a checkpoint's state.json refers to them, and a block made in an earlier hour is not
    written again; a state read back joins them in, and a missing part is a damaged checkpoint (one line)."""
    from memstream.sim.run.parts import REF, Parts

    points = sorted(p for p in (whole / "checkpoint").iterdir() if p.is_dir())
    raw = [json.loads((p / "state.json").read_text()) for p in points]
    assert all(REF in json.dumps(s["agents"]) for s in raw[1:])  # (at the start, no plan yet)
    assert all("location" in a and "name" in a for s in raw for a in s["agents"])  # an agent's own keys stay
    with RunDir.open(whole) as run:
        joined = [run.checkpoints.at(t).state for t in run.checkpoints.times()]
    assert all(REF not in json.dumps(s["agents"]) for s in joined)
    assert joined[-1]["agents"][0]["plan"]["blocks"] and joined[-1]["agents"][0]["name"]
    with closing(sqlite3.connect(whole / "checkpoint" / "parts.db")) as db:
        held = db.execute("SELECT COUNT(*), SUM(LENGTH(json)) FROM parts").fetchone()
    whole_states = sum(len(json.dumps(s["agents"])) for s in joined)
    assert held[1] < whole_states / 2, (held, whole_states)  # each part once, not once per checkpoint
    out = tmp_path / "run"
    shutil.copytree(whole, out)
    with closing(sqlite3.connect(out / "checkpoint" / "parts.db")) as db:
        db.execute("DELETE FROM parts WHERE key IN (SELECT key FROM parts LIMIT 3)")
        db.commit()
    with pytest.raises(Exception, match="is damaged.*cannot be resumed"):
        RunDir.open(out).checkpoints.latest()
    assert Parts(out / "nowhere.db").join({"a": [1, 2]}) == {"a": [1, 2]}  # a state without parts reads as it is


def test_parts_no_checkpoint_refers_to_are_removed_at_a_kept_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    start_run(config(hours=3, keep_every=2), out, progress=False)
    wanted, held = _parts_referred_and_held(out)
    assert wanted <= held  # every part a checkpoint refers to is there
    resume_run(out, hours=4, progress=False)  # hour 4 is kept (every 2): the hour-3 parts not needed go
    wanted, held = _parts_referred_and_held(out)
    assert wanted == held


def _parts_referred_and_held(out: Path) -> tuple[set[str], set[str]]:
    """The parts the run's checkpoints refer to (through parts that refer to parts), and the parts held."""
    from memstream.sim.run.parts import _refs

    states = [json.loads((p / "state.json").read_text()) for p in (out / "checkpoint").iterdir()
              if p.is_dir() and (p / "state.json").is_file()]
    with closing(sqlite3.connect(out / "checkpoint" / "parts.db")) as db:
        texts = dict(db.execute("SELECT key, json FROM parts"))
    wanted, todo = set(), [k for s in states for k in _refs(s)]
    while todo:
        k = todo.pop()
        if k not in wanted:
            wanted.add(k)
            todo += _refs(json.loads(texts[k]))
    return wanted, set(texts)
