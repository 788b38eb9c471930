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

from pydantic import Field, JsonValue

from memstream.designs.base import MemoryDesign, check_budget
from memstream.designs.context import Context, Fit, Line, fit_best
from memstream.designs.entries import Entry
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


class ProfileDesign(MemoryDesign[ProfileState]):
    name = "profile"
    Config = ProfileConfig
    State = ProfileState
    config: ProfileConfig

    def __init__(self, config: ProfileConfig | None = None) -> None:
        super().__init__(config)
        self.store = ProfileStore(self.config.path or ":memory:")
        self.log = RecordLog()
        self.stats = Counters()
        self._lives: dict[str, tuple[int, list[Life]]] = {}

    def write_stage(self, owner: str, entries: Sequence[Entry]) -> Stage[list[int]]:
        records = self.log.append(owner, entries)
        step = self.config.turn_entries
        for start in range(0, len(entries), step):
            ids = [r.id for r in records[start:start + step]]
            yield from update_stage(self.store, normalise_owner(owner), entries[start:start + step], ids,
                                    self.config, self.stats)
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
        return self.stats.to_dict()

    # -- state ------------------------------------------------------------------------------------

    def get_state(self) -> ProfileState:
        """Each owner's records and, for a file kept in memory, every version of its files (a file on disk
        keeps its own; its path is in the settings); the counters."""
        records = self.log.saved()
        versions: dict[str, list[SavedVersion]] = {}
        for owner, scope, v in [] if self.config.path else self.store.everything():
            versions.setdefault(owner, []).append(SavedVersion.of(scope, v))
        return ProfileState(next_id=self.log.next_id, counters=Counters(**self.stats.to_dict()), owners={
            o: ProfileOwner(records=records[o].records if o in records else [], versions=versions.get(o, []))
            for o in dict.fromkeys([*records, *versions])})

    def set_state(self, state: ProfileState) -> None:
        self.log.restore(state.next_id, records_of(state.owners))
        self.stats = Counters(**state.counters.to_dict())
        if not self.config.path:
            self.store.restore((o, v.scope, v.version()) for o, saved in state.owners.items() for v in saved.versions)
        self._lives.clear()
