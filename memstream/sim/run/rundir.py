"""A run directory and its one owner, :class:`RunDir`: every file name in it is spelled here and only here.

A run directory holds ``config.json`` (the settings, with the format's version), ``town.json`` (the
town with its resolved residents), ``streams.db`` (every agent's stream, owner-scoped),
``events.jsonl``, ``calls.db`` (the model-call cache), ``whispers.json`` (memories an experimenter
puts in agents' minds, given at their time), ``metrics.json`` and ``checkpoint/`` (``tNNN/`` folders
of a stream copy and ``state.json``, and ``LATEST`` naming the newest). While a run writes it,
``run.lock`` holds an OS lock (see :mod:`memstream.sim.run.dirlock`).

Why one owner: the commands that make, continue, fork, whisper to, measure, show and sweep runs all
read and write these files; with one type holding the names, the checks (the format's version, a
damaged checkpoint, one writer at a time) are made once, the same way for all.

Opened read-only (:meth:`RunDir.open`) a run directory takes no lock and writes nothing (whispers
excepted: they are appended under a short lock of their own, so that a running run hears them).
Opened writable (:meth:`RunDir.create`, :meth:`RunDir.open_writable`, :meth:`RunDir.create_fork`)
it holds the writer's lock until closed: a second writer is refused, naming the holder's pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memstream.errors import MemstreamError
from memstream.files import problem, read_json, read_text
from memstream.models import CachedChatModel, CachedEmbedder, ChatModel, Embedder
from memstream.sim.agents.agent import Agent
from memstream.sim.agents.whisper import Whisper, dump_whispers, parse_whispers
from memstream.sim.events import EventLog, read_events, truncate
from memstream.sim.run.config import FORMAT, FORMAT_NAME, FORMAT_VERSION, RunConfig
from memstream.sim.run.dirlock import Busy, DirLock, Section, live_holder, locked
from memstream.sim.town.world import Town
from memstream.stream import MemoryStream, Weights
from memstream.timeutil import from_epoch, to_epoch
from memstream.trust import Blocked

CONFIG, TOWN, STREAM, CALLS = "config.json", "town.json", "streams.db", "calls.db"
EVENTS, METRICS, WHISPERS, LOCK = "events.jsonl", "metrics.json", "whispers.json", "run.lock"
CHECKPOINTS, LATEST, STATE = "checkpoint", "LATEST", "state.json"
BLOCKED = "blocked.jsonl"
#: SQLite's files beside a database in WAL mode.
SIDECARS = ("-wal", "-shm")
#: What a checkpoint's state must hold to resume from.
STATE_KEYS = {"time", "agents", "conversations", "objects", "versions", "agent_steps", "events_lines", "usage"}
_POINT = re.compile(r"t\d+")


@dataclass(frozen=True)
class Checkpoint:
    """A whole checkpoint: the folder holding its stream copy, and the state it resumes from."""

    folder: Path
    state: dict[str, Any]
    time: datetime


class RunDir:
    """One run directory: its paths, settings and town, and every way its files are read or written."""

    def __init__(self, path: Path, config: RunConfig, town: Town, lock: DirLock | None = None) -> None:
        self.path, self.config, self.town = path, config, town
        self._lock = lock
        self._stream: MemoryStream | None = None
        self._whispers_seen: tuple[object, int] = (None, 0)  # (whispers.json's identity, the highest id given)
        self._section: Section | None = None  # the folder's short lock, kept open by a running run

    # -- opening ---------------------------------------------------------------------------------

    @staticmethod
    def is_run(path: str | Path) -> bool:
        """Whether ``path`` has been made a run directory (it has settings)."""
        return (Path(path) / CONFIG).is_file()

    @staticmethod
    def stream_file(path: str | Path) -> Path:
        """The stream file of the run directory ``path``."""
        return Path(path) / STREAM

    @staticmethod
    def run_of_stream(stream: str | Path) -> Path | None:
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

    @classmethod
    def open(cls, path: str | Path) -> RunDir:
        """The run directory at ``path``, read-only: no lock, nothing written (whispers apart)."""
        path = Path(path)
        config, town = _read_settings(path)
        return cls(path, config, town)

    @classmethod
    def open_writable(cls, path: str | Path) -> RunDir:
        """The run directory at ``path``, with the writer's lock held until :meth:`close`."""
        path = Path(path)
        _read_settings(path)  # a folder that is no run gets no lock file
        lock = _take(path, "wait for it to end, then resume it")
        try:
            config, town = _read_settings(path)
        except BaseException:
            lock.release()
            raise
        return cls(path, config, town, lock)

    @staticmethod
    def check_new(path: str | Path) -> None:
        """Refuse, before anything is made, a ``path`` that cannot be a new run directory."""
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise MemstreamError(f"--out {path} is a file; name a new or empty folder")
        holder = live_holder(path / LOCK)
        if holder is not None:
            raise MemstreamError(f"{path} is in use by a run writing it ({_who(holder.pid)}); choose another --out")
        if path.is_dir() and _holds_files(path):
            raise MemstreamError(f"{path} is not empty; resume it with --resume {path} or choose another --out")

    @classmethod
    def create(cls, path: str | Path, config: RunConfig, town: Town, whispers: list[Whisper] = ()) -> RunDir:
        """A new run directory at ``path`` (new or empty), writable, its settings, town and whispers written."""
        run = cls._claim(Path(path), config, town)
        try:
            run._write_new(config, town, list(whispers))
        except BaseException:
            run.close()
            raise
        return run

    @classmethod
    def create_fork(cls, path: str | Path, source: RunDir, point: Checkpoint, config: RunConfig) -> RunDir:
        """A new run directory at ``path`` that goes on from ``source``'s checkpoint ``point`` with ``config``
        (the call cache and event log come along; resuming cuts the log back to the checkpoint)."""
        run = cls._claim(Path(path), config, source.town)
        try:
            for name in (CALLS, EVENTS):
                if (source.path / name).is_file():
                    shutil.copyfile(source.path / name, run.path / name)
            shutil.copytree(point.folder, run._checkpoints / point.folder.name)
            _own_clock(run._checkpoints / point.folder.name / STATE)
            _write_atomic(run._checkpoints / LATEST, point.folder.name)
            run._write_new(config, source.town, source.whispers())
        except BaseException:
            run.close()
            raise
        return run

    @classmethod
    def _claim(cls, path: Path, config: RunConfig, town: Town) -> RunDir:
        """The writer's lock on a new or empty folder at ``path`` (made if need be)."""
        cls.check_new(path)
        made = not path.exists()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise MemstreamError(f"cannot create the run folder {path} ({e.strerror}); choose another --out") \
                from None
        lock = _take(path, "choose another --out", made=made)
        if _holds_files(path):  # another run took it and went away between our look and our lock
            _release_new(lock, path, made)
            raise MemstreamError(f"{path} is not empty; resume it with --resume {path} or choose another --out")
        return cls(path, config, town, lock)

    def _write_new(self, config: RunConfig, town: Town, whispers: list[Whisper]) -> None:
        """The settings written last: until they are there, no command takes the folder for a run."""
        _write_atomic(self.path / WHISPERS, dump_whispers(whispers))
        _write_atomic(self.path / TOWN, town.model_dump_json(indent=2))
        _write_atomic(self.path / CONFIG, config.model_dump_json(indent=2))

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._section is not None:
            self._section.close()
            self._section = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> RunDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the run is ---------------------------------------------------------------------------

    @property
    def agents(self) -> list[str]:
        return sorted(r.name for r in self.town.residents)

    @cached_property
    def end(self) -> datetime:
        """Where the run ended (its metrics say, when it was opened), else where it is meant to end."""
        metrics = self.metrics()
        if isinstance(metrics, dict) and "sim_time" in metrics:
            return datetime.fromisoformat(metrics["sim_time"])
        return self.config.end

    def stands_at(self) -> datetime:
        """Where the run stands: its latest checkpoint's time, or its start if it has none."""
        point = self.latest_checkpoint()
        return point.time if point else self.config.start

    def replace_config(self, config: RunConfig) -> None:
        """Replace ``config.json`` with ``config`` (validated by its type), whole: never half-written."""
        self._require_writer()
        _write_atomic(self.path / CONFIG, config.model_dump_json(indent=2))
        self.config = config

    # -- the stream, the call cache, the event log, the metrics --------------------------------------

    @property
    def stream_path(self) -> Path:
        return self.path / STREAM

    @property
    def stream(self) -> MemoryStream:
        """The run's stream, opened read-only (once; closed with the run directory)."""
        if self._stream is None:
            if not self.stream_path.is_file():
                raise MemstreamError(f"{self.path} has no {STREAM}; the run never started")
            self._stream = MemoryStream(self.stream_path, create=False, readonly=True)
        return self._stream

    def open_stream(self, embedder: Embedder | CachedEmbedder, weights: Weights) -> MemoryStream:
        """The run's stream for the simulation to write (the caller closes it)."""
        self._require_writer()
        return MemoryStream(self.stream_path, embedder, weights=weights)  # type: ignore[arg-type]

    def call_cache(self, model: ChatModel) -> CachedChatModel:
        """``model`` with the run's call cache: an answer given once is never paid for again."""
        return CachedChatModel(model, self.path / CALLS)

    def event_log(self, lines: int) -> EventLog:
        """The event log, appended to after its first ``lines`` lines (the caller closes it)."""
        self._require_writer()
        log = EventLog(self.path / EVENTS)
        log.lines = lines
        return log

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.path / EVENTS)

    def metrics(self) -> dict[str, Any] | None:
        path = self.path / METRICS
        return read_json(path, "run metrics") if path.is_file() else None

    def write_metrics(self, metrics: dict[str, Any]) -> None:
        self._require_writer()
        _write_atomic(self.path / METRICS, json.dumps(metrics, indent=2))

    @staticmethod
    def blocked_file(path: str | Path) -> Path:
        return Path(path) / BLOCKED

    def blocked(self) -> list[dict[str, Any]]:
        """What the write gate and the critic kept out of the agents' streams (none if the run has no log)."""
        path = self.path / BLOCKED
        if not path.is_file():
            return []
        out = []
        for n, line in enumerate(read_text(path, "log of blocked writes").splitlines(), 1):
            try:
                out.append(Blocked(**json.loads(line)).to_dict())
            except (ValueError, TypeError):
                raise MemstreamError(f"{path}:{n} is not a blocked write; resume the run (--resume) to write the "
                                     "log again from its checkpoint") from None
        return out

    def write_blocked(self, blocked: list[dict[str, Any]]) -> None:
        """The log of what was kept out, written whole (the checkpoint holds the same, so a resume agrees)."""
        self._require_writer()
        _write_atomic(self.path / BLOCKED, "".join(json.dumps(b) + "\n" for b in blocked))

    # -- whispers -----------------------------------------------------------------------------------

    @cached_property
    def _whispers_file(self) -> Path:
        return self.path / WHISPERS

    def whispers(self) -> list[Whisper]:
        path = self._whispers_file
        if not path.is_file():
            return []
        try:
            return parse_whispers(path.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            raise MemstreamError(f"{path} is damaged; restore it or remove the whispers that broke it") from None

    def add_whisper(self, agent: str, text: str, at: datetime | None = None) -> tuple[Whisper, int | None]:
        """Append a whisper for ``agent`` at ``at`` (default: the first time the run has not passed), and
        the pid of the run that will hear it while running (None if none runs).

        Under the folder's lock, so concurrent whispers are all kept, each with its own id; the time is
        checked against where the run stands at that moment: its latest checkpoint, or, while a run
        writes, the step it has reached (it reads new whispers before each step, under the same lock).
        """
        if agent not in {r.name for r in self.town.residents}:
            raise MemstreamError(f"unknown agent {agent!r} in {self.path}")
        with locked(self.path):
            holder = live_holder(self.path / LOCK)
            reached = from_epoch(float(holder.note)).astimezone(self.config.start.tzinfo) \
                if holder and _is_number(holder.note) else None
            if reached is not None:
                at = at or reached + timedelta(seconds=self.config.step_seconds)
                if at <= reached:
                    raise MemstreamError(f"the run {self.path} is running (pid {holder.pid}) and has reached "
                                         f"{reached.isoformat()}; whisper at a later time (its past is fixed)")
            else:
                now = self.stands_at()
                at = at or now
                if at < now:
                    raise MemstreamError(f"the run {self.path} stands at {now.isoformat()}; whisper at that time or "
                                         "later (its past is fixed; fork it from an earlier checkpoint to change that)")
            whispers = self.whispers()
            try:
                whisper = Whisper(id=max((w.id for w in whispers), default=0) + 1, agent=agent, text=text, at=at)
            except ValidationError as e:
                raise MemstreamError(f"bad whisper: {problem(e)}") from None
            _write_atomic(self.path / WHISPERS, dump_whispers([*whispers, whisper]))
        return whisper, holder.pid if holder else None

    def new_whispers(self, reached: datetime) -> list[Whisper]:
        """The whispers added since the last call (all of them at the first), for a running run about to
        simulate ``reached``: noted under the folder's lock, so a whisper for that time or earlier is
        refused from now on. Cheap when nothing changed (one ``stat``)."""
        assert self._lock is not None, "only the run's writer hears whispers"
        if self._section is None:
            self._section = Section(self.path)
        with self._section:
            self._lock.note(repr(reached.timestamp()))
            try:
                stat = os.stat(self._whispers_file)
                seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            except FileNotFoundError:
                seen = None
            if seen == self._whispers_seen[0]:
                return []
            new = [w for w in self.whispers() if w.id > self._whispers_seen[1]]
            self._whispers_seen = (seen, max((w.id for w in new), default=self._whispers_seen[1]))
            return new

    # -- checkpoints --------------------------------------------------------------------------------

    @property
    def _checkpoints(self) -> Path:
        return self.path / CHECKPOINTS

    def latest_checkpoint(self) -> Checkpoint | None:
        """The run's latest checkpoint, None if it has none; a damaged one is one clear error."""
        latest = self._checkpoints / LATEST
        if not latest.is_file():
            return None
        name = latest.read_text(encoding="utf-8", errors="replace").strip()
        point = self._checkpoints / name
        if not _POINT.fullmatch(name) or not point.is_dir():
            raise MemstreamError(f"{latest} points to a checkpoint that is not there ({name[:40]!r}); "
                                 f"{self._unresumable}")
        return self._checked(point)

    def checkpoint_times(self) -> list[datetime]:
        """The simulated times the run has whole checkpoints for (its fork points), oldest first."""
        if not self._checkpoints.is_dir():
            return []
        names = [p.name for p in self._checkpoints.iterdir() if p.is_dir() and _POINT.fullmatch(p.name)
                 and (p / STATE).is_file()]
        return sorted(datetime.fromtimestamp(int(n[1:]), self.config.start.tzinfo) for n in names)

    def checkpoint_at(self, at: datetime) -> Checkpoint:
        times = self.checkpoint_times()
        if at not in times:
            kept = ", ".join(t.isoformat() for t in times) or "none"
            raise MemstreamError(f"{self.path} has no checkpoint at {at.isoformat()} to fork from; its fork points: "
                                 f"{kept}")
        return self._checked(self._checkpoints / _point_name(to_epoch(at)))

    @property
    def _unresumable(self) -> str:
        return f"start it again with memstream run --out NEW (the run in {self.path} cannot be resumed)"

    def _checked(self, point: Path) -> Checkpoint:
        try:
            state = json.loads((point / STATE).read_text(encoding="utf-8"))
            missing = STATE_KEYS - set(state)
            if missing:
                raise ValueError(f"no {', '.join(sorted(missing))}")
            agents = state["agents"] if isinstance(state["agents"], list) else [None]
            problem = next((p for a in agents if (p := Agent.state_problem(a))), None)
            if problem:
                raise ValueError(problem)
            with closing(sqlite3.connect(f"file:{point / STREAM}?mode=ro", uri=True)) as db:
                if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                    raise ValueError("its stream copy fails SQLite's check")
        except (OSError, ValueError, sqlite3.DatabaseError) as e:
            raise MemstreamError(f"checkpoint {point} is damaged ({str(e)[:80]}); {self._unresumable}") from None
        return Checkpoint(point, state, datetime.fromtimestamp(state["time"], self.config.start.tzinfo))

    def restore(self, point: Checkpoint | None) -> None:
        """Put the stream and the event log back as they were at ``point`` (at the start if None)."""
        self._require_writer()
        for suffix in ("", *SIDECARS):
            (self.path / f"{STREAM}{suffix}").unlink(missing_ok=True)
        if point is None:  # stopped before the first checkpoint: start again from the beginning
            (self.path / EVENTS).unlink(missing_ok=True)
            return
        shutil.copyfile(point.folder / STREAM, self.path / STREAM)
        truncate(self.path / EVENTS, point.state["events_lines"])

    def write_checkpoint(self, tick: float, state: Callable[[], dict[str, Any]],
                         backup: Callable[[Path], None]) -> None:
        """Snapshot the stream (``backup`` writes a copy to the path it is given) and ``state()`` at ``tick``.

        The snapshot is written into a fresh folder that takes its name only when complete, and
        LATEST moves to it after that, so a kill at any point leaves the previous checkpoint whole.
        Older checkpoints are removed but those every ``keep_every`` simulated hours from the start
        (the fork points).
        """
        self._require_writer()
        root, name = self._checkpoints, _point_name(tick)
        latest = root / LATEST
        if latest.is_file() and latest.read_text().strip() == name:
            return  # this step is checkpointed already
        partial = root / f"{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        snapshot = state()
        backup(partial / STREAM)
        (partial / STATE).write_text(json.dumps(snapshot))
        shutil.rmtree(root / name, ignore_errors=True)
        partial.rename(root / name)
        _write_atomic(latest, name)
        for old in root.iterdir():
            if old.is_dir() and old.name != name and not self._kept(old.name):
                shutil.rmtree(old, ignore_errors=True)

    def _kept(self, name: str) -> bool:
        """Whether a checkpoint stays besides the latest: one every ``keep_every`` hours from the start."""
        start, every = int(self.config.start.timestamp()), self.config.keep_every * 3600
        return _POINT.fullmatch(name) is not None and (int(name[1:]) - start) % every == 0

    def _require_writer(self) -> None:
        if self._lock is None:
            raise RuntimeError(f"{self.path} is open read-only; open it writable to change it")


def _read_settings(path: Path) -> tuple[RunConfig, Town]:
    if not (path / CONFIG).is_file():
        raise MemstreamError(f"{path} is not a run directory (no {CONFIG}); make one with memstream run")
    try:
        data = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise MemstreamError(f"{path} is not a memstream run directory (unreadable {CONFIG})") from None
    _check_format(data, str(path))
    try:
        config = RunConfig.model_validate(data)
        town = Town.model_validate_json((path / TOWN).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        raise MemstreamError(f"{path} is not a memstream run directory (unreadable {CONFIG} or {TOWN})") from None
    return config, town


def _check_format(data: object, where: str) -> None:
    """Refuse, in one line naming the fix, a run directory's settings of another format or version."""
    found = data.get("format") if isinstance(data, dict) else None
    if found == FORMAT:
        return
    m = re.fullmatch(rf"{re.escape(FORMAT_NAME)}(?:/([1-9]\d{{0,5}}))?", found) if isinstance(found, str) else None
    if m is None:
        raise MemstreamError(f"{where} is not a memstream run directory (its {CONFIG} has format "
                             f"{str(found)[:40]!r}, not {FORMAT!r}); make one with memstream run")
    version = int(m.group(1) or 1)
    if version > FORMAT_VERSION:
        raise MemstreamError(f"{where} was written by a newer memstream (format {found}; this one reads "
                             f"{FORMAT}); upgrade memstream to use it")
    raise MemstreamError(f"{where} was written by an older memstream (format {found}; this one reads {FORMAT}); "
                         "use the memstream that made it, or make the run again with memstream run (the same "
                         "settings and seed give the same run)")


def _take(path: Path, fix: str, *, made: bool = False) -> DirLock:
    """The writer's lock of ``path``, or one line naming who holds it."""
    lock = DirLock(path / LOCK)
    try:
        lock.acquire()
    except Busy as busy:
        if made:
            _remove_if_empty(path)
        raise MemstreamError(f"{path} is in use by a run writing it ({_who(busy.pid)}); {fix}") from None
    return lock


def _who(pid: int) -> str:
    return f"pid {pid}" if pid else "another process"


def _release_new(lock: DirLock, path: Path, made: bool) -> None:
    lock.release()
    if made:
        _remove_if_empty(path)


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):  # not empty (another run's lock is in it), or gone
        path.rmdir()


def _holds_files(path: Path) -> bool:
    """Whether ``path`` holds anything but a lock file (a new run may take a folder with only that)."""
    return any(p.name != LOCK for p in path.iterdir())


def _point_name(tick: float) -> str:
    return f"t{int(tick)}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _write_atomic(path: Path, text: str) -> None:
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


def _own_clock(state_file: Path) -> None:
    """A fork's copy of its source's checkpoint, its wall time set to zero: the fork's metrics count the
    time the fork took, not the source's (which did the shared past), and the steps it took from there."""
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state.update(wall_s=0.0, own_steps_from=state["agent_steps"])
    _write_atomic(state_file, json.dumps(state))
