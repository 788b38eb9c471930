"""What a run has recorded: its event log, its metrics, and the log of what the write gate kept out."""

from __future__ import annotations

import json

from memstream.errors import MemstreamError
from memstream.files import JsonObject, read_json, read_text
from memstream.sim.events import Event, EventLog, read_events
from memstream.sim.run.layout import RunFiles, require_writer, write_atomic
from memstream.sim.run.metrics import RunMetrics
from memstream.trust import Blocked, BlockedRecord


class Records:
    """The records of one run directory (written only by its writer)."""

    def __init__(self, files: RunFiles, *, writable: bool) -> None:
        self.files, self.writable = files, writable

    def events(self) -> list[Event]:
        return read_events(self.files.events)

    def event_log(self, lines: int) -> EventLog:
        """The event log, appended to after its first ``lines`` lines (the caller closes it)."""
        require_writer(self.writable, self.files.root)
        log = EventLog(self.files.events)
        log.lines = lines
        return log

    def metrics(self) -> JsonObject | None:
        """The run's ``metrics.json`` as read (a run of an older version may lack keys a new one writes)."""
        path = self.files.metrics
        return read_json(path, "run metrics") if path.is_file() else None

    def write_metrics(self, metrics: RunMetrics) -> None:
        require_writer(self.writable, self.files.root)
        write_atomic(self.files.metrics, json.dumps(metrics, indent=2))

    def blocked(self) -> list[BlockedRecord]:
        """What the write gate and the critic kept out of the agents' streams (none if the run has no log)."""
        path = self.files.blocked
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

    def write_blocked(self, blocked: list[BlockedRecord]) -> None:
        """The log of what was kept out, written whole (the checkpoint holds the same, so a resume agrees)."""
        require_writer(self.writable, self.files.root)
        write_atomic(self.files.blocked, "".join(json.dumps(b) + "\n" for b in blocked))
