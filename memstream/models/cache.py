"""Record/replay of model calls in SQLite, so a re-run costs nothing and replays exactly.

The key is a hash of the model name, the messages and the call parameters. In
``record`` mode a miss goes to the wrapped model and is stored; in ``replay``
mode a miss is an error, which proves a run used no live model; in ``read`` mode
(a command that only reads, on media it cannot write) the cache answers what it
holds and a miss goes to the model without being stored.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np

import memstream.sqlite as sqlite
from memstream.errors import CallsFailedError, EndpointFailingError, ReplayMissError
from memstream.models.base import Call, ChatModel, Completion, Embedder, Failure, Message, Outcome, SamplingParams

#: A call cache records no marker (it never did): a file whose tables include ``calls`` and that says it
#: is no other store is one.
CALL_CACHE = sqlite.StoreKind(noun="call cache", marker=None, tables=frozenset({"calls"}),
                              make="a run or a command with --cache records one")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls(
  key TEXT PRIMARY KEY, model TEXT NOT NULL, purpose TEXT NOT NULL, response TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, latency_s REAL NOT NULL);
CREATE TABLE IF NOT EXISTS call_owners(owner TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (owner, key)) WITHOUT ROWID;
"""
#: ``call_owners``: which calls were made for whom (an owner's tag, a digest that names nobody, see
#: :meth:`CachedChatModel.for_owner`), so that forgetting an owner finds every call made for them.


#: A text shorter than this is not looked for in cached answers when an owner is forgotten: it would match
#: the answers of every other owner too ("yes", a number), and quotes nothing of theirs.
MIN_QUOTE = 8


def quoting(texts: Sequence[str]) -> list[str]:
    """What to look for in a cached answer to find one that quotes any of ``texts``: each text as written
    and as a JSON string spells it (an answer is often JSON), the short ones left out (:data:`MIN_QUOTE`)."""
    wanted = {t.strip() for t in texts if len(t.strip()) >= MIN_QUOTE}
    return sorted(wanted | {json.dumps(t)[1:-1] for t in wanted} | {json.dumps(t, ensure_ascii=False)[1:-1]
                                                                      for t in wanted})


def forget_owner_calls(db: sqlite.Connection, tag: str, texts: Sequence[str]) -> int:
    """Delete every cached call made for the owner tagged ``tag`` (:meth:`CachedChatModel.for_owner`) and every
    one whose answer quotes one of ``texts`` (the owner's records, facts, insights: a call made by a runner that
    tagged nothing), with ``secure_delete`` so their bytes are overwritten, then empty the write-ahead log; the
    calls deleted.

    The cache keeps a request only as its hash (:func:`call_key`), so what can quote an owner is the answer; a
    call another owner asked too (the same question) goes as well, and is asked again when next needed."""
    sqlite.create_tables(db, _SCHEMA, {})  # a cache made before owners were tagged
    needles = quoting(texts)
    db.execute("PRAGMA secure_delete=ON")
    with sqlite.transaction(db):
        doomed = {key for (key,) in db.execute("SELECT key FROM call_owners WHERE owner=?", (tag,))}
        if needles:
            doomed |= {key for key, response in db.execute("SELECT key, response FROM calls")
                       if any(n in response for n in needles)}
        db.executemany("DELETE FROM calls WHERE key=?", [(k,) for k in sorted(doomed)])
        db.executemany("DELETE FROM call_owners WHERE key=?", [(k,) for k in sorted(doomed)])
        db.execute("DELETE FROM call_owners WHERE owner=?", (tag,))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return len(doomed)


def forget_in_cache(path: str | Path, tag: str, texts: Sequence[str]) -> int:
    """:func:`forget_owner_calls` on the call cache file at ``path`` (refused in one line if it is not one)."""
    db = sqlite.connect(path, kind=CALL_CACHE, create=False)
    try:
        return forget_owner_calls(db, tag, texts)
    finally:
        db.close()


def call_key(model: str, messages: list[Message], params: Mapping[str, object]) -> str:
    blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class CachedChatModel(ChatModel):
    """Wraps a chat model with a persistent call cache; counts cache hits in its usage."""

    def __init__(
        self, inner: ChatModel, path: str | Path, mode: Literal["record", "replay", "read"] = "record"
    ) -> None:
        super().__init__()
        self.inner = inner
        self.name, self.seed = inner.name, inner.seed
        self.mode = mode
        self._lock = threading.Lock()
        self._owner = threading.local()  # whom this thread's calls are made for (see for_owner)
        reads_only = mode == "read"
        if reads_only and not Path(path).is_file():
            path = ":memory:"  # nothing recorded yet: a cache of this command's own calls, kept nowhere
        self._db = sqlite.connect(path, kind=CALL_CACHE, read_only=reads_only and str(path) != ":memory:")
        if not self._db.read_only:
            sqlite.create_tables(self._db, _SCHEMA, {})

    @property
    def failing(self) -> str | None:
        """The wrapped model's: a cache answers nothing it was not given."""
        return self.inner.failing

    def _lookup(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT response, prompt_tokens, completion_tokens FROM calls WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            return None
        return Completion(text=row[0], prompt_tokens=row[1], completion_tokens=row[2], cached=True, attempts=0)

    def _store(self, answered: list[tuple[str, str, Completion]]) -> None:
        """Keep answers, (key, purpose, completion) each, in one transaction. A back-end that answers
        piece by piece (a server) has each answer kept as it arrives (``on_answer``), so a stop mid-batch
        pays for none of them again; the rest (the offline rules, a test's model) are kept a batch in one
        commit (one commit a call was a sixth of a 10,000-agent run's own work)."""
        rows = [(key, self.name, purpose, c.text, c.prompt_tokens, c.completion_tokens, c.latency_s)
                for key, purpose, c in answered]
        if not rows or self._db.read_only:
            return
        with self._lock, sqlite.transaction(self._db):
            self._db.executemany("INSERT OR REPLACE INTO calls VALUES (?,?,?,?,?,?,?)", rows)

    def _generate(self, messages: list[Message], purpose: str, params: SamplingParams) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls: list[Call], params: SamplingParams) -> list[Completion]:
        keyed = {**params, "seed": self.seed} if self.seed else params  # seed 0 (the default) keys as none
        keys = [call_key(self.name, messages, keyed) for _, messages in calls]
        self._tag(keys)
        results: list[Outcome | None] = [self._lookup(k) for k in keys]
        missing = [i for i, r in enumerate(results) if r is None]
        if missing and self.mode == "replay":
            raise ReplayMissError(
                f"{len(missing)} call(s) ({calls[missing[0]][0]}, ...) are not in the replay cache; "
                "run in record mode to make them"
            )
        if missing:
            first = {keys[i]: i for i in reversed(missing)}  # ask each distinct question once
            unique = sorted(first.values())
            failed: CallsFailedError | EndpointFailingError | None = None
            kept: set[int] = set()

            def keep(j: int, completion: Completion) -> None:  # each answer as it arrives
                self._store([(keys[unique[j]], calls[unique[j]][0], completion)])
                kept.add(unique[j])

            self.inner.on_answer = keep
            try:
                answered: list[Outcome] = list(self.inner._generate_many([calls[i] for i in unique], params))
            except (CallsFailedError, EndpointFailingError) as error:  # keep what the batch did get
                if len(error.partial) != len(unique):
                    raise
                answered, failed = list(error.partial), error
            finally:
                self.inner.on_answer = None
            fresh = dict(zip(unique, answered, strict=True))
            self._store([(keys[i], calls[i][0], c) for i, c in fresh.items()
                         if isinstance(c, Completion) and i not in kept])
            for i in missing:
                source = fresh[first[keys[i]]]
                if i in fresh:
                    results[i] = source
                elif isinstance(source, Failure):  # the same question, not asked again
                    results[i] = Failure(0, source.error)
                else:
                    results[i] = Completion(source.text, source.prompt_tokens, source.completion_tokens,
                                            cached=True, attempts=0)
            if failed is not None:
                failed.partial = [r for r in results if r is not None]
                raise failed
        return [r for r in results if isinstance(r, Completion)]

    @contextmanager
    def for_owner(self, tag: str) -> Iterator[None]:
        """Inside, every call this thread makes (answered from the cache or not) is recorded as made for the
        owner tagged ``tag`` (a digest: the cache never names an owner), so :meth:`forget_owner` finds it."""
        self._owner.tag = tag
        try:
            yield
        finally:
            self._owner.tag = None

    def forget_owner(self, tag: str, texts: Sequence[str]) -> int:
        """Delete the cached calls made for ``tag``'s owner or quoting ``texts`` (:func:`forget_owner_calls`)."""
        with self._lock:
            return forget_owner_calls(self._db, tag, texts)

    def _tag(self, keys: Sequence[str]) -> None:
        tag = getattr(self._owner, "tag", None)
        if tag is None or not keys or self._db.read_only:
            return
        with self._lock, sqlite.transaction(self._db):
            self._db.executemany("INSERT OR IGNORE INTO call_owners VALUES (?,?)", [(tag, k) for k in set(keys)])

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        self._db.close()


class CachedEmbedder(Embedder):
    """Remembers the vectors of recent texts: a simulation observes the same sentences again and again.

    Same name and dimension as the wrapped embedder, and the same vectors, so a stream
    cannot tell the difference.
    """

    def __init__(self, inner: Embedder, size: int = 100_000) -> None:
        self.inner, self.size = inner, size
        self.name, self.dim = inner.name, inner.dim
        self._vectors: dict[str, np.ndarray] = {}
        self.hits = self.misses = 0

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The wrapped embedder's rows (already normalised), each text embedded once while it is remembered."""
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            for text, vector in zip(missing, self._embed(missing), strict=True):
                self._vectors[text] = vector
            while len(self._vectors) > self.size:
                del self._vectors[next(iter(self._vectors))]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._vectors[t] for t in texts])
