"""Opening a stream file for reading, also where nothing can be written (a read-only disk, a CD, a
folder without write permission).

Why: a stream is a WAL database, and SQLite's ``mode=ro`` still needs to create the ``-shm`` file
beside it; on read-only media that fails, and every read command said the intact file was "not a
memstream stream". When ``mode=ro`` cannot read and the file or its folder is not writable, the file
is opened ``immutable=1``: SQLite reads it without locks or a ``-shm`` (nothing can change it
there). ``MEMSTREAM_READ_IMMUTABLE=1`` asks for that open always (media SQLite cannot tell apart).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)

#: Set to 1 to open every stream read by a read command with ``immutable=1``.
IMMUTABLE_ENV = "MEMSTREAM_READ_IMMUTABLE"


def read_only_media(path: Path) -> bool:
    """Whether this process cannot write the file or the folder it is in (so nothing else writes it),
    or the user said so (``MEMSTREAM_READ_IMMUTABLE=1``)."""
    return os.environ.get(IMMUTABLE_ENV) == "1" or not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def connect_read(path: Path, timeout: float) -> tuple[sqlite3.Connection, bool]:
    """A read-only connection to ``path`` and whether it is immutable; ``sqlite3.DatabaseError`` as
    SQLite raises it if the file cannot be read either way."""
    uri = path.resolve().as_uri()
    if os.environ.get(IMMUTABLE_ENV) != "1":
        db = None
        try:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False,
                                 timeout=timeout)
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db, False
        except sqlite3.OperationalError:
            if db is not None:
                db.close()
            if not read_only_media(path):
                raise
    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        log.warning("%s is read as it stood at its last checkpoint: its -wal file (%d bytes, written by a "
                    "process that did not close it) cannot be read on read-only media", path, wal.stat().st_size)
    db = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None, check_same_thread=False,
                         timeout=timeout)
    return db, True
