"""Making a run folder leaves no dead end: an --out inside another run is refused, a maker killed at any point
leaves a folder the next run clears in one line, a fork that fails leaves nothing, a bad model spec or a
setting a resume would ignore is refused before anything is written, and a lock file deleted by hand lets
no second writer in."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import stat
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.errors import MemstreamError
from memstream.sim import RunConfig, RunDir, start_run
from memstream.sim.run import checkpoints
from memstream.sim.run.dirlock import DirLock
from memstream.sim.run.layout import LOCK, MAKING
from memstream.sim.run.rundir import check_new

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
RUN = ["--agents", "4", "--seed", "3", "--embedder", "hash", "--start", START.isoformat(), "--hours", "1.1"]


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A small finished run with a checkpoint, copied by the tests that change one."""
    out = tmp_path_factory.mktemp("made") / "run"
    start_run(RunConfig(agents=4, start=START, hours=1.1, embedder="hash", seed=3), out, progress=False)
    return out


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


# -- an --out inside a run ---------------------------------------------------------------------------

@pytest.mark.parametrize("inside", ["checkpoint", "checkpoint/mine", "elsewhere/deeper"])
@pytest.mark.parametrize("fork", [False, True])
def test_an_out_inside_a_run_is_refused_with_nothing_written(made: Path, tmp_path: Path, capsys, inside: str,
                                                             fork: bool) -> None:
    source = tmp_path / "source"
    shutil.copytree(made, source)
    before = files(source)
    out = source / inside
    argv = ["run", "--fork", str(source), "--out", str(out)] if fork else ["run", *RUN, "--out", str(out)]
    assert main(argv) == 2
    assert "inside the run directory" in one_line(capsys)
    assert files(source) == before and (out.exists() is (inside == "checkpoint"))


# -- a maker killed, or failing, while it makes the folder ----------------------------------------------

DIE_AT = """
import os, shutil, signal, sys
what, n = sys.argv[1], int(sys.argv[2])
module, name = (os, "replace") if what == "replace" else (shutil, "copyfile")
real, count = getattr(module, name), [0]
def dying(*args, **kwargs):
    count[0] += 1
    if count[0] == n:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
setattr(module, name, dying)
from memstream.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("fork", "what", "n"), [(False, "replace", 1), (False, "replace", 2), (False, "replace", 3),
                                                (True, "copyfile", 1), (True, "copyfile", 2), (True, "replace", 2)])
def test_a_maker_killed_while_making_leaves_what_the_next_run_clears_in_one_line(
        made: Path, tmp_path: Path, capsys, caplog, fork: bool, what: str, n: int) -> None:
    out = tmp_path / "new"
    argv = ["run", "--fork", str(made), "--out", str(out)] if fork else ["run", *RUN, "--out", str(out)]
    killed = subprocess.run([sys.executable, "-c", DIE_AT, what, str(n), *argv], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (out / MAKING).is_file() and not (out / "config.json").exists()  # killed half-way, as meant
    assert main(["run", "--resume", str(out)]) == 2
    assert "half-made" in one_line(capsys)
    with caplog.at_level(logging.WARNING):
        assert main(argv) == 0
    said = [r.getMessage() for r in caplog.records if "half-made" in r.getMessage()]
    assert len(said) == 1 and "cleared it" in said[0]
    assert not (out / MAKING).exists() and RunDir.open(out).stream.count() > 0


def test_a_fork_that_cannot_write_leaves_nothing(made: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    def refused(state_file: Path) -> None:
        raise PermissionError(13, "Permission denied", str(state_file))

    monkeypatch.setattr(checkpoints, "_own_clock", refused)  # as a write-protected copy refused it
    out = tmp_path / "fork"
    assert main(["run", "--fork", str(made), "--out", str(out)]) == 2
    assert "nothing was written" in one_line(capsys)
    assert not out.exists()


def test_a_fork_of_a_write_protected_run_owns_its_copies(made: Path, tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(made, source)
    src = RunDir.open(source)
    point = src.checkpoints.latest()
    assert point is not None
    os.chmod(point.folder, 0o555)
    try:
        RunDir.create_fork(tmp_path / "fork", src, point, src.config).close()
    finally:
        os.chmod(point.folder, 0o755)
    copied = tmp_path / "fork" / "checkpoint" / point.folder.name
    assert copied.stat().st_mode & stat.S_IWUSR  # the fork's to write in and prune


# -- refused before anything is made -----------------------------------------------------------------

@pytest.mark.parametrize("flag", [["--llm", "bogus"], ["--llm", "openai:"], ["--embedder", "bogus"],
                                  ["--embedder", "hash:x"], ["--embedder", "hash:²"]])
def test_a_bad_model_spec_is_refused_before_the_folder_is_made(tmp_path: Path, capsys, flag: list[str]) -> None:
    out = tmp_path / "new"
    assert main(["run", *RUN, *flag, "--out", str(out)]) == 2
    assert flag[1] in one_line(capsys)
    assert not out.exists()


@pytest.mark.parametrize("flag", [["--seed", "4"], ["--seed", "0"], ["--agents", "2"], ["--embedder", "hash"],
                                  ["--llm", "offline"], ["--step-seconds", "10"], ["--start", START.isoformat()],
                                  ["--town", "town.yaml"]])
def test_resume_refuses_a_setting_it_would_ignore(made: Path, tmp_path: Path, capsys, flag: list[str]) -> None:
    out = tmp_path / "run"
    shutil.copytree(made, out)
    before = files(out)
    assert main(["run", "--resume", str(out), *flag]) == 2
    err = one_line(capsys)
    assert f"drop {flag[0]}" in err
    assert files(out) == before


def test_resume_still_takes_hours_and_max_calls(made: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(made, out)
    assert main(["run", "--resume", str(out), "--hours", "1.2", "--max-calls", "50"]) == 0


# -- a lock file deleted by hand ---------------------------------------------------------------------

def test_a_lock_file_deleted_by_hand_lets_no_second_writer_in(made: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(made, out)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from memstream.sim import RunDir; "
                               "RunDir.open_writable(sys.argv[1]); print('held', flush=True); time.sleep(600)",
                               str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        (out / LOCK).unlink()
        with pytest.raises(MemstreamError, match="in use by a run writing it"):
            RunDir.open_writable(out)
        with pytest.raises(MemstreamError, match="in use by a run writing it"):
            check_new(out)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    RunDir.open_writable(out).close()  # the holder gone, the folder is free


def test_a_holder_makes_its_deleted_lock_file_again_at_its_next_note(tmp_path: Path) -> None:
    lock = DirLock(tmp_path / LOCK)
    lock.acquire()
    try:
        (tmp_path / LOCK).unlink()
        lock.note("12.5")
        assert (tmp_path / LOCK).read_text().split() == [str(os.getpid()), "12.5"]
        with pytest.raises(Exception, match="held by"):
            DirLock(tmp_path / LOCK).acquire(wait_s=0)
    finally:
        lock.release()
    assert not (tmp_path / LOCK).exists()
