"""The event log: one JSON line per thing that happened (time, agent, action, location, utterance).

Only changes are logged (an agent's new action or place, an utterance, a plan, a
reaction, a reflection, an object's new state), so a day of 25 agents reads as a
story, not 216,000 lines of "still working".
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import IO, NotRequired, TypedDict, cast

from memstream.errors import MemstreamError
from memstream.files import read_text


class Event(TypedDict):
    """One line of the event log (``events.jsonl``), dumped to JSON as is; ``utterance`` only when one was said."""

    time: str
    agent: str
    action: str
    location: str
    utterance: NotRequired[str]


class EventLog:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lines = 0
        self._file: IO[str] | None = path.open("a", encoding="utf-8") if path else None
        self.memory: list[Event] = []  # kept when there is no file (tests, notebooks)

    def log(self, at: datetime, agent: str, action: str, location: str, utterance: str | None = None) -> None:
        event: Event = {"time": at.isoformat(), "agent": agent, "action": action, "location": location}
        if utterance is not None:
            event["utterance"] = utterance
        self.lines += 1
        if self._file:
            self._file.write(json.dumps(event) + "\n")
        else:
            self.memory.append(event)

    def flush(self) -> None:
        if self._file:
            self._file.flush()

    def close(self) -> None:
        if self._file:
            self._file.close()
            self._file = None


def truncate(path: Path, lines: int) -> None:
    """Keep the first ``lines`` lines of ``path`` (what a checkpoint had written)."""
    kept = path.read_text(encoding="utf-8").splitlines(keepends=True)[:lines] if path.exists() else []
    path.write_text("".join(kept), encoding="utf-8")


def read_events(path: Path) -> list[Event]:
    """The log's events, each checked to hold an event's four keys (one line naming the first that does not)."""
    events: list[Event] = []
    for n, line in enumerate(read_text(path, "event log").splitlines(), 1):
        if line.strip():
            try:
                event = json.loads(line)
            except ValueError:
                event = None
            if not isinstance(event, dict) or not {"time", "agent", "action", "location"} <= set(event):
                raise MemstreamError(f"{path}:{n} is not an event; resume the run (--resume) to repair its log")
            events.append(cast(Event, event))  # its four keys checked above
    return events
