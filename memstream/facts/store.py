"""The facts store: one SQLite file (WAL) with the same guarantees as the stream.

- One transaction per write (``BEGIN IMMEDIATE``: the write lock from its start), so a reader in
  another process sees a change whole or not at all: a new version and the invalidation of the
  old one commit together.
- Several processes: writers wait for each other (the busy timeout); readers take no lock and
  read one snapshot per call.
- Crash-safe: WAL; a write that dies before its commit leaves nothing.
- Read-only opens for commands that only read (``mode=ro``, or ``immutable=1`` on read-only media).
- A schema version: a file written by a newer memstream is refused, never converted.

Vectors are stored with their facts (float32), so the read path ranks the filtered set exactly;
the embedder's answers are cached by a hash of the text (``embed_cache``), which a hard delete
clears for the texts it removes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

import memstream.sqlite as sqlite
from memstream.errors import MemstreamError
from memstream.facts import schema
from memstream.facts.records import FACT_COLUMNS, Fact, fact_of
from memstream.models import Embedder, make_embedder
from memstream.stream import normalise_owner


class FactStore:
    """Every owner's facts in one file; ``":memory:"`` keeps them in RAM."""

    def __init__(self, path: str | Path, embedder: Embedder | None = None, *, create: bool = True,
                 readonly: bool = False) -> None:
        """Open the facts file at ``path``; ``embedder`` defaults to the one the file was written with
        (else the default), and one that is not the file's is refused."""
        self.path = str(path)
        self.readonly = readonly
        self.in_memory = self.path == ":memory:"
        self._matrices: dict[tuple[str, str], tuple[tuple[int, int], np.ndarray, np.ndarray]] = {}
        self.db = sqlite.connect(self.path, kind=schema.FACTS, read_only=readonly, create=create)
        new = self.db.new
        held = None if new else self.meta("embedder")
        embedder = self.embedder = embedder or make_embedder(held)
        if held not in (None, embedder.name):
            self.db.close()
            raise MemstreamError(f"{self.path} holds vectors of the {held} embedder, not {embedder.name}; "
                                 f"use --embedder {held}")
        if readonly:
            return
        self.db.execute("PRAGMA secure_delete=ON")  # a deleted row's bytes are overwritten, not left free
        if new:
            sqlite.create_tables(self.db, schema.SCHEMA, {"format": schema.FORMAT, "embedder": embedder.name,
                                                          "schema_version": str(schema.SCHEMA_VERSION)})

    # -- transactions ---------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the write lock from its start: what is checked inside it (an
        idempotency key, whether a version is still the latest) stays true until it commits."""
        with sqlite.transaction(self.db) as db:
            yield db

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Reads that see one committed state of the file (inside a write: that write's)."""
        with sqlite.transaction(self.db, write=False) as db:
            yield db

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    # -- embeddings -----------------------------------------------------------------------------

    def cache_key(self, text: str) -> str:
        return hashlib.sha256(f"{self.embedder.name}\x1f{text}".encode()).hexdigest()

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``, from the cache where it has them (it is filled by writes)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [self.cache_key(t) for t in texts]
        cached = dict(self.db.execute(f"SELECT key, vector FROM embed_cache WHERE key IN ({','.join('?' * len(keys))})",
                                      keys).fetchall())
        missing = sorted({t for t, k in zip(texts, keys, strict=True) if k not in cached})
        made = dict(zip(missing, self.embedder.embed(missing), strict=True)) if missing else {}
        rows = [made[t] if k not in cached else np.frombuffer(cached[k], dtype=np.float32)
                for t, k in zip(texts, keys, strict=True)]
        return np.vstack(rows).astype(np.float32)

    def remember_vectors(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Cache ``vectors`` of ``texts``, inside :meth:`writing`."""
        self.db.executemany("INSERT OR IGNORE INTO embed_cache VALUES (?,?)",
                            [(self.cache_key(t), np.ascontiguousarray(v, dtype=np.float32).tobytes())
                             for t, v in zip(texts, vectors, strict=True)])

    def matrix(self, tenant: str, owner: str) -> tuple[np.ndarray, np.ndarray]:
        """Every fact of ``owner`` as (sorted ids, their vectors), read again only after a write (this
        connection's or another process's): a read ranks a filtered subset of it without decoding blobs."""
        version = (0 if self.in_memory else self.db.execute("PRAGMA data_version").fetchone()[0],
                   self.db.total_changes)
        held = self._matrices.get((tenant, owner))
        if held is None or held[0] != version:
            rows = self.db.execute("SELECT id, embedding FROM facts WHERE tenant=? AND owner=? ORDER BY id",
                                   (tenant, owner)).fetchall()
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            vectors = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                       if rows else np.zeros((0, 0), dtype=np.float32))
            held = (version, ids, vectors)
            self._matrices[(tenant, owner)] = held
        return held[1], held[2]

    # -- reading rows ---------------------------------------------------------------------------

    def facts(self, ids: Sequence[int]) -> list[Fact]:
        """The facts with these ids (in that order, missing ones left out), with sources and entities."""
        ids = [int(i) for i in ids]
        if not ids:
            return []
        out: dict[int, Fact] = {}
        for at in range(0, len(ids), 900):
            chunk = ids[at:at + 900]
            marks = ",".join("?" * len(chunk))
            sources: dict[int, list[int]] = {}
            for fid, sid in self.db.execute(f"SELECT fact_id, source_id FROM provenance WHERE fact_id IN ({marks}) "
                                            "ORDER BY source_id", chunk):
                sources.setdefault(fid, []).append(sid)
            names: dict[int, list[str]] = {}
            for fid, name in self.db.execute(f"SELECT fact_id, name FROM entities WHERE fact_id IN ({marks})", chunk):
                names.setdefault(fid, []).append(name)
            for row in self.db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id IN ({marks})", chunk):
                out[row[0]] = fact_of(row, tuple(sources.get(row[0], ())), tuple(sorted(names.get(row[0], ()))))
        return [out[i] for i in ids if i in out]

    def fact(self, fact_id: int) -> Fact:
        found = self.facts([fact_id])
        if not found:
            raise MemstreamError(f"no fact {fact_id} in {self.path}; list an owner's facts with `memstream facts "
                                 "as-of`")
        return found[0]

    def source_id(self, tenant: str, owner: str, key: str) -> int | None:
        row = self.db.execute("SELECT id FROM sources WHERE tenant=? AND owner=? AND key=?",
                              (tenant, normalise_owner(owner), key)).fetchone()
        return row[0] if row else None

    def dump_bytes(self) -> bytes:
        """The whole file as bytes (a design's state, for an in-memory store)."""
        return self.db.serialize()

    def load_bytes(self, data: bytes) -> None:
        """Replace an in-memory store's contents with :meth:`dump_bytes` output, checked as an open is."""
        if not self.in_memory:
            raise MemstreamError(f"{self.path} is a file; only an in-memory store loads bytes")
        try:
            self.db.deserialize(data)
            fmt, embedder = self.meta("format"), self.meta("embedder")
        except sqlite3.DatabaseError as e:
            raise MemstreamError(f"the facts state is not a facts file ({sqlite.reason(e)})") from None
        if fmt != schema.FORMAT or embedder != self.embedder.name:
            raise MemstreamError(f"the facts state is {fmt!r} with vectors of {embedder!r}, not {schema.FORMAT!r} "
                                 f"of {self.embedder.name!r}")
        self._matrices.clear()

    def close(self) -> None:
        self.db.close()


def owner_of(owner: str) -> str:
    """An owner's name as stored (the stream's rule), with a one-line error."""
    try:
        return normalise_owner(owner)
    except ValueError as e:
        raise MemstreamError(f"bad owner: {e}") from None

