"""Who holds a profile lease, told well enough to know when they are dead.

Why: a lease row outlived a writer killed with ``kill -9`` by its whole term (300 s), and every update in
between waited and was dropped. A lease now records its holder's host, pid and the identity of that
process's start (Linux: the boot id and the start time in ``/proc/PID/stat``, so a pid the system has
since given to another process is not taken for the holder). A holder on this host whose process is gone
(or is another process under the same pid) is dead and its lease is taken over at once; a holder on
another host, or one whose liveness this system cannot tell, keeps the lease until it expires; a live
holder keeps it.

A lease row an earlier memstream wrote (``pid:token``) has no identity: it expires as before.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    started: str  #: the process's start identity ("" where the system does not tell it)
    token: str  #: this lease's own (two leases of one process are two holders)

    @classmethod
    def me(cls) -> Holder:
        return cls(socket.gethostname(), os.getpid(), started(os.getpid()) or "", uuid.uuid4().hex)

    def dump(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def load(cls, text: str) -> Holder | None:
        """The holder a lease row names; None for one with no identity (an earlier memstream's)."""
        try:
            d = json.loads(text)
            return cls(str(d["host"]), int(d["pid"]), str(d["started"]), str(d["token"]))
        except (ValueError, TypeError, KeyError):
            return None

    def dead(self) -> bool:
        """Whether this holder is surely gone: on this host, and its pid is free or another process's."""
        if self.host != socket.gethostname():
            return False
        if not _exists(self.pid):
            return True
        stat = _stat(self.pid)
        if stat is None:
            return False  # alive, as far as this system tells
        state, now = stat
        return state in ("Z", "X") or (bool(self.started) and now != self.started)  # killed, not yet reaped

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"


def started(pid: int) -> str | None:
    """The start identity of process ``pid`` (boot id and start time in clock ticks), None where unknown."""
    stat = _stat(pid)
    return stat[1] if stat else None


def _stat(pid: int) -> tuple[str, str] | None:
    """Process ``pid``'s state letter and start identity from ``/proc`` (Linux), None where there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after the name (in parentheses, it may hold spaces): field 3 on
    return (fields[0], f"{boot}:{fields[19]}") if len(fields) > 19 else None


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    except OverflowError:
        return False
    return True
