"""An owner's records ready to rank: vectors, BM25 keys, importance and times, kept up to date lazily.

Writes append (a record changed alone, :meth:`RecordIndex.change`, is the exception: its vectors are made
again, the rest stays); the vectors of new records are made as they are written (one batch per write),
so the answer's path only embeds the query. The BM25 index is rebuilt after writes, at the owner's
consolidation (:meth:`RecordIndex.prepare`) or else at the next read that needs it.
A record's lexical keys are its text and, as ``memstream eval`` keys a LoCoMo turn, the record with
its neighbours in the same session under its date, so "Yes, last Tuesday!" is found through what
it answers.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

import bm25s
import numpy as np

from memstream.designs.entries import Record
from memstream.designs.retrievers import Signals, bm25_index, bm25_scores, query_tokens
from memstream.models import Embedder, windows
from memstream.stream import time_scope
from memstream.timeutil import to_epoch

#: Records either side of a record in its lexical key.
NEIGHBOURS = 1


class _Lexical(NamedTuple):
    """The BM25 indexes of an owner's records: over each text, and over each record's keys (two per record)."""

    text: bm25s.BM25 | None
    n_text: int
    keys: bm25s.BM25 | None
    n_keys: int
    starts: np.ndarray  # where each record's keys begin


class RecordIndex:
    """One owner's records as the retrievers see them."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self.records: list[Record] = []
        self.importance: list[float] = []
        self._chunks: list[np.ndarray] = []   # per record: its windows' vectors
        self._vectors: np.ndarray | None = None
        self._starts: np.ndarray | None = None
        self._bm25: _Lexical | None = None
        self._epochs: list[float] = []
        self._created_at: np.ndarray | None = None

    def add(self, records: list[Record], importance: list[float] | None = None) -> None:
        """Append ``records``: their vectors are made now (one batch), everything stacked over all records
        waits for the next query, so a write costs the same however many records the owner has."""
        self.records.extend(records)
        self.importance.extend(importance or [5.0] * len(records))
        self._epochs.extend(to_epoch(r.at) for r in records)
        self._created_at = None
        self._bm25 = None
        if self.embedder is not None:
            self._embed_new()

    def change(self, at: int, record: Record | None) -> None:
        """The record at ``at`` becomes ``record`` (the same id, another text: its vectors made again), or is
        dropped (None); what is stacked over every record is made again at the next query."""
        if record is None:
            del self.records[at], self.importance[at], self._epochs[at]
            if at < len(self._chunks):
                del self._chunks[at]
        else:
            self.records[at] = record
            if at < len(self._chunks):
                assert self.embedder is not None, "vectors are made only with an embedder"
                self._chunks[at] = self.embedder.embed(windows(record.text))
        self._created_at = self._vectors = self._starts = None
        self._bm25 = None

    @property
    def _created(self) -> np.ndarray:
        """Each record's time (epoch seconds), stacked at the first query after a write."""
        if self._created_at is None:
            self._created_at = np.asarray(self._epochs, dtype=np.float64)
        return self._created_at

    def prepare(self) -> None:
        """Bring the lexical index up to date now, off the answer's path."""
        if self.records:
            self._lexical()

    def __len__(self) -> int:
        return len(self.records)

    def _embed_new(self) -> None:
        missing = self.records[len(self._chunks):]
        if not missing:
            return
        assert self.embedder is not None, "a dense retriever needs an embedder"
        keys = [windows(r.text) for r in missing]
        flat = self.embedder.embed([w for k in keys for w in k])
        self._chunks.extend(np.split(flat, np.cumsum([len(k) for k in keys])[:-1]))
        self._vectors = self._starts = None  # stacked again at the next query

    def _stacked(self) -> tuple[np.ndarray, np.ndarray]:
        """Every record's window vectors in one matrix, and where each record's begin (made once per write)."""
        if self._vectors is None or self._starts is None:
            self._vectors = np.vstack(self._chunks)
            self._starts = np.cumsum([0] + [len(c) for c in self._chunks[:-1]])
        return self._vectors, self._starts

    def relevance(self, query: str) -> np.ndarray:
        """Each record's best-window cosine with ``query``."""
        self._embed_new()
        assert self.embedder is not None and self._chunks, "a dense retriever needs an embedder and a record"
        vectors, starts = self._stacked()
        q = self.embedder.embed([query])[0]
        return np.maximum.reduceat(vectors @ q, starts)

    def keys(self, i: int) -> list[str]:
        r = self.records[i]
        around = [x.text for x in self.records[max(0, i - NEIGHBOURS): i + NEIGHBOURS + 1] if x.session == r.session]
        return [r.text, f"[{r.at:%d %B %Y}] " + " / ".join(around)]

    def _lexical(self) -> _Lexical:
        if self._bm25 is None:
            docs = [r.text for r in self.records]
            keys = [k for i in range(len(self.records)) for k in self.keys(i)]
            self._bm25 = _Lexical(bm25_index(docs), len(docs), bm25_index(keys), len(keys),
                                  np.arange(0, len(keys), 2))
        return self._bm25

    def signals(self, query: str, now: datetime, *, dense: bool, lexical: bool) -> Signals:
        """What every retriever needs for ``query`` at ``now`` (zeros for what is not asked for)."""
        n = len(self.records)
        relevance = self.relevance(query) if dense else np.zeros(n, dtype=np.float32)
        bm25 = keyed = np.zeros(n)
        if lexical:
            lex = self._lexical()
            q = query_tokens(query)
            bm25 = bm25_scores(lex.text, lex.n_text, q, np.arange(lex.n_text))[0]
            keyed = bm25_scores(lex.keys, lex.n_keys, q, lex.starts)[0]
        scope = time_scope(query, now)
        in_scope = scope.contains(self._created).astype(np.float64) if scope is not None else np.zeros(n)
        return Signals(relevance, bm25, keyed, np.asarray(self.importance, dtype=np.float64), self._created,
                       to_epoch(now), in_scope)
