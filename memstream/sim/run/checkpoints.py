"""A run's checkpoints: written whole or not at all, found again, checked, and restored from.

A checkpoint is a ``tNNN/`` folder (NNN: the simulated epoch second it was taken at) holding ``state.json``:
everything the run needs to go on exactly, the stream's part of it a high-water mark (its last memory, its last
access, its meta values: :class:`~memstream.stream.StreamMark`). The stream is append-only, so the mark is
all a checkpoint needs of it: restoring rewinds the run's own stream file to the mark, and a checkpoint's cost
stays what the step changed, not what the run has remembered (a copy of the whole stream, as checkpoints
written before the marks hold, grew with the run; they are still restored from their copy). The agents' larger
values are parts kept once in ``parts.db`` beside the folders (:mod:`memstream.sim.run.parts`), so the state a
checkpoint writes is what changed too, not the day's plans so far. ``LATEST`` names the newest. Older ones are
removed but one every ``keep_every`` simulated hours from the start: a run's fork points.

A run on a design other than the stream also keeps a copy of its design store (and of the design's own file
beside it) in each checkpoint: a design's memory is not append-only (summaries, profiles and facts are
rewritten), so only a copy puts it back as it was. When such a checkpoint is pruned, its folder is stripped to
that copy rather than removed (its ``state.json`` first, so it is no fork point from then on): a *recall point*,
the design's memory as it stood at that simulated hour, which the measures ask what an agent remembered then
(:meth:`Checkpoints.recall_points`; the stream needs none: it is append-only, and a look back at an hour reads it
as the hour's mark had it, :meth:`~memstream.stream.MemoryStream.as_it_stood`). Its cost is a design store per
simulated hour, said in docs/experiments.md: not incremental yet (a design would have to log its changes).
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import memstream.sqlite as sqlite
from memstream.errors import MemstreamError
from memstream.sim.agents import Agent
from memstream.sim.events import truncate
from memstream.sim.run.config import RunConfig
from memstream.sim.run.layout import (
    DESIGN_STORE,
    LATEST,
    PARTS,
    SIDECARS,
    STATE,
    STREAM,
    RunFiles,
    require_writer,
    write_atomic,
)
from memstream.sim.run.parts import Parts
from memstream.stream import StreamMark, rewind_stream
from memstream.timeutil import to_epoch

#: What a checkpoint's state must hold to resume from.
STATE_KEYS = {"time", "agents", "conversations", "objects", "versions", "agent_steps", "events_lines", "usage"}
_POINT = re.compile(r"t\d+")


@dataclass(frozen=True)
class Checkpoint:
    """A whole checkpoint: the folder holding its stream copy, and the state it resumes from."""

    folder: Path
    state: dict[str, Any]
    time: datetime

    @property
    def copied(self) -> bool:
        """Whether the checkpoint holds a whole copy of the stream (as written before format 3)."""
        return (self.folder / STREAM).is_file()


class Checkpoints:
    """The checkpoints of one run directory (changed only by its writer)."""

    def __init__(self, files: RunFiles, config: RunConfig, *, writable: bool) -> None:
        self.files, self.config, self.writable = files, config, writable
        self.root = files.checkpoints
        self.parts = Parts(self.root / PARTS)

    def latest(self) -> Checkpoint | None:
        """The run's latest checkpoint, None if it has none; a damaged one is one clear error."""
        latest = self.root / LATEST
        if not latest.is_file():
            return None
        name = latest.read_text(encoding="utf-8", errors="replace").strip()
        point = self.root / name
        if not _POINT.fullmatch(name) or not point.is_dir():
            raise MemstreamError(f"{latest} points to a checkpoint that is not there ({name[:40]!r}); "
                                 f"{self._unresumable}")
        return self._checked(point)

    def times(self) -> list[datetime]:
        """The simulated times the run has whole checkpoints for (its fork points), oldest first."""
        if not self.root.is_dir():
            return []
        names = [p.name for p in self.root.iterdir() if p.is_dir() and _POINT.fullmatch(p.name)
                 and (p / STATE).is_file()]
        return sorted(datetime.fromtimestamp(int(n[1:]), self.config.start.tzinfo) for n in names)

    def at(self, at: datetime) -> Checkpoint:
        """The checkpoint taken at ``at``, or one line listing the fork points there are."""
        times = self.times()
        if at not in times:
            kept = ", ".join(t.isoformat() for t in times) or "none"
            raise MemstreamError(f"{self.files.root} has no checkpoint at {at.isoformat()} to fork from; its fork "
                                 f"points: {kept}")
        return self._checked(self.root / _point_name(to_epoch(at)))

    def mark_at(self, at: datetime) -> StreamMark | None:
        """The stream's mark in the checkpoint taken at ``at``, None if the run kept none there or it holds a
        stream copy (read alone: a look back at the hour needs nothing else of the checkpoint)."""
        state = self.root / _point_name(to_epoch(at)) / STATE
        try:
            return StreamMark.from_dict(json.loads(state.read_text(encoding="utf-8")).get("stream"))
        except (OSError, ValueError, AttributeError):
            return None

    def restore(self, point: Checkpoint | None) -> None:
        """Put the stream and the event log back as they were at ``point`` (at the start if None)."""
        require_writer(self.writable, self.files.root)
        if point is None or point.copied:  # no checkpoint yet, or one holding a whole copy of the stream
            for suffix in ("", *SIDECARS):
                (self.files.root / f"{STREAM}{suffix}").unlink(missing_ok=True)
        if point is None:  # stopped before the first checkpoint: start again from the beginning
            self._restore_design(None)
            self.files.events.unlink(missing_ok=True)
            return
        if point.copied:
            shutil.copyfile(point.folder / STREAM, self.files.stream)
        else:
            try:
                rewind_stream(self.files.stream, StreamMark.from_dict(point.state["stream"]))
            except (ValueError, MemstreamError) as e:
                raise MemstreamError(f"checkpoint {point.folder} does not match {self.files.stream} "
                                     f"({str(e)[:80]}); {self._unresumable}") from None
        self._restore_design(point.folder)
        truncate(self.files.events, point.state["events_lines"])

    def _restore_design(self, folder: Path | None) -> None:
        """The design store as the checkpoint in ``folder`` holds it (none at all if it holds none, or at the start)."""
        for path in self.files.design_files():
            for suffix in ("", *SIDECARS):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        if folder is not None:
            for copy in sorted(folder.glob(f"{DESIGN_STORE}*")):
                shutil.copyfile(copy, self.files.root / copy.name)

    def write(self, tick: float, state: Callable[[], dict[str, Any]]) -> None:
        """Checkpoint ``state()`` at ``tick`` (its ``stream`` the stream's mark, taken once the stream has
        written what it holds).

        The snapshot is written into a fresh folder that takes its name only when complete, and
        LATEST moves to it after that, so a kill at any point leaves the previous checkpoint whole.
        """
        require_writer(self.writable, self.files.root)
        root, name = self.root, _point_name(tick)
        latest = root / LATEST
        if latest.is_file() and latest.read_text().strip() == name:
            return  # this step is checkpointed already
        partial = root / f"{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        taken = state()
        agents, _ = self.parts.split(taken["agents"])  # committed before the state that refers to them
        text = json.dumps({**taken, "agents": agents})
        (partial / STATE).write_text(text)
        for path in self.files.design_files():  # none on the stream: its mark in the state is all it needs
            _backup(path, partial / path.name)
        shutil.rmtree(root / name, ignore_errors=True)
        partial.rename(root / name)
        write_atomic(latest, name)
        for old in root.iterdir():
            if old.is_dir() and old.name != name and not self._kept(old.name):
                if _POINT.fullmatch(old.name) and any(old.glob(f"{DESIGN_STORE}*")):
                    _strip_to_design(old)  # a recall point: the design's memory at that hour
                else:
                    shutil.rmtree(old, ignore_errors=True)
        if self._kept(name):  # the parts no checkpoint left refers to, once every keep_every hours
            self.parts.keep_only(json.loads((p / STATE).read_text(encoding="utf-8")) for p in root.iterdir()
                                 if p.is_dir() and _POINT.fullmatch(p.name) and (p / STATE).is_file())

    def recall_points(self) -> dict[datetime, Path]:
        """Every simulated time the run holds its design store as it stood (a checkpoint's copy, kept or stripped
        to it), oldest first: the copy there. None on the stream, whose own file is its memory at any time."""
        if not self.root.is_dir():
            return {}
        found = {datetime.fromtimestamp(int(p.name[1:]), self.config.start.tzinfo): p / DESIGN_STORE
                 for p in self.root.iterdir() if p.is_dir() and _POINT.fullmatch(p.name)
                 and (p / DESIGN_STORE).is_file()}
        return dict(sorted(found.items()))

    def adopt(self, point: Checkpoint) -> Path:
        """Make another run's checkpoint ``point`` this (new) run's latest, its wall clock its own: a fork. Its
        folder here."""
        copy = self.root / point.folder.name
        _copy_without_modes(point.folder, copy)
        write_atomic(copy / STATE, json.dumps(_own_clock(point.state)))  # whole: the fork has no parts of its own
        write_atomic(self.root / LATEST, point.folder.name)
        return copy

    def _kept(self, name: str) -> bool:
        """Whether a checkpoint stays besides the latest: one every ``keep_every`` hours from the start."""
        start, every = int(self.config.start.timestamp()), self.config.keep_every * 3600
        return _POINT.fullmatch(name) is not None and (int(name[1:]) - start) % every == 0

    @property
    def _unresumable(self) -> str:
        return f"start it again with memstream run --out NEW (the run in {self.files.root} cannot be resumed)"

    def _checked(self, point: Path) -> Checkpoint:
        try:
            state = json.loads((point / STATE).read_text(encoding="utf-8"))
            missing = STATE_KEYS - set(state) if isinstance(state, dict) else STATE_KEYS
            if missing:
                raise ValueError(f"no {', '.join(sorted(missing))}")
            state["agents"] = self.parts.join(state["agents"])
            agents = state["agents"] if isinstance(state["agents"], list) else [None]
            problem = next((p for a in agents if (p := Agent.state_problem(a))), None)
            if problem:
                raise ValueError(problem)
            if (point / STREAM).is_file():
                with closing(sqlite3.connect(f"file:{point / STREAM}?mode=ro", uri=True)) as db:
                    if sqlite.integrity(db, quick=True):
                        raise ValueError("its stream copy fails SQLite's check")
            else:
                StreamMark.from_dict(state.get("stream"))
        except (OSError, ValueError, sqlite3.DatabaseError) as e:
            raise MemstreamError(f"checkpoint {point} is damaged ({str(e)[:80]}); {self._unresumable}") from None
        return Checkpoint(point, state, datetime.fromtimestamp(state["time"], self.config.start.tzinfo))


def _strip_to_design(folder: Path) -> None:
    """A pruned checkpoint's folder left holding only its design store copy: its state first (no longer a fork
    point, so a strip cut short leaves no half checkpoint to resume or fork from)."""
    (folder / STATE).unlink(missing_ok=True)
    for entry in folder.iterdir():
        if not entry.name.startswith(DESIGN_STORE):
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def _backup(source: Path, copy: Path) -> None:
    """A SQLite file copied consistent at one commit (its write-ahead log folded in), by SQLite's online backup."""
    with closing(sqlite3.connect(source)) as db, closing(sqlite3.connect(copy)) as target:
        db.backup(target)


def _copy_without_modes(source: Path, copy: Path) -> None:
    """``source`` copied to ``copy`` with the permissions new files get: a copy of a write-protected run is
    the fork's own, to write in and prune."""
    copy.mkdir(parents=True)
    for entry in source.iterdir():
        if entry.is_dir():
            _copy_without_modes(entry, copy / entry.name)
        else:
            shutil.copyfile(entry, copy / entry.name)


def _point_name(tick: float) -> str:
    return f"t{int(tick)}"


def _own_clock(state: dict[str, Any]) -> dict[str, Any]:
    """A fork's copy of its source's checkpoint state, its wall time set to zero: the fork's metrics count the
    time the fork took, not the source's (which did the shared past), and the steps it took from there."""
    return {**state, "wall_s": 0.0, "own_steps_from": state["agent_steps"]}
