"""``facts``: atomic, versioned facts about each owner, extracted as they are said (``memstream.facts``).

The shape the issue names from Graphiti (validity windows), Mem0 (extract, then add/update/none
against the related memories; add-only since its 2026 update) and a graph vendor's versioned
records. Per turn: one extraction request (the message with the recent turns, including the
previous assistant message, the facts already known about it and the date); for each candidate
with related current facts (a shared keyword, or a dense cosine of at least ``related_similarity``),
one classification request: new, duplicate, update (a new version that closes the old one) or
extend. An episode is never an update of another (what happened stays true). Everything for a turn
is written in one transaction (:func:`memstream.facts.apply`), idempotently: a retried turn has the
same source key.

The context: the owner's profile (derived from current preferences) under its share of the budget,
then the facts the read path ranks (current versions; earlier ones too when the question asks about
history: "used to", "previously", "changed"...), each under the date it became true, with its
sources as provenance. Consolidation runs the expiry sweeper.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from pydantic import Field, model_validator

from memstream.designs import prompts
from memstream.designs.base import DesignConfig, MemoryDesign, OwnFile, check_budget, own_config
from memstream.designs.context import Context, Fit, Line, fit_best
from memstream.designs.entries import Entry
from memstream.designs.facts_file import FactsFile, source_key_problems
from memstream.designs.log import stamped
from memstream.designs.parse import ExtractedFact, Verdict, parse_extracted, verdict_parser
from memstream.designs.state import DesignState
from memstream.designs.tiers import Tier, assemble, fill_tiers
from memstream.errors import MemstreamError
from memstream.facts import (
    Action,
    Change,
    Fact,
    FactStore,
    NewFact,
    Source,
    View,
    apply,
    check_facts_file,
    profile,
    recall,
    sweep,
)
from memstream.models import Embedder, Request, Stage
from memstream.stream import normalise_owner
from memstream.timeutil import from_epoch, to_epoch

#: Words that ask about what was true before (the context then shows earlier versions too).
HISTORY = re.compile(r"\b(used to|previous(ly)?|originally|at first|initially|former(ly)?|chang(e|ed|es)|anymore|"
                     r"no longer|in the past|earlier|history)\b", re.IGNORECASE)


class FactsConfig(DesignConfig):
    """The ``facts`` design's settings: its file, tenant, and how many facts it extracts and recalls."""

    path: str = Field(default=":memory:", description="the facts file (:memory: keeps it in RAM)")
    tenant: str = ""
    max_facts: int = Field(default=8, gt=0, description="facts extracted from a message at most")
    recent_turns: int = Field(default=4, ge=0, description="earlier turns shown to the extraction")
    related: int = Field(default=5, gt=0, description="known facts shown to extraction and classification")
    related_similarity: float = Field(default=0.5, ge=-1, le=1)
    recall_k: int = Field(default=80, gt=0, description="facts ranked before the budget is filled")
    profile_share: float = Field(default=0.1, ge=0, le=1)


class FactsState(DesignState):
    """The state of ``facts``: the facts file itself (its bytes, base64) for a store kept in memory, else its
    path. The store keeps every owner's facts, versions and sources in their own rows already."""

    db: str | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _one(self) -> FactsState:
        if (self.db is None) == (self.path is None):
            raise ValueError("a facts state holds either the store's bytes (db) or its path, one of them")
        return self


class FactsDesign(MemoryDesign[FactsState]):
    """Versioned facts as a memory design: facts extracted from each message, corrected, expired and deleted,
    current ones recalled.
    """

    name = "facts"
    records_stay = "its facts are extracted from the turns and would still hold the text"
    Config = FactsConfig
    State = FactsState
    config: FactsConfig

    @classmethod
    def made(cls, config: DesignConfig, embedder: Embedder | None = None) -> FactsDesign:
        return cls(own_config(config, FactsConfig), embedder=embedder)

    keeps_own_file = True  # a facts file (its own tables, FTS and vectors), not the store's rows
    store_settings = frozenset({"path", "tenant"})  # the store's file beside it, and its scope

    def __init__(self, config: FactsConfig | None = None, *, embedder: Embedder | None = None) -> None:
        super().__init__(config)
        self.given_embedder = embedder  # a file opened later is read with it (None: the file's own)
        self.store = FactStore(self.config.path, embedder)  # a file reopens with its own embedder
        self.embedder = self.store.embedder
        #: The tenant the facts are written under and read from (a design store's scope, once attached).
        self.tenant = self.config.tenant
        #: A turn's source key (a design store keys it by the entry's own key: :mod:`.facts_file`).
        self.source_key: Callable[[Entry], str] = entry_key

    def attach_file(self, path: str, scope: str, *, read_only: bool = False) -> OwnFile:
        return FactsFile(self, path, scope, read_only=read_only)

    @classmethod
    def check_own_file(cls, path: str) -> list[str]:
        return check_facts_file(path, also=source_key_problems)

    # -- writing ---------------------------------------------------------------------------------

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        owner = normalise_owner(owner)
        c = self.config
        if not entries:
            return []
        recent = self._recent(owner)
        asks = []
        for e in entries:
            known = [f.text for f in self._related(owner, e.text, e.at)]
            asks.append(Request(prompts.EXTRACT_PURPOSE, prompts.extract_messages(
                e.text, e.source, recent[-c.recent_turns:] if c.recent_turns else [], known,
                e.at.strftime("%A %d %B %Y"), c.max_facts), parse_extracted))
            recent.append(e.text)
        extracted: list[list[ExtractedFact] | None] = yield asks
        ids = []
        for e, found in zip(entries, extracted, strict=True):
            candidates = [x for x in (_new_fact(x, e.at) for x in (found or [])[:c.max_facts]) if x is not None]
            changes = yield from self._classify_stage(owner, candidates, e.at)
            source = Source(self.source_key(e), e.text, e.at)
            apply(self.store, owner, source, changes, tenant=self.tenant)
            written = self.store.source_id(self.tenant, owner, source.key)
            assert written is not None, "apply writes the turn's source in its transaction"
            ids.append(written)
        return ids

    def _classify_stage(self, owner: str, candidates: list[NewFact], at: datetime) -> Stage[list[Change]]:
        """Each candidate against the owner's related current facts, one batch of requests; a candidate
        with none related is new without asking."""
        related = [self._related(owner, x.text, at) for x in candidates]
        asks = [Request(prompts.CLASSIFY_PURPOSE, prompts.classify_messages(x.text, [f.text for f in near]),
                        verdict_parser(len(near))) for x, near in zip(candidates, related, strict=True) if near]
        answered: list[Verdict | None] = (yield asks) if asks else []
        verdicts = iter(answered)
        changes = []
        for x, near in zip(candidates, related, strict=True):
            v = next(verdicts) if near else None
            action: Action = v.action if v is not None else "new"
            if action == "update" and x.kind == "episode":
                action = "new"  # what happened once stays true; it is not a new version of another
            target = v.target if v is not None and action != "new" else None
            changes.append(Change(action, x, near[target - 1].id if target is not None else None))
        return changes

    def _related(self, owner: str, text: str, at: datetime) -> list[Fact]:
        c = self.config
        hits = recall(self.store, owner, text, at, k=c.related, tenant=self.tenant)
        return [h.fact for h in hits if "bm25" in h.via or h.similarity >= c.related_similarity]

    def _recent(self, owner: str) -> list[str]:
        rows = self.store.db.execute("SELECT text FROM sources WHERE tenant=? AND owner=? ORDER BY at_s DESC, id "
                                     "DESC LIMIT ?", (self.tenant, owner, self.config.recent_turns)).fetchall()
        return [r[0] for r in reversed(rows)]

    def consolidate_stage(self, owner: str, now: datetime) -> Stage[int]:
        """The expiry sweeper (no model)."""
        return sweep(self.store, now, owner=owner, tenant=self.tenant)
        yield

    # -- reading -----------------------------------------------------------------------------------

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        owner, c = normalise_owner(owner), self.config
        view: View = "history" if HISTORY.search(query) else "current"
        hits = recall(self.store, owner, query, now, k=c.recall_k, view=view, tenant=self.tenant)
        pinned = [(f.id, fact_line(f)) for f in self._profile(owner, now)]

        def facts(room: int, fits: Mapping[str, Fit]) -> Fit:
            shown = {i for i, x in pinned if x in fits["preferences"].kept}  # facts, by id: not twice
            return fit_best((fact_line(h.fact) for h in hits if h.fact.id not in shown), room)

        fits = fill_tiers([Tier("preferences", lambda room, _: fit_best((x for _, x in pinned), room), c.profile_share),
                           Tier("facts", facts)], budget_tokens)
        return assemble(fits, ("preferences", "facts"), budget_tokens, in_time={"preferences", "facts"})

    def _profile(self, owner: str, now: datetime) -> list[Fact]:
        """The profile's preferences that are still current now."""
        _, ids = profile(self.store.db, self.tenant, owner)
        return [f for f in self.store.facts(ids) if f.current and f.created_s <= to_epoch(now)
                and (f.expires_s is None or f.expires_s > to_epoch(now))]

    # -- state --------------------------------------------------------------------------------------

    def get_state(self) -> FactsState:
        """The whole store (the facts file's bytes) for an in-memory store; a file-backed store is its file."""
        if not self.store.in_memory:
            return FactsState(path=self.config.path)
        return FactsState(db=base64.b64encode(self.store.dump_bytes()).decode("ascii"))

    def set_state(self, state: FactsState) -> None:
        if state.path is not None:
            if state.path != self.config.path:
                raise MemstreamError(f"this facts state is the file {state.path}; set path to it")
            return
        self.store.load_bytes(base64.b64decode(state.db or "", validate=True))


def _new_fact(x: ExtractedFact, at: datetime) -> NewFact | None:
    """The candidate as a fact to write; None for one the store would refuse (its text is checked
    again there: the parser's cleaning and the store's rules are two guards, not one)."""
    try:
        return NewFact(x.text, x.kind, x.salience, 1.0, tuple(x.entities), x.event_at,
                       at + timedelta(days=x.expires_in_days) if x.expires_in_days else None)
    except MemstreamError:
        return None


def entry_key(e: Entry) -> str:
    """A turn's source key: the same turn written again (a retry) is the same source."""
    return hashlib.sha256(json.dumps([e.at.isoformat(), e.source, e.session, e.text]).encode()).hexdigest()[:24]


def fact_line(f: Fact) -> Line:
    """A fact as the context shows it, under the date it became true; an earlier version says until when."""
    text = f.text
    if not f.is_latest and f.valid_to_s is not None:
        text += f" (held until {from_epoch(f.valid_to_s):%d %B %Y}; since changed)"
    return stamped(text, f.sources, from_epoch(f.valid_from_s))
