"""A run directory, opened: its settings and town, its stream and call cache, and the small owners of its
files (:class:`~memstream.sim.run.checkpoints.Checkpoints`, the whisper
:class:`~memstream.sim.run.mailbox.Mailbox`, the :class:`~memstream.sim.run.records.Records`); where each file
lives is :mod:`memstream.sim.run.layout`'s.

Why one door: the commands that make, continue, fork, whisper to, measure, show and sweep runs all read and
write these files; opened one way, the checks (the format's version, a damaged checkpoint, one writer at a
time) are made once, the same way for all.

Opened read-only (:meth:`RunDir.open`) a run directory takes no lock and writes nothing (whispers
excepted: they are appended under a short lock of their own, so that a running run hears them).
Opened writable (:meth:`RunDir.create`, :meth:`RunDir.open_writable`, :meth:`RunDir.create_fork`)
it holds the writer's lock until closed: a second writer is refused, naming the holder's pid.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path

from memstream.errors import MemstreamError
from memstream.models import CachedChatModel, CachedEmbedder, ChatModel, Embedder
from memstream.sim.agents import Whisper
from memstream.sim.memory import STREAM_DESIGN, DesignMemory
from memstream.sim.run.checkpoints import Checkpoint, Checkpoints
from memstream.sim.run.config import FORMAT, RunConfig
from memstream.sim.run.dirlock import Busy, DirLock, live_holder
from memstream.sim.run.layout import CALLS, EVENTS, LOCK, MAKING, STREAM, RunFiles, require_writer, write_atomic
from memstream.sim.run.mailbox import Mailbox
from memstream.sim.run.records import Records
from memstream.sim.run.settings import read_settings, written_format
from memstream.sim.town import Town
from memstream.stream import MemoryStream, Weights, copy_stream

__all__ = ["Checkpoint", "RunDir"]

log = logging.getLogger(__name__)


class RunDir:
    """One run directory: its settings, town and stream, and the owners of its other files."""

    def __init__(self, path: Path, config: RunConfig, town: Town, lock: DirLock | None = None) -> None:
        self.path, self.config, self.town = path, config, town
        self.files = RunFiles(path)
        self._lock = lock
        self._stream: MemoryStream | None = None
        self._memories: dict[Path, DesignMemory] = {}
        self._recall_embedder: CachedEmbedder | None = None  # the recall points' one embedder (see memory_at)
        writable = lock is not None
        self.checkpoints = Checkpoints(self.files, config, writable=writable)
        self.mailbox = Mailbox(self.files, config, town, self.stands_at, lock)
        self.records = Records(self.files, writable=writable)

    # -- opening and closing -----------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path) -> RunDir:
        """The run directory at ``path``, read-only: no lock, nothing written (whispers apart)."""
        path = Path(path)
        config, town = read_settings(RunFiles(path))
        return cls(path, config, town)

    @classmethod
    def open_writable(cls, path: str | Path) -> RunDir:
        """The run directory at ``path``, with the writer's lock held until :meth:`close`."""
        path = Path(path)
        read_settings(RunFiles(path))  # a folder that is no run gets no lock file
        lock = _take(path, "wait for it to end, then resume it")
        try:
            config, town = read_settings(RunFiles(path))
            if written_format(RunFiles(path)) != FORMAT:  # an older version: the current one from now on, so
                # that an older memstream refuses the checkpoints this one writes rather than misreading them
                write_atomic(RunFiles(path).config, config.model_dump_json(indent=2))
        except BaseException:
            lock.release()
            raise
        return cls(path, config, town, lock)

    @classmethod
    def create(cls, path: str | Path, config: RunConfig, town: Town, whispers: Sequence[Whisper] = ()) -> RunDir:
        """A new run directory at ``path`` (new or empty), writable, its settings, town and whispers written."""
        path = Path(path)
        made = not path.exists()
        run = cls(path, config, town, claim_new(path))
        try:
            run._write_new(config, town, list(whispers))
        except BaseException:
            run._unmake(made)
            raise
        return run

    @classmethod
    def create_fork(cls, path: str | Path, source: RunDir, point: Checkpoint, config: RunConfig,
                    prepare: Callable[[RunDir, Path], None] | None = None) -> RunDir:
        """A new run directory at ``path`` that goes on from ``source``'s checkpoint ``point`` with ``config``
        (the call cache and event log come along; resuming cuts the log back to the checkpoint).

        The stream is copied whole (SQLite's online backup, so a source still running is copied at one
        commit), then rewound to the point on resume: fork and source both go on appending, each to a file of
        its own; sharing the past between two files would need every read to join them. ``prepare`` is given the
        fork and its copy of the checkpoint's folder before the settings are written (a fork into another design
        builds its design store there); if it fails, nothing of the fork is left."""
        path = Path(path)
        made = not path.exists()
        run = cls(path, config, source.town, claim_new(path))
        try:
            for name in (CALLS, EVENTS):
                if (source.path / name).is_file():
                    shutil.copyfile(source.path / name, run.path / name)
            if not point.copied:  # the fork's own stream: the source's, rewound to the point when it resumes
                _copy_stream_of(source, run)
            adopted = run.checkpoints.adopt(point)
            if prepare is not None:
                prepare(run, adopted)
            run._write_new(config, source.town, source.mailbox.whispers())
        except OSError as e:  # a write-protected source or a full disk: nothing of the fork is left
            run._unmake(made)
            raise MemstreamError(f"cannot fork {source.path} into {path} ({e.strerror or e}); nothing was "
                                 "written") from None
        except BaseException:
            run._unmake(made)
            raise
        return run

    def _write_new(self, config: RunConfig, town: Town, whispers: list[Whisper]) -> None:
        """The settings written last: until they are there, no command takes the folder for a run (and the
        maker's mark goes after them, so a folder with the mark and no settings was left half-made)."""
        self.mailbox.write(whispers)
        write_atomic(self.files.town, town.model_dump_json(indent=2))
        write_atomic(self.files.config, config.model_dump_json(indent=2))
        self.files.making.unlink(missing_ok=True)

    def _unmake(self, made: bool) -> None:
        """Take back a new run folder whose making failed: its files, and the folder if it was made for it."""
        _clear(self.path)
        self.close()
        if made:
            _remove_if_empty(self.path)

    def close(self) -> None:
        for memory in self._memories.values():
            memory.close()
        self._memories.clear()
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        self.mailbox.close()
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
        metrics = self.records.metrics()
        if isinstance(metrics, dict) and "sim_time" in metrics:
            return datetime.fromisoformat(metrics["sim_time"])
        return self.config.end

    def stands_at(self) -> datetime:
        """Where the run stands: its latest checkpoint's time, or its start if it has none."""
        point = self.checkpoints.latest()
        return point.time if point else self.config.start

    def replace_config(self, config: RunConfig) -> None:
        """Replace ``config.json`` with ``config`` (validated by its type), whole: never half-written."""
        require_writer(self._lock is not None, self.path)
        write_atomic(self.files.config, config.model_dump_json(indent=2))
        self.config = self.checkpoints.config = self.mailbox.config = config

    # -- the stream and the call cache ---------------------------------------------------------------

    @property
    def stream(self) -> MemoryStream:
        """The run's stream, opened read-only (once; closed with the run directory)."""
        if self._stream is None:
            if not self.files.stream.is_file():
                raise MemstreamError(f"{self.path} has no {STREAM}; the run never started")
            self._stream = MemoryStream(self.files.stream, create=False, readonly=True)
        return self._stream

    def memory_at(self, at: datetime | None = None) -> tuple[datetime, MemoryStream] | None:
        """What the agents recall, read-only, as it stood at ``at`` (default: where the run ended), and the time it
        stands at: what a measure, an interview or the view asks "what does this agent remember".

        On the stream that is the run's one stream file read as it stood at ``at``
        (:meth:`~memstream.stream.MemoryStream.as_it_stood`: what the checkpoint at ``at`` marked, its later
        memories left out and its later accesses not counted in recency; no copy, nothing rewound). On another
        design it is the design store as the run's latest recall point at or before ``at``
        held it (:meth:`~memstream.sim.run.checkpoints.Checkpoints.recall_points`: every simulated hour, and
        where the run stopped), over the record; None before the first (a fork's past is its source's)."""
        at = self.end if at is None else at
        if self.config.design == STREAM_DESIGN:
            # the mark of the checkpoint kept there, if one was; every hour's checkpoint marked what was made by then
            return at, self.stream.as_it_stood(at, self.checkpoints.mark_at(at))
        points = [(t, p) for t, p in self.checkpoints.recall_points().items() if t <= at]
        if not points:
            return None
        stands, store = points[-1]
        if store not in self._memories:
            self.stream  # noqa: B018 -- the record must be there (one clear line if the run never started)
            if self._recall_embedder is None:  # one cache for every hour's store: each holds mostly the same
                self._recall_embedder = CachedEmbedder(self.stream.embedder)  # texts (the same vectors)
            self._memories[store] = DesignMemory.read_only(
                self.files.stream, self._recall_embedder, design=self.config.design, store=store,
                recall_tokens=self.config.recall_tokens)
        return stands, self._memories[store]

    def memory_files(self) -> list[Path]:
        """The files that hold the agents' memory (what it costs to keep): the stream file on the stream; on a
        design its store and the design's own files (the stream file is then the run's record, as on every run)."""
        return [self.files.stream] if self.config.design == STREAM_DESIGN else self.files.design_files()

    def open_stream(self, embedder: Embedder | CachedEmbedder, weights: Weights,
                    chat: ChatModel | None = None) -> MemoryStream:
        """The agents' memory for the simulation to write (the caller closes it): the run's stream, or, for a run
        on another design, a :class:`~memstream.sim.memory.DesignMemory` over the design store in the run
        directory (its model calls answered by ``chat``)."""
        require_writer(self._lock is not None, self.path)
        if self.config.design == STREAM_DESIGN:
            return MemoryStream(self.files.stream, embedder, weights=weights)
        return DesignMemory.open(self.files.stream, embedder, weights=weights, design=self.config.design,
                                 store=self.files.design_store, settings=self.config.design_config, chat=chat,
                                 recall_tokens=self.config.recall_tokens)

    def call_cache(self, model: ChatModel, *, read_only: bool = False) -> CachedChatModel:
        """``model`` with the run's call cache: an answer given once is never paid for again. ``read_only``
        (a command that only reads, on media it cannot write): the cache answers what it holds, stores nothing."""
        return CachedChatModel(model, self.files.calls, mode="read" if read_only else "record")


def _copy_stream_of(source: RunDir, fork: RunDir) -> None:
    """The source's stream as the fork's: its files as they lie when no run writes it (nothing of the source
    is touched, not even SQLite's ``-shm``), else SQLite's online backup, consistent at one commit."""
    if live_holder(source.files.lock) is not None:
        copy_stream(source.files.stream, fork.files.stream)
        return
    for suffix in ("", "-wal"):
        if Path(f"{source.files.stream}{suffix}").is_file():
            shutil.copyfile(f"{source.files.stream}{suffix}", f"{fork.files.stream}{suffix}")


# -- claiming a folder for a new run ------------------------------------------------------------------

def check_new(path: str | Path) -> None:
    """Refuse, before anything is made, a ``path`` that cannot be a new run directory (a folder left
    half-made by a maker that died can: :func:`claim_new` clears it)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise MemstreamError(f"--out {path} is a file; name a new or empty folder")
    outer = run_around(path)
    if outer is not None:
        raise MemstreamError(f"--out {path} is inside the run directory {outer}, whose checkpoints would delete "
                             "it; choose a folder outside it")
    holder = live_holder(path / LOCK)
    if holder is not None:
        raise MemstreamError(f"{path} is in use by a run writing it ({_who(holder.pid)}); choose another --out")
    if path.is_dir() and _holds_files(path) and not RunFiles(path).half_made:
        raise MemstreamError(f"{path} is not empty; resume it with --resume {path} or choose another --out")


def run_around(path: Path) -> Path | None:
    """The run directory (made or being made) that ``path`` lies inside, if any."""
    for folder in Path(os.path.abspath(path)).parents:
        files = RunFiles(folder)
        if files.is_run or files.making.is_file():
            return folder
    return None


def claim_new(path: Path) -> DirLock:
    """The writer's lock on a new or empty folder at ``path`` (made if need be), marked as being made; a
    folder a dead maker left half-made is cleared first, said in one line."""
    check_new(path)
    made = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MemstreamError(f"cannot create the run folder {path} ({e.strerror}); choose another --out") from None
    lock = _take(path, "choose another --out", made=made)
    try:
        if RunFiles(path).half_made:
            _clear(path)
            log.warning("%s was a run folder left half-made (its maker was stopped before writing its settings); "
                        "cleared it to make the run again", path)
        if _holds_files(path):  # another run took it and went away between our look and our lock
            raise MemstreamError(f"{path} is not empty; resume it with --resume {path} or choose another --out")
        try:
            RunFiles(path).making.touch()
        except OSError as e:
            raise MemstreamError(f"cannot write in the run folder {path} ({e.strerror}); choose another "
                                 "--out") from None
    except BaseException:
        lock.release()
        if made:
            _remove_if_empty(path)
        raise
    return lock


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


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):  # not empty (another run's lock is in it), or gone
        path.rmdir()


def _clear(path: Path) -> None:
    """Everything in the run folder ``path`` but its lock, write-protected copies included; the maker's mark
    last, so a clear cut short is finished by the next."""
    for entry in sorted(path.iterdir(), key=lambda p: p.name == MAKING):
        if entry.name == LOCK:
            continue
        if entry.is_dir() and not entry.is_symlink():
            _open_up(entry)
            shutil.rmtree(entry)
        else:
            entry.unlink(missing_ok=True)


def _open_up(folder: Path) -> None:
    """``folder`` and the folders in it writable by their owner, so that their files can be removed."""
    owner = stat.S_IRWXU
    os.chmod(folder, folder.stat().st_mode | owner)
    for root, dirs, _ in os.walk(folder):
        for name in dirs:
            sub = Path(root, name)
            if not sub.is_symlink():
                os.chmod(sub, sub.stat().st_mode | owner)


def _holds_files(path: Path) -> bool:
    """Whether ``path`` holds anything but a lock file (a new run may take a folder with only that)."""
    return any(p.name != LOCK for p in path.iterdir())
