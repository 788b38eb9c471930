"""The ``facts`` design's memory in a facts file of its own beside a design store (``PATH.facts``).

A facts file is its own kind (facts, versions, sources, edges, FTS; marked in its own ``meta``), so it is
kept beside the store, not in its tables. What the store needs of it:

- **Scopes**: the facts file has a tenant key; the store's scope is the tenant (so the design's own
  ``tenant`` and ``path`` settings are the store's to set: given by the user in a store, they are refused).
- **Idempotent writes**: a turn's source key is the entry's key followed by what the entry says beside its
  text (:func:`stored_source_key`: its time, source, kind and session, kept so ``export`` gives the entry
  back); a write looks each entry up by that key first, and the facts store writes a source once
  (its ``(tenant, owner, key)`` is unique, checked inside the write's transaction).
- **Commit**: each turn is written in one transaction of its own as the design's stage runs (the facts
  store's :func:`~memstream.facts.apply`), so nothing waits to be committed.
- **Forget**: :func:`~memstream.facts.erase_owner` (every fact, version, source, edge, entity, cached vector,
  profile and audit record of the owner), then the file rewritten and its write-ahead log emptied.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from memstream.designs.entries import Entry, Record
from memstream.facts import FactStore, erase_owner
from memstream.models import Embedder
from memstream.stream import unreadable_time_sql

#: Between the entry's key and the rest in a source key (keys never hold it: ``id:``/``sha256:`` text).
KEY_END = "\x1f"


def stored_source_key(e: Entry) -> str:
    """A turn's source key in a design store: the entry's key, then its time, source, kind and session."""
    return e.key + KEY_END + json.dumps([e.at.isoformat(), e.source, e.kind, e.session], ensure_ascii=False)


#: What a source key says beside the entry's key (its JSON), in SQL.
_SAID = f"substr(key, instr(key, char({ord(KEY_END)})) + 1)"
#: The condition true for a source key the store wrote whose JSON is not what :func:`stored_source_key`
#: writes (a screen in SQL, so a read of a large owner costs no Python per turn; :func:`_said` decides).
_UNREADABLE_SAID = (f"instr(key, char({ord(KEY_END)})) > 0 AND CASE WHEN NOT json_valid({_SAID}) THEN 1 "
                    f"WHEN json_type({_SAID}) != 'array' OR json_array_length({_SAID}) != 4 THEN 1 "
                    f"WHEN json_type({_SAID}, '$[1]') != 'text' OR json_type({_SAID}, '$[2]') != 'text' "
                    f"OR json_type({_SAID}, '$[3]') != 'text' THEN 1 "
                    f"ELSE ({unreadable_time_sql(f'json_extract({_SAID}, {chr(39)}$[0]{chr(39)})')}) END")


def source_key_problems(db: sqlite3.Connection) -> list[str]:
    """Every source of the facts file whose key, as a design store wrote it, cannot be read back (a line each):
    what ``check`` adds for a facts file beside a store."""
    problems = []
    for sid, owner, key, at_s in db.execute(f"SELECT id, owner, key, at_s FROM sources WHERE {_UNREADABLE_SAID}"):
        try:
            _said(key, at_s)
        except (ValueError, TypeError) as e:
            problems.append(f"source {sid} of {owner!r}: what it says beside its text is unreadable ({str(e)[:60]})")
    return problems[:50]


class FactsHolder(Protocol):
    """What of the facts design its file needs (the design is :class:`~memstream.designs.FactsDesign`)."""

    given_embedder: Embedder | None
    store: FactStore
    embedder: Embedder
    tenant: str
    source_key: Callable[[Entry], str]

    @property
    def config(self) -> BaseModel: ...


class FactsFile:
    """The facts design's memory in the facts file at ``path``, for owners in ``scope`` (the tenant)."""

    #: Each turn is its own transaction, committed as the design's stage writes it (its facts are classified
    #: against the turns before it): a write refused midway keeps the turns before, each whole.
    commits_as_written = True

    def __init__(self, design: FactsHolder, path: str, scope: str, *, read_only: bool = False) -> None:
        made = type(design.config)()
        assert all(getattr(design.config, s) == getattr(made, s) for s in ("path", "tenant")), \
            "open_design refuses a user's path or tenant in a store"
        self.design, self.path, self.scope = design, path, scope
        design.tenant, design.source_key = scope, stored_source_key
        #: Per owner: its turns' count and newest id when last screened, the problems found then, and the
        #: file's change marks then (another connection's commits, this one's changes).
        self._screened: dict[str, tuple[int, int, list[str], tuple[int, int]]] = {}
        if read_only and not Path(path).exists():
            return  # nothing written yet: the design's empty store in memory is what there is to read
        store = FactStore(path, design.given_embedder, readonly=read_only, create=not read_only)
        design.store.close()
        design.store, design.embedder = store, store.embedder

    @property
    def db(self) -> sqlite3.Connection:
        return self.design.store.db

    def owner_key(self, owner: str) -> str:
        return owner

    def damage(self, key: str) -> list[str]:
        """The owner's turns whose time, source, kind or session cannot be read back, and a profile whose
        facts are not a list of ids. Turns are screened once: a context or write screens only the turns added
        since (screening every turn cost 120 ms at 10,000), unless some went meanwhile (a forget)."""
        where = (self.scope, key)
        moved = (self.db.execute("PRAGMA data_version").fetchone()[0], self.db.total_changes)  # others', its own
        seen = self._screened.get(key)
        if seen is not None and seen[3] == moved:  # nothing written since: the turns are as screened
            return self._with_profile(key, seen[2])
        count, newest = self.db.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM sources WHERE tenant=? AND "
                                        "owner=?", where).fetchone()
        if seen is None or (count, newest) != seen[:2]:
            after = seen[1] if seen is not None and newest >= seen[1] else 0
            added = self.db.execute("SELECT COUNT(*) FROM sources WHERE tenant=? AND owner=? AND id > ?",
                                    (*where, after)).fetchone()[0]
            appended = seen is not None and seen[0] + added == count  # only turns added: screen those (else all)
            found = list(seen[2]) if seen is not None and appended else []
            for sid, skey, at_s in self.db.execute(f"SELECT id, key, at_s FROM sources WHERE id > ? AND tenant=? "
                                                   f"AND owner=? AND {_UNREADABLE_SAID}",
                                                   (after if appended else 0, *where)):
                try:
                    _said(skey, at_s)
                except (ValueError, TypeError) as e:
                    found.append(f"source {sid}: {str(e)[:60]}")
        else:
            found = seen[2]
        self._screened[key] = (count, newest, found, moved)
        return self._with_profile(key, found)

    def _with_profile(self, key: str, problems: list[str]) -> list[str]:
        row = self.db.execute("SELECT fact_ids FROM profiles WHERE tenant=? AND owner=?", (self.scope, key)).fetchone()
        return [*problems, "its profile's facts are not a list of ids"] if row is not None and not _ids(row[0]) \
            else list(problems)

    def owners(self) -> list[str]:
        return [o for (o,) in self.db.execute("SELECT owner FROM sources WHERE tenant=? GROUP BY owner "
                                              "ORDER BY MIN(id)", (self.scope,))]

    def records(self, key: str, owner: str) -> list[Record]:
        """The owner's turns (the facts' sources), in the order written."""
        out = []
        for sid, skey, text, at_s in self.db.execute("SELECT id, key, text, at_s FROM sources WHERE tenant=? AND "
                                                     "owner=? ORDER BY id", (self.scope, key)):
            at, source, kind, session = _said(skey, at_s)
            out.append(Record(sid, owner, text, at, source, kind, session))
        return out

    def entry_keys(self, key: str) -> dict[int, str]:
        return {sid: skey.split(KEY_END)[0] for sid, skey in self.db.execute(
            "SELECT id, key FROM sources WHERE tenant=? AND owner=?", (self.scope, key))}

    def known(self, key: str, keys: Sequence[str]) -> dict[str, int]:
        """Which entries the owner has (by the entry's key: the first part of the source key)."""
        found: dict[str, int] = {}
        for k in dict.fromkeys(keys):
            row = self.db.execute("SELECT MIN(id) FROM sources WHERE tenant=? AND owner=? AND key > ? AND key < ?",
                                  (self.scope, key, k + KEY_END, k + chr(ord(KEY_END) + 1))).fetchone()
            if row[0] is not None:
                found[k] = row[0]
        return found

    def commit(self, key: str, keys: Sequence[str]) -> bool:
        return True  # every turn committed as it was written

    def discard(self) -> None:
        """Nothing waits: each turn was its own transaction."""

    def texts(self, key: str) -> list[str]:
        """Every text of the owner's memory: turns, facts (every version), entities, the profile."""
        return [t for (t,) in self.db.execute(
            "SELECT text FROM sources WHERE tenant=?1 AND owner=?2 UNION SELECT text FROM facts WHERE tenant=?1 AND "
            "owner=?2 UNION SELECT e.name FROM entities e JOIN facts f ON f.id = e.fact_id WHERE f.tenant=?1 AND "
            "f.owner=?2 UNION SELECT text FROM profiles WHERE tenant=?1 AND owner=?2", (self.scope, key))]

    def forget(self, key: str) -> int:
        return erase_owner(self.design.store, key, datetime.now(UTC), tenant=self.scope)

    def close(self) -> None:
        self.design.store.close()


def _said(key: str, at_s: float) -> tuple[datetime, str, str, str]:
    """An entry's time, source, kind and session from its source key (a source the store did not key: its
    stored time and nothing else); ValueError for a key the store wrote that cannot be read back (it once
    read as that stored time and nothing else, so an export quietly lost the entry's source and session)."""
    if KEY_END not in key:
        return datetime.fromtimestamp(at_s, UTC), "", "turn", ""
    said = json.loads(key.split(KEY_END, 1)[1])
    if not (isinstance(said, list) and len(said) == 4 and all(isinstance(x, str) for x in said)):
        raise ValueError(f"{str(said)[:40]!r} is not [time, source, kind, session]")
    at, source, kind, session = said
    when = datetime.fromisoformat(at)
    if when.utcoffset() is None:
        raise ValueError(f"time {at[:40]!r} has no time zone")
    return when, source, kind, session


def _ids(text: str) -> bool:
    """Whether ``text`` is a JSON list of ids (what a profile's ``fact_ids`` holds)."""
    try:
        ids = json.loads(text)
    except (TypeError, ValueError):
        return False
    return isinstance(ids, list) and all(isinstance(i, int) for i in ids)
