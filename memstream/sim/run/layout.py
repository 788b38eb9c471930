"""Where everything of a run directory lives: every file name in it is spelled here and only here.

A run directory holds ``config.json`` (the settings, with the format's version), ``town.json`` (the
town with its resolved residents), ``streams.db`` (every agent's stream, owner-scoped), ``design.db``
(with ``--design`` other than the stream: the design store every agent recalls from, and any file of the
design's own kind beside it), ``events.jsonl``, ``calls.db`` (the model-call cache), ``whispers.json``
(memories an experimenter puts in agents' minds, given at their time), ``metrics.json``, ``blocked.jsonl``
(what the write gate kept out) and ``checkpoint/`` (``tNNN/`` folders of a ``state.json`` holding the stream's
mark, ``parts.db`` the parts of those states each kept once, and ``LATEST`` naming the newest; a ``tNNN/`` written
before the marks holds a stream copy). While a run writes it, ``run.lock`` holds an OS lock
(:mod:`memstream.sim.run.dirlock`).
While a new run or fork is being made, ``.making`` marks it: a folder with the mark and no settings was
left by a maker that died, and the next run given it clears it.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from memstream.sim.run.config import FORMAT_NAME

CONFIG, TOWN, STREAM, CALLS = "config.json", "town.json", "streams.db", "calls.db"
EVENTS, METRICS, WHISPERS, LOCK = "events.jsonl", "metrics.json", "whispers.json", "run.lock"
CHECKPOINTS, LATEST, STATE = "checkpoint", "LATEST", "state.json"
#: The parts of the checkpoints' states, each kept once (:mod:`memstream.sim.run.parts`), in ``checkpoint/``.
PARTS = "parts.db"
BLOCKED = "blocked.jsonl"
#: The design store of a run on another memory than the stream (``--design``), its design's own file beside it.
DESIGN_STORE = "design.db"
#: The mark of a run folder being made (removed once its settings are written).
MAKING = ".making"
#: SQLite's files beside a database in WAL mode.
SIDECARS = ("-wal", "-shm")


class RunFiles:
    """The paths of the run directory at ``root``, whether or not it has been made."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def is_run(self) -> bool:
        """Whether the folder has been made a run directory (it has settings)."""
        return self.config.is_file()

    @property
    def half_made(self) -> bool:
        """Whether the folder was left half-made: its maker's mark, and no settings."""
        return self.making.is_file() and not self.is_run

    @property
    def making(self) -> Path:
        """The mark of a run folder being made."""
        return self.root / MAKING

    @property
    def config(self) -> Path:
        """The settings."""
        return self.root / CONFIG

    @property
    def town(self) -> Path:
        """The town with its resolved residents."""
        return self.root / TOWN

    @property
    def stream(self) -> Path:
        """Every agent's stream."""
        return self.root / STREAM

    @property
    def design_store(self) -> Path:
        """The design store (a run on a design other than the stream)."""
        return self.root / DESIGN_STORE

    def design_files(self) -> list[Path]:
        """The design store and the files beside it that are its (``design.db.facts``, ...), as they are now."""
        return sorted(p for p in self.root.glob(f"{DESIGN_STORE}*") if not p.name.endswith(SIDECARS))

    @property
    def calls(self) -> Path:
        """The model-call cache."""
        return self.root / CALLS

    @property
    def events(self) -> Path:
        """The event log."""
        return self.root / EVENTS

    @property
    def metrics(self) -> Path:
        """What the run reports."""
        return self.root / METRICS

    @property
    def whispers(self) -> Path:
        """The whispers, given at their time."""
        return self.root / WHISPERS

    @property
    def lock(self) -> Path:
        """The writer's os lock."""
        return self.root / LOCK

    @property
    def blocked(self) -> Path:
        """What the write gate and the critic kept out."""
        return self.root / BLOCKED

    @property
    def checkpoints(self) -> Path:
        """The checkpoints' folder."""
        return self.root / CHECKPOINTS

    @staticmethod
    def of_stream(stream: str | Path) -> Path | None:
        """The run directory ``stream`` is the stream file of, or None if it is not a run's."""
        stream = Path(stream).resolve()  # a link to a run's stream is that run's stream
        config = stream.parent / CONFIG
        if stream.name != STREAM or not config.is_file():
            return None
        try:
            found = json.loads(config.read_text(encoding="utf-8")).get("format")
        except (OSError, ValueError, AttributeError):
            return None
        return stream.parent if isinstance(found, str) and found.startswith(FORMAT_NAME) else None


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` whole: written to a temporary file of its own beside it, then renamed,
    so a crash leaves the old file and concurrent writers never share a temporary file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask's permissions, as any file
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def require_writer(writable: bool, root: Path) -> None:
    """A change to a run directory opened read-only is a programming error, not a user's."""
    if not writable:
        raise RuntimeError(f"{root} is open read-only; open it writable to change it")
