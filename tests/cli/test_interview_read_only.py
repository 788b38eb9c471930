"""An interview that leaves the agent as it was only reads, so it works on read-only media (#45)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest

from memstream.cli import main


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.endswith(("-shm", "-wal"))}


@pytest.mark.slow
def test_interview_on_read_only_media_answers_and_writes_nothing(tmp_path: Path, capsys, monkeypatch) -> None:
    from memstream.sim.run.launch import RunConfig, start_run

    run = tmp_path / "run"
    start_run(RunConfig(agents=2, start=datetime.fromisoformat("2023-02-13T06:00:00-08:00"), hours=0.1,
                        embedder="hash:64"), run, progress=False)
    agent = json.loads((run / "town.json").read_text())["residents"][0]["name"]
    before = digest(run)
    monkeypatch.setenv("MEMSTREAM_READ_IMMUTABLE", "1")  # read-only media (root ignores file permissions)
    assert main(["interview", str(run), "What are you doing today?", "--agent", agent]) == 0
    out, err = capsys.readouterr()
    assert agent in out and "Traceback" not in err, err
    assert digest(run) == before
