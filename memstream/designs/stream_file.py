"""The ``stream`` design's memory in a stream file of its own beside a design store (``PATH.stream``).

A stream file is its own kind (tables ``meta``, ``memories``, ``accesses``; append-only by triggers; vectors
stored, the FAISS index rebuilt on open and caught up with what other processes commit by a high-water
mark), so it cannot be the design store's tables: it is kept beside the store. What the store needs of it:

- **Scopes**: a stream has owners, not tenants, so an owner in a scope is the stream owner
  ``scope␟owner`` (:data:`SCOPE_MARK`; an owner in no scope is its own name). Retrieval is per stream owner,
  so two scopes never see each other's memories; a name holding the mark is refused in one line.
- **Idempotent writes**: a memory made from an entry keeps the entry's key in its metadata
  (:data:`ENTRY_KEY`, indexed), looked up before a write and again
  just before it is committed.
- **Commit**: the design's writes wait in the stream's write buffer (their ids handed out); :meth:`StreamFile.commit`
  writes the buffer in one transaction, or says another process wrote the file meanwhile (the ids are taken):
  the store discards the buffer and writes again.
- **Forget**: :meth:`~memstream.stream.MemoryStream.forget`, the stream's one sanctioned delete.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from memstream.designs.entries import Record
from memstream.errors import MemstreamError
from memstream.models import Embedder
from memstream.stream import MemoryStream, Weights, reflected_key

#: Where a memory made from an entry keeps the entry's key (a retried write is found by it and stored once).
ENTRY_KEY = "key"
#: Between a scope and an owner in a stream owner's name (a visible character no one types in a name).
SCOPE_MARK = "␟"


class StreamHolder(Protocol):
    """What of the stream design its file needs (the design is :class:`~memstream.designs.StreamDesign`)."""

    given_embedder: Embedder | None
    stream: MemoryStream

    @property
    def weights(self) -> Weights: ...

    def forget_lines(self) -> None: ...


class StreamFile:
    """The stream design's memory in the stream file at ``path``, for owners in ``scope``."""

    #: A write waits in the stream's buffer and is committed in one transaction, whole or not at all.
    commits_as_written = False

    def __init__(self, design: StreamHolder, path: str, scope: str, *, read_only: bool = False) -> None:
        if SCOPE_MARK in scope:
            raise MemstreamError(f"a scope of the stream design cannot hold {SCOPE_MARK!r} (it joins scope and "
                                 "owner in the stream's owner names); choose another scope")
        self.design, self.path, self.scope, self.entry_key = design, path, scope, ENTRY_KEY
        if read_only and not Path(path).exists():
            return  # nothing written yet: the design's empty stream in memory is what there is to read
        stream = MemoryStream(path, design.given_embedder, weights=design.weights, readonly=read_only,
                              create=not read_only)
        if not read_only:
            stream.store.index_metadata_key(ENTRY_KEY)
        design.stream.close()
        design.stream = stream

    @property
    def stream(self) -> MemoryStream:
        return self.design.stream

    @property
    def db(self) -> sqlite3.Connection:
        return self.stream.store.db

    def damage(self, key: str) -> list[str]:
        """Why the owner's memories cannot be read as written: the rows the stream's screen found damaged
        (:mod:`memstream.stream.damage`; the stream alone skips them with a warning, which would leave a
        design store's owner quietly missing memories) and a reflection mark that is not a memory id."""
        self.stream.has(key)  # catches up with the file: new rows are screened
        found = self.stream.store.damaged
        problems: list[str] = []
        ids = sorted(found)
        for start in range(0, len(ids), 10_000):  # (the store's own look-ups leave damaged rows out)
            chunk = ids[start:start + 10_000]
            mine = {i for (i,) in self.db.execute(f"SELECT rowid FROM memories WHERE owner=? AND rowid IN "
                                                  f"({','.join('?' * len(chunk))})", (key, *chunk))}
            problems += [f"memory {i}: {found[i]}" for i in chunk if i in mine]
        mark = self.stream.store.get_meta(reflected_key(key))
        if mark is not None and not str(mark).isdigit():
            problems.append(f"its reflection mark {str(mark)[:20]!r} is not a memory id")
        return problems

    def owner_key(self, owner: str) -> str:
        if SCOPE_MARK in owner:
            raise MemstreamError(f"an owner of the stream design cannot hold {SCOPE_MARK!r} (it joins scope and "
                                 "owner in the stream's owner names); choose another name")
        return f"{self.scope}{SCOPE_MARK}{owner}" if self.scope else owner

    def owners(self) -> list[str]:
        prefix = f"{self.scope}{SCOPE_MARK}" if self.scope else ""
        return [o.removeprefix(prefix) for o in self.stream.store.owners_in_order()
                if (o.startswith(prefix) if prefix else SCOPE_MARK not in o)]

    def records(self, key: str, owner: str) -> list[Record]:
        """The owner's memories as records (an insight's kind is ``reflection``; an entry's, the entry's)."""
        if not self.stream.has(key):
            return []
        return [Record(m.id, owner, m.text, m.created_at, str(m.metadata.get("source", "")),
                       str(m.metadata.get("entry", m.kind)), str(m.metadata.get("session", "")))
                for m in self.stream.memories(key)]

    def entry_keys(self, key: str) -> dict[int, str]:
        if not self.stream.has(key):
            return {}
        memories = self.stream.memories(key)
        return {m.id: str(m.metadata[self.entry_key]) for m in memories if self.entry_key in m.metadata}

    def known(self, key: str, keys: Sequence[str]) -> dict[str, int]:
        return self.stream.store.by_metadata_key(key, self.entry_key, keys)

    def commit(self, key: str, keys: Sequence[str]) -> bool:
        """Write the buffer, unless another process stored one of the entries ``keys`` or wrote the file since."""
        if self.known(key, keys):
            return False
        return self.stream.try_flush()

    def discard(self) -> None:
        self.stream.discard()

    def texts(self, key: str) -> list[str]:
        return [m.text for m in self.stream.memories(key)] if self.stream.has(key) else []

    def forget(self, key: str) -> int:
        gone = self.stream.forget(key)
        self.design.forget_lines()
        return gone

    def close(self) -> None:
        self.stream.close()
