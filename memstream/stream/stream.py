"""The memory stream: an append-only, timestamped, owner-scoped log with scored retrieval.

A :class:`MemoryStream` is a SQLite file (the truth) plus, per owner, an
:class:`~memstream.stream.index.OwnerIndex` (numpy columns and a FAISS index)
rebuilt from it on open, so a reopened stream retrieves exactly as before.
Every read and write names one owner; nothing crosses owners.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memstream.errors import MemstreamError
from memstream.files import JsonObject, problem
from memstream.models import Embedder, make_embedder, windows
from memstream.stream.index import VECTOR_KINDS, IndexKind, OwnerIndex, VectorKind
from memstream.stream.memory import (
    MAX_ID,
    MAX_IMPORTANCE,
    MIN_IMPORTANCE,
    NO_METADATA,
    OBSERVATION,
    Memory,
    MemoryText,
    ReadOnlyDict,
    Recall,
    Weights,
    normalise_owner,
)
from memstream.stream.store import IDS_THROUGH, Row, Store, StreamMark, encode_json, reflected_key
from memstream.stream.timescope import TimeScope, time_scope
from memstream.timeutil import from_epoch, require_aware, to_epoch

_KIND = re.compile(r"^[a-z][a-z0-9_-]*$")
#: Memories kept after a recall, to hand out again (rows are immutable, so this never goes stale).
MEMORY_CACHE_SIZE = 50_000
#: Memories the write buffer holds before the stream writes them without waiting for a read.
WRITE_BUFFER_MAX = 4096


class NewMemory(BaseModel):
    """A memory to append (what ``memstream import`` reads, one JSON object per line)."""

    model_config = ConfigDict(extra="forbid")

    owner: str = Field(min_length=1)
    text: MemoryText
    kind: str = OBSERVATION
    created_at: datetime
    importance: int | None = Field(default=None, ge=MIN_IMPORTANCE, le=MAX_IMPORTANCE)
    cites: tuple[Annotated[int, Field(ge=1, le=MAX_ID)], ...] = ()
    metadata: JsonObject = Field(default_factory=dict)

    @field_validator("owner")
    @classmethod
    def _owner(cls, value: str) -> str:
        return normalise_owner(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: JsonObject) -> JsonObject:
        try:
            encode_json(value)
        except (TypeError, ValueError):
            raise ValueError("metadata must be plain JSON (no NaN or infinity)") from None
        return value

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        if not _KIND.match(value):
            raise ValueError(f"kind {value!r} must be a lowercase word, e.g. observation")
        return value

    @field_validator("created_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("created_at has no time zone; add one, e.g. +00:00")
        try:
            require_aware(value, "created_at")
        except MemstreamError as e:
            raise ValueError(str(e)) from None
        return value


class StreamMovedError(MemstreamError):
    """Another process wrote to the file while memories waited in this stream's write buffer (their ids are
    taken): nothing of the buffer was written. :meth:`MemoryStream.try_flush` says so instead of raising."""


def new_memory(**fields: Any) -> NewMemory:
    """Validate one memory's fields, with a one-line error naming the problem."""
    try:
        return NewMemory(**fields)
    except ValidationError as e:
        raise MemstreamError(f"bad memory: {problem(e)}") from None


class MemoryStream:
    """Append-only memories of many agents, each retrieved only by its owner.

    The stream holds no model (as Concordia's associative memory takes only an embedder): a
    memory's importance is given by whoever writes it, rated beforehand by the importance stage
    (:func:`~memstream.stream.importance_stage`, or :func:`~memstream.stream.rate_importance`).

    There are two ways to write. :meth:`write` buffers a memory and returns its id at once (ids
    follow the order things were written); the buffer is written in one transaction and one
    embedding batch when a read needs it (a read of an owner with memories waiting, or of the
    whole stream), when it holds ``WRITE_BUFFER_MAX`` memories, and on :meth:`flush`,
    :meth:`backup` and :meth:`close`. So a simulation's stages just write, and every read sees
    everything written before it. :meth:`add` and :meth:`extend` write at once (the buffer first).

    Args:
        path: the SQLite file, or ``":memory:"``.
        embedder: turns texts into vectors; defaults to the one the stream was
            written with (or memstream's default for a new stream).
        weights: the default weights and decay for :meth:`retrieve`.
        index: ``"flat"`` (exact, default) or ``"hnsw"`` (approximate, for large streams).
        vectors: how the indexes hold vectors in memory: ``"float32"`` (default) or ``"fp16"``
            (half the bytes; top-10 agreement with float32 and the largest score difference are
            measured in ``benchmarks/retrieval.py --vectors``). The file keeps float32 either way.
        create: create the file if it does not exist.
        readonly: never write to the file (retrieve with ``touch=False``); for inspecting.
    """

    def __init__(self, path: str | Path = ":memory:", embedder: Embedder | None = None, *,
                 weights: Weights | None = None, index: IndexKind = "flat", vectors: VectorKind = "float32",
                 create: bool = True, readonly: bool = False) -> None:
        if vectors not in VECTOR_KINDS:
            raise ValueError(f"unknown vectors {vectors!r}; use one of {VECTOR_KINDS}")
        self.store = Store(path, create=create, readonly=readonly)
        self.path = self.store.path
        self.embedder = self._check_embedder(embedder)
        self.weights = weights or Weights()
        self.index_kind = index
        self.vector_kind = vectors
        self._owners: dict[str, OwnerIndex] = {}
        self._memory_cache: dict[int, tuple[float, Memory]] = {}
        self._names: dict[str, str] = {}  # owner as given -> as stored
        self._max_id = 0          # the newest memory in the indexes
        self._access_rowid = 0    # the newest access applied to them
        self._seen_version = -1   # the file's data version when they were last brought up to date
        self._buffer: list[NewMemory] = []      # written, not yet in the file; ids follow _max_id
        self._buffered_at: dict[str, list[int]] = {}  # owner -> its positions in the buffer
        self._buffered_meta: dict[str, str] = {}  # written with the buffer, in its transaction
        self._erasures = self.store.erasures()  # owners forgotten in the file, as the indexes know it
        #: a view of the stream as it stood then (:meth:`as_it_stood`): its time, last memory and last access
        self._through: tuple[float, int, int] | None = None
        self._catch_up(force=True)

    # -- opening -----------------------------------------------------------------------------

    def _check_embedder(self, embedder: Embedder | None) -> Embedder:
        name, dim = self.store.get_meta("embedder"), self.store.get_meta("dim")
        if name is None:
            embedder = embedder or make_embedder()
            if not self.store.readonly:
                self.store.set_meta({"embedder": embedder.name, "dim": str(embedder.dim)})
            return embedder
        if embedder is None:
            return make_embedder(name)
        if embedder.name != name or embedder.dim != int(dim or 0):
            raise MemstreamError(
                f"{self.path} holds {dim}-d vectors from embedder {name!r}, but {embedder.name!r} "
                f"gives {embedder.dim}-d; open it with --embedder {name}"
            )
        return embedder

    def _catch_up(self, *, force: bool = False) -> None:
        """Bring the indexes up to what the file holds: memories and accesses that another process
        (or an earlier session) committed since this stream last looked. Cheap when nothing changed:
        SQLite's data version says whether anyone else committed."""
        if self._through is not None:  # a view reads the indexes as its stream had them: they hold its past
            return
        version = self.store.data_version()
        if version == self._seen_version and not force:
            return
        with self.store.snapshot():  # memories and their accesses as of one moment (a writer may be committing)
            if self.store.erasures() != self._erasures:  # another process forgot an owner: start again
                self._erasures = self.store.erasures()
                self._owners, self._max_id, self._access_rowid = {}, 0, 0
                self._memory_cache.clear()
            rows = self.store.load_after(self._max_id)
            accesses = self.store.accesses_after(self._access_rowid)
            # ids handed out to memories since forgotten are taken too (a forget of the owner with the newest
            # memory, by another process, left every buffered write here refused as a conflict, for good)
            forgotten = int(self.store.get_meta(IDS_THROUGH) or 0) if self._erasures else 0
        by_owner: dict[str, list[tuple[int, float, int, bytes]]] = {}
        for mid, owner, created_s, importance, blob in rows:
            by_owner.setdefault(owner, []).append((mid, created_s, importance, blob))
        for owner, mine in by_owner.items():
            n = len(mine)
            created = np.fromiter((r[1] for r in mine), dtype=np.float64, count=n)
            vectors = np.frombuffer(b"".join(r[3] for r in mine), dtype=np.float32)
            keys = np.fromiter((len(r[3]) // (4 * self.embedder.dim) for r in mine), np.int64, n)
            self._index(owner).add(np.fromiter((r[0] for r in mine), dtype=np.int64, count=n),
                                   vectors.reshape(-1, self.embedder.dim), created,
                                   np.fromiter((r[2] for r in mine), np.float64, n), keys=keys)
        # past the damaged rows too (skipped, yet their ids are taken): a stream whose newest row was damaged
        # handed out that row's id again, and every buffered write of any owner was refused as a conflict
        skipped = max((i for i in self.store.damaged if i > self._max_id), default=0)
        self._max_id = max(rows[-1][0] if rows else 0, skipped, forgotten, self._max_id)
        if accesses:
            self._apply_accesses([(mid, at_s) for _, mid, at_s in accesses])
            self._access_rowid = accesses[-1][0]
        self._seen_version = version

    def _apply_accesses(self, accesses: list[tuple[int, float]]) -> None:
        owners = self.store.owners_of(sorted({mid for mid, _ in accesses}))
        by_owner: dict[str, dict[int, float]] = {}
        for mid, at_s in accesses:
            latest = by_owner.setdefault(owners[mid], {})
            latest[mid] = max(at_s, latest.get(mid, at_s))
        for owner, latest in by_owner.items():
            index = self._owners[owner]
            for at_s in sorted(set(latest.values())):
                ids = np.array([m for m, t in latest.items() if t == at_s], dtype=np.int64)
                index.touch(index.positions_of(ids), at_s)

    def _index(self, owner: str) -> OwnerIndex:
        if owner not in self._owners:
            self._owners[owner] = OwnerIndex(self.embedder.dim, self.index_kind, self.vector_kind)
        return self._owners[owner]

    def _name(self, owner: str) -> str:
        """``owner`` as stored (normalised; remembered, as every retrieval names its owner)."""
        name = self._names.get(owner)
        if name is None:
            try:
                name = normalise_owner(owner)
            except ValueError as e:
                raise MemstreamError(str(e)) from None
            if len(self._names) < 100_000:
                self._names[owner] = name
        return name

    def _owner(self, owner: str) -> OwnerIndex:
        """``owner``'s index, for reads that name one of its memories (an owner without any is an error)."""
        index = self._owner_if_any(owner)
        if index is None:
            raise self._unknown_owner(owner)
        return index

    def _owner_if_any(self, owner: str) -> OwnerIndex | None:
        """``owner``'s index, None while it has no memories (a bad owner name is still an error)."""
        owner = self._name(owner)
        self._ready(owner)
        index = self._owners.get(owner)
        return index if index is not None and len(index) else None

    def require_owner(self, owner: str) -> None:
        """Refuse, in one line, an owner with no memories: for a caller that names an owner it expects
        to exist (a user typing ``--agent``), where retrieval alone would quietly return nothing."""
        if not self.has(owner):
            raise self._unknown_owner(owner)

    def _unknown_owner(self, owner: str) -> MemstreamError:
        known = ", ".join(sorted(o for o, ix in self._owners.items() if len(ix))[:5]) or "none yet"
        return MemstreamError(f"unknown owner {self._name(owner)!r} in {self.path} (owners: {known})")

    def _ready(self, owner: str | None = None) -> None:
        """Before a read of ``owner`` (None: of the whole stream): write the buffer if it holds any of
        what the read would see, and catch up with other processes. Reads are owner-scoped, so a
        read of an owner with nothing waiting returns exactly what it would after a flush."""
        if self._buffer and (owner is None or owner in self._buffered_at):
            self.flush()
        self._catch_up()

    # -- writing -----------------------------------------------------------------------------

    def write(self, item: NewMemory) -> int:
        """Buffer one memory (its importance given) and return its id; see the class docstring.

        Everything that could make the buffer fail to write later is checked now (importance, a
        read-only file, citations within the owner), and a full buffer is written before the new
        memory joins it: a failed write leaves nothing half-done for a retry to double.
        """
        if item.importance is None:
            raise MemstreamError(_NO_IMPORTANCE)
        self._writable()
        if len(self._buffer) >= WRITE_BUFFER_MAX:
            self.flush()
        if not self._buffer:
            self._catch_up()  # what other processes wrote decides where the ids start
        memory_id = self._max_id + 1 + len(self._buffer)
        self._check_own_cites(item, memory_id)
        self._buffered_at.setdefault(item.owner, []).append(len(self._buffer))
        self._buffer.append(item)
        return memory_id

    def _writable(self) -> None:
        if self.store.readonly or self._through is not None:
            raise MemstreamError(f"{self.path} is open read-only; open it for writing to change it")

    def _check_own_cites(self, item: NewMemory, memory_id: int) -> None:
        """A buffered memory cites only earlier memories of its own owner (in the file or the buffer)."""
        if not item.cites:
            return
        first = self._max_id + 1
        flushed = np.array([c for c in item.cites if 0 < c < first], dtype=np.int64)
        index = self._owners.get(item.owner)
        if flushed.size:
            pos = index.positions_of(flushed) if index is not None else None
            if index is None or pos is None or pos.max() >= len(index) or (index.ids.values[pos] != flushed).any():
                raise MemstreamError(f"a memory of {item.owner!r} cites one of {sorted(flushed.tolist())}, which "
                                     f"is not an earlier memory of its own in {self.path}")
        for c in item.cites:
            if not 0 < c < memory_id or (c >= first and self._buffer[c - first].owner != item.owner):
                raise MemstreamError(f"a memory of {item.owner!r} cites {c}, which is not an earlier memory of its "
                                     f"own in {self.path}")

    def flush(self) -> None:
        """Write the buffered memories (and marks) in one transaction, one embedding batch."""
        if self._buffer:
            # citations were checked as each memory was written; _insert refuses a file another process wrote to
            self._insert(self._buffer, first=self._max_id + 1, meta=self._buffered_meta)
        elif self._buffered_meta:
            with self.store.writing():
                self.store.put_meta(self._buffered_meta)
        self._buffer, self._buffered_at, self._buffered_meta = [], {}, {}

    def try_flush(self) -> bool:
        """:meth:`flush`, or False if another process wrote to the file since the buffer's ids were handed
        out (then nothing was written and the buffer still waits: :meth:`discard` it and write again)."""
        try:
            self.flush()
        except StreamMovedError:
            return False
        return True

    def discard(self) -> None:
        """Drop what waits in the write buffer (memories and marks), unwritten."""
        self._buffer, self._buffered_at, self._buffered_meta = [], {}, {}

    def forget(self, owner: str) -> int:
        """Remove ``owner``'s every memory and access from the file and from the indexes (after writing the
        buffer); the rows deleted. See :meth:`~memstream.stream.store.Store.forget`."""
        self._writable()
        owner = self._name(owner)
        self.flush()
        known = self._erasures
        gone = self.store.forget(owner)
        if self.store.erasures() == known + 1:  # no other forget since the indexes were built: they stand
            self._erasures = known + 1
        # (else another process forgot an owner meanwhile: taking the count as seen hid that forget from these
        # indexes for good, which went on serving its memories; the next read rebuilds them instead)
        index = self._owners.pop(owner, None)
        for mid in index.ids.values.tolist() if index is not None else ():
            self._memory_cache.pop(int(mid), None)
        return gone

    def add(self, owner: str, text: str, *, at: datetime, importance: int, kind: str = OBSERVATION,
            cites: Sequence[int] = (), metadata: JsonObject | None = None) -> Memory:
        """Append one memory at once (rate its importance first: :func:`~memstream.stream.rate_importance`)."""
        item = new_memory(owner=owner, text=text, kind=kind, created_at=at, importance=importance,
                          cites=tuple(cites), metadata=metadata or {})
        return self.extend([item])[0]

    def extend(self, items: Iterable[NewMemory], *,
               select: Callable[[list[NewMemory]], list[bool]] | None = None) -> list[Memory]:
        """Append many memories at once, after the buffer (one transaction, one embedding batch).

        Embeddings are made first; the ids are allocated inside the write transaction, so two
        processes appending to one file at once never collide. ``select``, if given, decides
        inside that transaction which items are written (an import skips what is already there:
        decided under the write lock, two imports of one file at once store it once).
        """
        items = list(items)
        if not items:
            return []
        if any(it.importance is None for it in items):
            raise MemstreamError(_NO_IMPORTANCE)
        self.flush()
        self._catch_up()
        self.check_cites(items, self._max_id + 1)
        return self._insert(items, first=None, select=select)

    def _insert(self, items: list[NewMemory], *, first: int | None, meta: dict[str, str] | None = None,
                select: Callable[[list[NewMemory]], list[bool]] | None = None) -> list[Memory]:
        """Embed and write ``items`` in one transaction, from id ``first`` (None: the file's next id).

        With ``first`` given (the buffer, whose ids are already handed out), a file that another
        process wrote to in the meantime is refused: a buffering stream needs one writer.
        """
        keys = [windows(it.text) for it in items]  # a long text is found by its best window
        counts = np.array([len(k) for k in keys], dtype=np.int64)
        flat = self.embedder.embed([w for k in keys for w in k])
        vectors = np.split(flat, np.cumsum(counts)[:-1])
        expected_first = self._max_id + 1
        with self.store.writing():
            self._catch_up()  # what others wrote while this batch was embedded
            if select is not None:
                keep = [i for i, wanted in enumerate(select(items)) if wanted]
                items, vectors, counts = [items[i] for i in keep], [vectors[i] for i in keep], counts[keep]
                if not items:
                    return []
            first_id = self.store.next_id()
            if first is not None and first_id != first:
                raise StreamMovedError(f"another process wrote to {self.path} while {len(items)} memories waited in "
                                     "this stream's write buffer; give a buffering stream one writer (a run "
                                     "directory has one)")
            if first_id != expected_first and any(c >= expected_first for it in items for c in it.cites):
                raise MemstreamError("another process wrote to the stream while these memories, which cite each "
                                     "other by id, were prepared; write them again")
            rows: list[Row] = [
                (first_id + i, it.owner, it.kind, it.text, it.created_at.isoformat(),
                 to_epoch(it.created_at), int(it.importance or 0), encode_json(list(it.cites)),
                 encode_json(it.metadata))
                for i, it in enumerate(items)
            ]
            self.store.insert(rows, vectors)
            if meta:
                self.store.put_meta(meta)
        positions: dict[str, list[int]] = {}
        for i, it in enumerate(items):
            positions.setdefault(it.owner, []).append(i)
        for owner, idx in positions.items():
            self._index(owner).add(
                np.array([rows[i][0] for i in idx], dtype=np.int64), np.concatenate([vectors[i] for i in idx]),
                np.array([rows[i][5] for i in idx], dtype=np.float64),
                np.array([rows[i][6] for i in idx], dtype=np.float64), keys=counts[idx])
        self._max_id = rows[-1][0]
        return [_parse(row) for row in rows]

    def check_cites(self, items: list[NewMemory], first_id: int) -> None:
        cited = sorted({c for it in items for c in it.cites})
        if not cited:
            return
        owners = self.store.owners_of(cited)
        owners.update({first_id + i: it.owner for i, it in enumerate(items)})
        for i, it in enumerate(items):
            for c in it.cites:
                if c not in owners or c >= first_id + i:
                    raise MemstreamError(f"memory cites {c}, which does not exist in {self.path}")
                if owners[c] != it.owner:
                    raise MemstreamError(
                        f"a memory of {it.owner!r} cites {c}, which belongs to another owner")

    def record_access(self, owner: str, ids: Sequence[int], at: datetime) -> None:
        """Log an access to ``ids`` at ``at`` (recency restarts from the latest access)."""
        index = self._owner(owner)
        ids_arr = np.asarray(ids, dtype=np.int64)
        pos = index.positions_of(ids_arr)
        if ids_arr.size and (pos.max() >= len(index) or (index.ids.values[pos] != ids_arr).any()):
            raise MemstreamError(f"some of memories {list(ids)} do not belong to {owner!r}")
        at_s = to_epoch(require_aware(at, "access time"))
        with self.store.writing():
            self._catch_up()
            self._access_rowid = self.store.insert_accesses(ids_arr.tolist(), at.isoformat(), at_s)
        index.touch(pos, at_s)

    # -- reading -----------------------------------------------------------------------------

    def retrieve(self, owner: str, query: str, *, now: datetime, k: int = 10,
                 weights: Weights | None = None, touch: bool = True) -> list[Recall]:
        """The top k of ``owner``'s memories for ``query`` at simulated time ``now``.

        Records an access at ``now`` for the k returned unless ``touch=False``. An owner with no
        memories yet gets an empty list (as the designs return an empty context), so an agent loop
        needs no special first turn; a bad owner name (empty, control characters) is still an error.
        """
        return self.retrieve_many([(owner, query)], now=now, k=k, weights=weights, touch=touch)[0]

    def retrieve_many(self, requests: Sequence[tuple[str, str]], *, now: datetime, k: int = 10,
                      weights: Weights | None = None, touch: bool = True) -> list[list[Recall]]:
        """Many ``(owner, query)`` retrievals in one call: one embedding batch, one BLAS
        product per owner. An owner with no memories yet gets an empty list, as in :meth:`retrieve`."""
        requests = [(self._name(owner), query) for owner, query in requests]
        for owner, _ in requests:
            self._owner_if_any(owner)
        vectors = self.embedder.embed([q for _, q in requests])
        scopes: list[TimeScope | None] = [None] * len(requests)
        if (weights or self.weights).time:
            scopes = [time_scope(q, require_aware(now, "now")) for _, q in requests]
        results: list[list[Recall]] = [[] for _ in requests]
        groups: dict[str, list[int]] = {}
        for i, (owner, _) in enumerate(requests):
            groups.setdefault(owner, []).append(i)
        for owner, idx in groups.items():
            for i, recalls in zip(idx, self.search(owner, vectors[idx], now=now, k=k, weights=weights,
                                                   touch=touch, scopes=[scopes[i] for i in idx]), strict=True):
                results[i] = recalls
        return results

    def search(self, owner: str, vectors: np.ndarray, *, now: datetime, k: int = 10,
               weights: Weights | None = None, touch: bool = True,
               scopes: Sequence[TimeScope | None] | None = None) -> list[list[Recall]]:
        """Retrieval by query vectors (``(dim,)`` or ``(b, dim)``, L2-normalised).

        ``scopes``: per query, the span of time it names, for ``weights.time``. An owner with no
        memories yet gets an empty list per query.
        """
        if k <= 0:
            raise MemstreamError(f"k must be a positive integer, got {k}")
        weights = weights or self.weights
        queries = np.asarray(vectors, dtype=np.float32)
        if queries.ndim == 1:
            queries = queries[None]
        if queries.ndim != 2 or queries.shape[1] != self.embedder.dim:
            raise MemstreamError(f"query vectors are {queries.shape[1:]}; the stream's are {self.embedder.dim}-d")
        now_s = require_aware(now, "now").timestamp()
        index = self._owner_if_any(owner)
        if index is None:
            return [[] for _ in queries]
        if self._through is not None:  # a view: the owner's memories and their last accesses as they stood then
            at_s, ids_through, accesses_through = self._through
            index = index.as_of(min(now_s, at_s), ids_through, *self.store.last_accesses(
                self._name(owner), min(now_s, at_s), accesses_through))
        else:  # (a later access counts as one at `now`: a town's agents recall so, and their runs are pinned)
            index = index.existing_at(now_s)  # a memory created after `now` is not there yet
        if not len(index):
            return [[] for _ in queries]
        results = index.score(queries, now_s, weights, k, scopes, self._read)
        if touch:
            self.record_access(owner, sorted({r.memory.id for row in results for r in row}), now)
        return results

    def _read(self, last_access: dict[int, float]) -> dict[int, Memory]:
        """The memories with these ids, each as last accessed at the time given (epoch seconds).

        Rows never change, so recently read memories are kept and handed out again (their
        metadata is read-only); one accessed since is remade with its new access time.
        """
        cache = self._memory_cache
        found: dict[int, Memory] = {}
        for mid, at in last_access.items():
            kept = cache.get(mid)
            if kept is not None:
                found[mid] = kept[1] if kept[0] == at else self._keep(kept[1], at)
        if len(found) < len(last_access):
            for mid, row in self.store.rows([i for i in last_access if i not in found]).items():
                found[mid] = self._keep(_parse(row), last_access[mid])
        while len(cache) > MEMORY_CACHE_SIZE:  # after reading: the oldest kept may be among these
            del cache[next(iter(cache))]
        return found

    def _keep(self, memory: Memory, at: float) -> Memory:
        """``memory`` as last accessed at ``at``, kept for the next read."""
        accessed = _accessed(memory, at)
        self._memory_cache[memory.id] = (at, accessed)
        return accessed

    def get(self, owner: str, memory_id: int) -> Memory:
        index = self._owner(owner)
        pos = int(index.positions_of(np.array([memory_id]))[0])
        if pos >= len(index) or index.ids.values[pos] != memory_id:
            raise MemstreamError(f"no memory {memory_id} for owner {owner!r}")
        return self._read({memory_id: float(index.last_access_s.values[pos])})[memory_id]

    def memories(self, owner: str) -> list[Memory]:
        """All of ``owner``'s memories, oldest id first."""
        owner = self._name(owner)
        index = self._owner(owner)
        last = index.last_access_s.values
        rows = [r for r in self.store.owner_rows(owner) if r[0] <= self._max_id]  # not what another process
        return [_accessed(_parse(row), float(last[i])) for i, row in enumerate(rows)]  # committed since

    def recent(self, owner: str, n: int) -> list[Memory]:
        """The owner's ``n`` newest memories (by id), oldest first."""
        owner = self._name(owner)
        index = self._owner(owner)
        rows = [r for r in self.store.recent_rows(owner, n) if r[0] <= self._max_id]  # as the indexes know it
        pos = index.positions_of(np.array([r[0] for r in rows], dtype=np.int64))
        last = index.last_access_s.values
        return [_accessed(_parse(r), float(last[p])) for r, p in zip(rows, pos, strict=True)]

    # -- the reflection trigger's state ------------------------------------------------------

    def importance_since(self, owner: str, kinds: tuple[str, ...], after_id: int) -> int:
        """The summed importance of ``owner``'s memories of ``kinds`` after id ``after_id`` (buffered ones too)."""
        owner = self._name(owner)
        first = self._max_id + 1
        waiting = sum(int(self._buffer[p].importance or 0) for p in self._buffered_at.get(owner, ())
                      if self._buffer[p].kind in kinds and first + p > after_id)
        return self.store.importance_since(owner, kinds, after_id) + waiting

    def last_id(self, owner: str) -> int:
        """The id of ``owner``'s newest memory (buffered ones too), 0 if it has none."""
        owner = self._name(owner)
        waiting = self._buffered_at.get(owner)
        return self._max_id + 1 + waiting[-1] if waiting else self.store.last_id(owner)

    def reflected_through(self, owner: str) -> int:
        """The id through which ``owner`` last reflected (0 if never): the reflection trigger counts
        what came after it. Kept in the stream file, so it survives a reopen."""
        key = reflected_key(self._name(owner))
        return int(self._buffered_meta.get(key) or self.store.get_meta(key) or 0)

    def mark_reflected(self, owner: str, through_id: int) -> None:
        """Record that ``owner`` reflected on its memories through ``through_id`` (written with the
        buffer, in its transaction, so a reflection's insights and its mark land together)."""
        self._writable()
        self._buffered_meta[reflected_key(self._name(owner))] = str(int(through_id))
        if not self._buffer:
            self.flush()

    def has(self, owner: str) -> bool:
        """Whether ``owner`` has any memory (constant time: a simulation asks this for every agent)."""
        owner = self._name(owner)
        if owner in self._buffered_at:
            return True
        self._catch_up()
        index = self._owners.get(owner)
        return index is not None and len(index) > 0

    def owners(self) -> list[str]:
        self._ready()
        return sorted(o for o, ix in self._owners.items() if len(ix))

    def count(self, owner: str | None = None) -> int:
        if owner is None:
            self._ready()
            return sum(len(ix) for ix in self._owners.values())
        owner = self._name(owner)
        self._ready(owner)
        return len(self._owners[owner]) if owner in self._owners else 0

    def latest_time(self, owner: str) -> datetime:
        """The owner's own clock: its latest creation or access time (in its newest memory's zone)."""
        index = self._owner(owner)
        newest = int(index.ids.values[-1])
        zone = self._read({newest: float(index.last_access_s.values[-1])})[newest].created_at.tzinfo
        return from_epoch(float(index.last_access_s.values.max())).astimezone(zone)

    # -- state -------------------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        """Everything in the stream as JSON-ready data (memories and the access log)."""
        return {
            "embedder": self.embedder.name,
            "memories": [{k: v for k, v in m.to_dict().items() if k != "last_accessed_at"}
                         for o in self.owners() for m in self.memories(o)],
            "accesses": [[mid, at] for o in self.owners() for mid, at in self.store.access_log(o)],
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Load :meth:`get_state` output into this (empty) stream, keeping ids."""
        if self.count():
            raise MemstreamError("set_state needs an empty stream")
        memories = sorted(state["memories"], key=lambda m: m["id"])
        offset = self.store.next_id()
        if any(m["id"] != offset + i for i, m in enumerate(memories)):
            raise MemstreamError("state ids are not consecutive from 1; it was not made by get_state")
        self.extend(new_memory(**{k: v for k, v in m.items() if k != "id"}) for m in memories)
        owner_of = {m["id"]: m["owner"] for m in memories}
        for mid, at in state["accesses"]:
            self.record_access(owner_of[mid], [mid], datetime.fromisoformat(at))

    def as_it_stood(self, at: datetime, mark: StreamMark | None = None) -> MemoryStream:
        """This stream as it stood at ``at``, to retrieve from (read-only): a view over the same file and indexes,
        no copy. Its retrievals (at ``at`` or later) see only the memories made by ``at`` (and, given the
        ``mark`` taken then, only those through it), each last accessed as the access log stood then.

        What a run's look back at hour H reads: with the mark of its checkpoint at H, that is the stream rewound
        to the mark, without rewinding anything (``tests/sim/test_checkpoints.py``). Closing the view leaves the
        stream open."""
        self._ready()
        view = copy.copy(self)
        view._through = (require_aware(at, "at").timestamp(),
                         self._max_id if mark is None else min(self._max_id, mark.memories_through),
                         self._access_rowid if mark is None else min(self._access_rowid, mark.accesses_through))
        return view

    def mark(self) -> StreamMark:
        """How far the stream has been written, buffer included: what a checkpoint records."""
        self.flush()
        return self.store.mark()

    def backup(self, path: str | Path) -> None:
        """A consistent copy of the whole stream file at ``path`` (SQLite's online backup), buffer included."""
        self.flush()
        self.store.backup(path)

    def close(self) -> None:
        """Write the buffer, then close the file (a view's close leaves its stream's file open)."""
        if self._through is not None:
            return
        try:
            if not self.store.readonly:
                self.flush()
        finally:
            self.store.close()

    def __enter__(self) -> MemoryStream:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"MemoryStream({self.path!r}, embedder={self.embedder.name!r}, "
                f"owners={len(self.owners())}, memories={self.count()})")


_NO_IMPORTANCE = ("a memory needs its importance (1-10); rate it first with memstream.stream.rate_importance "
                  "(or the importance stage)")


def _parse(row: Row) -> Memory:
    """A stored row as a memory, last accessed when it was created."""
    mid, owner, kind, text, created_at, _created_s, importance, cites, metadata = row
    try:
        created = datetime.fromisoformat(created_at)
    except (TypeError, ValueError):  # what the damage screen's SQL let through: refused in one line
        raise MemstreamError(f"memory {mid} is damaged (creation time {str(created_at)[:40]!r}); "
                             "run memstream check on the stream file") from None
    return Memory(mid, owner, kind, text, created, created, importance,
                  tuple(json.loads(cites)) if cites != "[]" else (),
                  json.loads(metadata, object_hook=ReadOnlyDict) if metadata != "{}" else NO_METADATA)


def _accessed(memory: Memory, last_access_s: float) -> Memory:
    """``memory`` as last accessed at ``last_access_s`` (an access is never before its creation)."""
    created = memory.created_at
    if last_access_s <= created.timestamp():
        return memory if memory.last_accessed_at == created else memory._replace(last_accessed_at=created)
    return memory._replace(last_accessed_at=from_epoch(last_access_s).astimezone(created.tzinfo))




