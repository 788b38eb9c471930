"""Operating-system file locks for a run directory: one writer for its life, and short critical sections.

Why the OS and not a marker file: a lock taken with ``flock`` belongs to an open file, so the
kernel releases it however the holder ends, a kill -9 included; a marker file would outlive a
killed run and need guessing whether its writer still lives. The holder writes its pid (and a
short note, the clock of a running run) into the lock file, so a refused writer can be told who
holds it, and a whisper can be told where a running run stands.

Why the folder is locked too: a lock file can be deleted by hand while its holder runs, and the next taker
would make a new one and lock that. The holder also keeps an open-file-description read lock (``fcntl``'s
``F_OFD_SETLK``, independent of ``flock``) on the folder itself, which no one can delete while it is in use;
a taker that finds another's lock there is refused, and the holder makes its lock file again at its next note.
"""

from __future__ import annotations

import fcntl
import os
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: How long a writer keeps trying for a lock another process holds before giving up. A reader
#: that only asks whether anyone holds the lock takes it shared for a moment; this outlasts that.
WAIT_S = 0.25
#: The width of the line a lock's holder writes (longer notes are written whole, just not in place).
NOTE_WIDTH = 63


class Busy(Exception):
    """The lock is held by another live process (``pid``; 0 if it has not written it yet)."""

    def __init__(self, pid: int) -> None:
        super().__init__(f"held by pid {pid}")
        self.pid = pid


@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as its file says: the pid and the note it last wrote."""

    pid: int
    note: str


class DirLock:
    """An exclusive lock on ``path`` held until :meth:`release` or the process's end.

    The file is removed on release (by its holder, while it still holds it); a taker checks, once it
    holds the lock, that the file it locked is still the one at ``path``, so a file removed in between
    is never mistaken for a lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._folder_fd: int | None = None

    def acquire(self, wait_s: float = WAIT_S) -> None:
        """Take the lock, or raise :class:`Busy` naming the live holder."""
        deadline = time.monotonic() + wait_s
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() >= deadline:
                    holder = read_holder(self.path)
                    raise Busy(holder.pid if holder else 0) from None
                time.sleep(0.05)
                continue
            if not _same_file(fd, self.path):
                os.close(fd)  # removed by its last holder after we opened it: take the new one
                continue
            folder_fd = _hold_folder(self.path.parent)
            if folder_fd is None:  # a live writer whose lock file was deleted by hand holds the folder
                os.close(fd)  # the file is left: the holder adopts it at its next note
                raise Busy(0)
            self._fd, self._folder_fd = fd, folder_fd
            self.note("")
            return

    def note(self, text: str) -> None:
        """Write ``pid text`` into the lock file, for others to read (a holder's only). The line is padded to
        a fixed width, so a note replaces the last in one write (a running run notes its clock every step)."""
        assert self._fd is not None, "note() needs the lock held"
        self._remake_if_deleted()
        line = f"{os.getpid()} {text}".rstrip().ljust(NOTE_WIDTH) + "\n"
        if len(line) > NOTE_WIDTH + 1:
            os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, line.encode(), 0)

    def _remake_if_deleted(self) -> None:
        """The lock file at ``path`` again if it was deleted (the folder's lock kept others out meanwhile), so
        that readers learn again who holds it; left for the next note if a refused taker holds it a moment."""
        assert self._fd is not None
        if _same_file(self._fd, self.path):
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return
        os.close(self._fd)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            if _same_file(self._fd, self.path):
                self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)  # closing the file releases the lock
            self._fd = None
            if self._folder_fd is not None:
                os.close(self._folder_fd)  # and the folder's
                self._folder_fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


def live_holder(path: Path) -> Holder | None:
    """Who holds the lock at ``path`` now, or None if nobody does (a stale file of a killed holder
    is nobody). Takes the lock shared for an instant, never waits."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # no lock file (or no folder): nobody holds it, unless its file was deleted by hand
        return Holder(0, "") if _folder_held(path.parent) else None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_holder(path) or Holder(0, "")
    else:
        return Holder(0, "") if _folder_held(path.parent) else None
    finally:
        os.close(fd)  # releases the shared lock, if taken


def read_holder(path: Path) -> Holder | None:
    """What the lock file at ``path`` says (whether or not its writer lives)."""
    try:
        pid, _, note = path.read_text(encoding="ascii", errors="replace").strip().partition(" ")
        return Holder(int(pid), note)
    except (OSError, ValueError):
        return None


class Section:
    """A short exclusive section over a folder (a lock on the directory itself, no file needed), for a
    read-modify-write of one of its files by several processes; entered again and again by one holder
    (a running run enters it every step), so the folder stays open until :meth:`close`."""

    def __init__(self, folder: Path) -> None:
        self._fd = os.open(folder, os.O_RDONLY)

    def __enter__(self) -> Section:
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """The folder's short exclusive section, entered once."""
    section = Section(folder)
    try:
        with section:
            yield
    finally:
        section.close()


#: ``struct flock`` as Linux lays it out (type, whence, start, length, pid), for the folder's OFD lock.
_FLOCK = "hhqqi4x"


def _folder_lock_of_another(fd: int) -> bool:
    """Whether an open file description other than ``fd``'s holds a lock on the folder ``fd`` is open on."""
    probe = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    found = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_OFD_GETLK, probe))
    return bool(found[0] != fcntl.F_UNLCK)


def _hold_folder(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding its read lock, or None if another writer holds one too.
    The lock is taken before the look, so of two takers at once at least one sees the other."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0))
        if not _folder_lock_of_another(fd):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


def _folder_held(folder: Path) -> bool:
    """Whether a writer holds ``folder``'s lock (whatever became of its lock file)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return False
    try:
        return _folder_lock_of_another(fd)
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)
