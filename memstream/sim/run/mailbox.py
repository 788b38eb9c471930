"""The whisper mailbox: memories an experimenter puts into agents' minds, kept in ``whispers.json``.

Any process may whisper to a run, stopped or running; appends happen under the folder's short lock
(:mod:`memstream.sim.run.dirlock`), so concurrent whispers are all kept, each with its own id, and a running
run reads new ones before each step under the same lock, so a whisper is either heard in time or refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timedelta

from pydantic import ValidationError

from memstream.errors import MemstreamError
from memstream.files import problem
from memstream.sim.agents import Whisper
from memstream.sim.agents.whisper import dump_whispers, parse_whispers
from memstream.sim.run.config import RunConfig
from memstream.sim.run.dirlock import DirLock, Section, live_holder, locked
from memstream.sim.run.layout import RunFiles, write_atomic
from memstream.sim.town import Town
from memstream.timeutil import from_epoch


class Mailbox:
    """The whispers of one run directory: read by anyone, appended under a lock, heard by its writer."""

    def __init__(self, files: RunFiles, config: RunConfig, town: Town, stands_at: Callable[[], datetime],
                 lock: DirLock | None = None) -> None:
        self.files, self.config, self.town, self.lock = files, config, town, lock
        self._stands_at = stands_at
        self._seen: tuple[object, int] = (None, 0)  # (whispers.json's identity, the highest id given)
        self._section: Section | None = None  # the folder's short lock, kept open by a running run

    def whispers(self) -> list[Whisper]:
        path = self.files.whispers
        if not path.is_file():
            return []
        try:
            return parse_whispers(path.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            raise MemstreamError(f"{path} is damaged; restore it or remove the whispers that broke it") from None

    def write(self, whispers: list[Whisper]) -> None:
        """All of a new run's whispers, written whole."""
        write_atomic(self.files.whispers, dump_whispers(whispers))

    def add(self, agent: str, text: str, at: datetime | None = None) -> tuple[Whisper, int | None]:
        """Append a whisper for ``agent`` at ``at`` (default: the first time the run has not passed), and
        the pid of the run that will hear it while running (None if none runs, or the running one ends first).

        The time is checked against where the run stands at that moment: its latest checkpoint, or,
        while a run writes, the step it has reached (noted under the same lock).
        """
        if agent not in {r.name for r in self.town.residents}:
            raise MemstreamError(f"unknown agent {agent!r} in {self.files.root}")
        with locked(self.files.root):
            holder = live_holder(self.files.lock)
            reached = from_epoch(float(holder.note)).astimezone(self.config.start.tzinfo) \
                if holder and _is_number(holder.note) else None
            if holder is not None and reached is not None:
                at = at or reached + timedelta(seconds=self.config.step_seconds)
                if at <= reached:
                    raise MemstreamError(f"the run {self.files.root} is running (pid {holder.pid}) and has reached "
                                         f"{reached.isoformat()}; whisper at a later time (its past is fixed)")
            else:
                first = self._first_open()
                at = at or first
                if at < first:
                    raise MemstreamError(f"the run {self.files.root} has simulated up to "
                                         f"{self._stands_at().isoformat()}; whisper at {first.isoformat()} or later "
                                         "(its past is fixed; fork it from an earlier checkpoint to change that)")
            whispers = self.whispers()
            try:
                whisper = Whisper(id=max((w.id for w in whispers), default=0) + 1, agent=agent, text=text, at=at)
            except ValidationError as e:
                raise MemstreamError(f"bad whisper: {problem(e)}") from None
            self.write([*whispers, whisper])
        hears = holder is not None and at <= self.config.end  # a live run that ends before then does not hear it
        return whisper, holder.pid if holder and hears else None

    def _first_open(self) -> datetime:
        """The first time a stopped run has not simulated: the step after its latest checkpoint (a run's
        steps start one step after its start, so at a run's start, the start itself). A whisper at that time
        is heard at the first step the run takes when it goes on, as in a run that had it from the start."""
        stands = self._stands_at()
        return stands if stands <= self.config.start else stands + timedelta(seconds=self.config.step_seconds)

    def new(self, reached: datetime) -> list[Whisper]:
        """The whispers added since the last call (all of them at the first), for a running run about to
        simulate ``reached``: noted under the folder's lock, so a whisper for that time or earlier is
        refused from now on. Cheap when nothing changed (one ``stat``)."""
        assert self.lock is not None, "only the run's writer hears whispers"
        if self._section is None:
            self._section = Section(self.files.root)
        with self._section:
            self.lock.note(repr(reached.timestamp()))
            try:
                stat = os.stat(self.files.whispers)
                seen: object = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            except FileNotFoundError:
                seen = None
            if seen == self._seen[0]:
                return []
            new = [w for w in self.whispers() if w.id > self._seen[1]]
            self._seen = (seen, max((w.id for w in new), default=self._seen[1]))
            return new

    def close(self) -> None:
        if self._section is not None:
            self._section.close()
            self._section = None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
