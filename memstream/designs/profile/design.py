"""``profile``: one structured file per owner and scope, read whole on every request, edited after each turn.

The design of a production agent's memory (and of ChatGPT's and Claude's memory profiles, CLAUDE.md
files): a small file always in the prompt instead of retrieval at read time. After each turn (a
``write_stage`` call; a long one in chunks of ``turn_entries``), in the background, a summariser and an
updater turn what happened into edit operations on the file, a safety check (``memstream.trust``)
passes every new text, compaction keeps the file near 6,000 characters in a strict keep order and
an 8,000-character cap refuses anything longer (:mod:`memstream.designs.profile.update`). Every
version is kept (:mod:`memstream.designs.profile.store`), so ``memstream profile blame`` can say
when a line disappeared and which edit removed it.

The context is the whole file; under a budget too small for it, its lines are kept in the same keep
order as compaction's (the cut counted). Its provenance is, for each line, the turn whose update
added it. :meth:`ProfileDesign.counters` says what the updates did (compactions, dropped edits ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import ClassVar, cast, overload

from pydantic import Field, JsonValue

from memstream.designs.base import MemoryDesign, OwnerRows, check_budget
from memstream.designs.context import Context, Fit, Line, fit_best
from memstream.designs.entries import Entry
from memstream.designs.ids import IdSource
from memstream.designs.log import RecordLog
from memstream.designs.profile.blame import Life, lives
from memstream.designs.profile.config import ProfileConfig
from memstream.designs.profile.store import ProfileStore, Version
from memstream.designs.profile.text import HEADING, priority, skeleton
from memstream.designs.profile.update import Counters, update_stage
from memstream.designs.state import DesignState, OwnerRecords, Saved, records_of
from memstream.designs.tiers import Tier, assemble, fill_tiers
from memstream.models import Stage, count_tokens
from memstream.stream import normalise_owner

TIER = "profile"


class SavedVersion(Saved):
    """One version of a file, as the state file keeps it: its scope, number, text, the edit that made it
    (the JSON the store keeps), when, and the record ids of the turn it came from."""

    scope: str
    n: int = Field(ge=1)
    text: str
    edit: dict[str, JsonValue]
    at: str
    made_s: float
    turns: list[int] = Field(default_factory=list)

    @classmethod
    def of(cls, scope: str, v: Version) -> SavedVersion:
        return cls(scope=scope, n=v.n, text=v.text, edit=v.edit, at=v.at, made_s=v.made_s, turns=list(v.turns))

    def version(self) -> Version:
        return Version(self.n, self.text, dict(self.edit), self.at, self.made_s, tuple(self.turns))


class ProfileOwner(OwnerRecords):
    """An owner's records and the versions of its files (one file per scope)."""

    versions: list[SavedVersion] = Field(default_factory=list)


class ProfileState(DesignState):
    """The state of ``profile``: each owner's records and file versions, and what the updates counted."""

    next_id: int = Field(default=1, ge=1)
    counters: Counters = Field(default_factory=Counters)
    owners: dict[str, ProfileOwner] = Field(default_factory=dict)


#: The log a design store keeps an owner's versions in.
VERSIONS = "versions"


class VersionLog(Sequence[JsonValue]):
    """An owner's versions as a store's log: its length, and the versions from a position on, read from the
    profile store only when asked (a store asks for those it has not written: a write reads what it adds)."""

    def __init__(self, store: ProfileStore, owner: str) -> None:
        self.store, self.owner = store, owner

    def __len__(self) -> int:
        return self.store.count(self.owner)

    @overload
    def __getitem__(self, index: int) -> JsonValue: ...
    @overload
    def __getitem__(self, index: slice) -> list[JsonValue]: ...

    def __getitem__(self, index: int | slice) -> JsonValue | list[JsonValue]:
        if isinstance(index, int):
            return self[index:index + 1 if index != -1 else None][0]
        start, stop, step = index.indices(len(self))
        items: list[JsonValue] = [SavedVersion.of(scope, v).model_dump(mode="json")
                 for scope, v in self.store.written_from(self.owner, start)[:max(0, stop - start)]]
        return items[::step]


class ProfileDesign(MemoryDesign[ProfileState]):
    """One structured file per owner, edited by targeted edits, every version kept (show, log, diff, blame)."""

    name = "profile"
    records_stay = "its profile file is edited from the records and would still hold the text"
    Config = ProfileConfig
    State = ProfileState
    config: ProfileConfig
    reads_query: ClassVar[bool] = False  # the same context for every query

    def __init__(self, config: ProfileConfig | None = None) -> None:
        super().__init__(config)
        self.store = ProfileStore(self.config.path or ":memory:")
        self.log = RecordLog()
        #: What the updates counted, per owner (a store keeps each owner's with it), and before (a state file's).
        self.stats: dict[str, Counters] = {}
        self.stats_before = Counters()
        self._lives: dict[str, tuple[int, list[Life]]] = {}

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        records = self.log.append(owner, entries)
        step = self.config.turn_entries
        for start in range(0, len(entries), step):
            ids = [r.id for r in records[start:start + step]]
            yield from update_stage(self.store, normalise_owner(owner), entries[start:start + step], ids,
                                    self.config, self.stats.setdefault(normalise_owner(owner), Counters()))
        return [r.id for r in records]

    def context(self, owner: str, query: str, now: datetime, budget_tokens: int) -> Context:
        check_budget(budget_tokens)
        owner = normalise_owner(owner)
        versions = self.versions(owner)
        if not versions:
            return Context([], budget_tokens)
        turns = {v.n: v.turns for v in versions}
        section = ""
        lines = []
        for position, life in enumerate(self._current(owner, versions)):
            heading = life.text.startswith(HEADING)  # the skeleton's: no turn's, and shown first
            section = life.text[len(HEADING):] if heading else section
            rank, ids = (-1, ()) if heading else (priority(section, life.text), turns[life.added])
            lines.append((rank, Line(life.text, count_tokens(life.text), ids, float(position))))
        ranked = [line for _, line in sorted(lines, key=lambda x: (x[0], x[1].order))]

        def whole_file(room: int, _: Mapping[str, Fit]) -> Fit:
            """The lines that fit, best first; every line left out counts as cut (every line is wanted)."""
            kept = fit_best(ranked, room).kept
            return Fit(kept, len(ranked) - len(kept), sum(x.tokens for x in ranked) - sum(x.tokens for x in kept))

        return assemble(fill_tiers([Tier(TIER, whole_file)], budget_tokens), (TIER,), budget_tokens, in_time={TIER})

    def _current(self, owner: str, versions: list[Version]) -> list[Life]:
        """The current file's lines (headings included) with the version each came from, made once per version."""
        cached = self._lives.get(owner)
        if cached is None or cached[0] != versions[-1].n:
            cached = self._lives[owner] = (versions[-1].n, lives(versions)[0])
        return cached[1]

    # -- what a library user or the scenario eval reads -------------------------------------------

    def file(self, owner: str) -> str:
        """``owner``'s file as it stands (the empty skeleton before the first update)."""
        latest = self.store.latest(normalise_owner(owner), self.config.scope)
        return latest.text if latest else skeleton(self.config.sections)

    def versions(self, owner: str) -> list[Version]:
        return self.store.versions(normalise_owner(owner), self.config.scope)

    def counters(self) -> dict[str, int]:
        """What the updates did, over every owner: ``updates`` (turns), ``versions`` written,
        ``edits_applied``, ``edits_rejected`` (anchor matched 0 or 2+ times, skeleton broken; retried),
        ``retries``, ``dropped_edits`` (never reached the file), ``blocked`` (by the safety check),
        ``check_failed`` (the check could not run: write skipped), ``compactions``, ``compactions_short``
        (short of the target: the turn's edits dropped), ``compacted_lines`` (dropped by compaction),
        ``refused_cap`` and ``failures`` (lost answers, lock time-outs, conflicts)."""
        return self._total().to_dict()

    def _total(self) -> Counters:
        total = self.stats_before.to_dict()
        for counted in self.stats.values():
            for name, n in counted.to_dict().items():
                total[name] += n
        return Counters(**total)

    # -- kept in a store ------------------------------------------------------------------------

    def owner_rows(self, owner: str) -> OwnerRows:
        """Records; what the updates counted, as a document; every version of the owner's files as a log (read
        only from where the store has them), unless the versions are in a profile file of their own (``path``)."""
        counted = self.stats.get(owner)
        docs: dict[str, JsonValue] = {"counters": dict(counted.to_dict())} if counted is not None else {}
        logs = {} if self.config.path else {VERSIONS: VersionLog(self.store, owner)}
        return OwnerRows(self.log.records(owner), docs=docs, logs=logs)

    def load_owner(self, owner: str, rows: OwnerRows) -> None:
        self.log.hold(owner, rows.records)
        if "counters" in rows.docs:
            self.stats[owner] = Counters(**cast(dict[str, int], rows.docs["counters"]))
        saved = [SavedVersion.model_validate(item) for item in rows.logs.get(VERSIONS, [])]
        if saved and not self.config.path:
            self.store.restore((owner, v.scope, v.version()) for v in saved)

    def drop_owner(self, owner: str) -> None:
        """Forget ``owner`` here: records, counts, and the versions held in memory (a profile file of its own,
        ``path``, keeps its versions: that file is the profile design's, not this memory's)."""
        self.log.drop(owner)
        self.stats.pop(owner, None)
        self._lives.pop(owner, None)
        if not self.config.path:
            self.store.erase(owner)

    def use_ids(self, ids: IdSource) -> None:
        self.log.ids = ids

    # -- state ------------------------------------------------------------------------------------

    def get_state(self) -> ProfileState:
        """Each owner's records and, for a file kept in memory, every version of its files (a file on disk
        keeps its own; its path is in the settings); the counters."""
        records = self.log.saved()
        versions: dict[str, list[SavedVersion]] = {}
        for owner, scope, v in [] if self.config.path else self.store.everything():
            versions.setdefault(owner, []).append(SavedVersion.of(scope, v))
        return ProfileState(next_id=self.log.next_id, counters=self._total(), owners={
            o: ProfileOwner(records=records[o].records if o in records else [], versions=versions.get(o, []))
            for o in dict.fromkeys([*records, *versions])})

    def set_state(self, state: ProfileState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
        self.stats, self.stats_before = {}, Counters(**state.counters.to_dict())
        if not self.config.path:
            self.store.restore((o, v.scope, v.version()) for o, saved in state.owners.items() for v in saved.versions)
        self._lives.clear()
