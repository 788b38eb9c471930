"""Why a run should stop at the end of the step under way: a budget, Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
import threading
from typing import Any

from memstream.errors import CallInterrupted
from memstream.models import REQUESTS_IN_FLIGHT


class Stop:
    """A signal sets a flag, so the step finishes and a checkpoint is written where it stopped; a
    second Ctrl-C stops at once (the run then resumes from its last checkpoint).

    With a model's answer in flight (a slow local model takes minutes), the first signal does not wait
    for it: it abandons the call (``CallInterrupted``) and the run stops within seconds. Every answer
    that had arrived is already in the call cache, so resuming from the last checkpoint replays the
    step's questions from it and asks the model only what it had not answered.
    """

    def __init__(self) -> None:
        self.why = "finished"
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Stop:
        if threading.current_thread() is threading.main_thread():
            for sig, why in ((signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")):
                self._previous[sig] = signal.signal(sig, lambda *_, why=why: self._signal(why))
        return self

    def _signal(self, why: str) -> None:
        if self.why in ("interrupted", "terminated"):
            raise KeyboardInterrupt
        self.why = why
        if REQUESTS_IN_FLIGHT.waiting:
            raise CallInterrupted(why)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    @property
    def requested(self) -> bool:
        return self.why != "finished"
