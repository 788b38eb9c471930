"""One turn's update of one profile file: summarise, ask for edits, check, apply, compact, cap, keep.

    lock owner+scope ─ summarise the turn ─ updater → edits ─ safety check on each new text ─ apply
        (a rejected edit: asked again with the reason, up to ``retries`` times)
    ─ past compact_at: merge (model) + drop in the keep order (code) toward compact_to; safety check on
      the whole result; short of the target → the turn's edits are dropped, the last good file stays
    ─ past the cap → refused, the last good file stays ─ append the version (with its edit) ─ unlock

Memory never breaks an answer: every failure (a lost answer, a check that cannot run, a conflict, a
database error) is logged, counted in :class:`Counters` and swallowed; the stage then returns None and
the file is what it was. One is not swallowed: a lock another live process held for longer than an
update waits (:class:`~memstream.designs.profile.store.LockTimeout`, naming the holder), since dropping
the turn silently loses what it said (a dead holder's lock is taken over at once, so this is rare).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from memstream.designs.entries import Entry
from memstream.designs.profile import prompts
from memstream.designs.profile.blame import Current
from memstream.designs.profile.compact import drop_to, words
from memstream.designs.profile.config import ProfileConfig
from memstream.designs.profile.parse import parse_edits, parse_merged, parse_summary
from memstream.designs.profile.store import LockTimeout, ProfileStore, Version
from memstream.designs.profile.text import USER, Add, EditRejected, Replace, apply_edit, check_file, skeleton
from memstream.models import Request, Stage
from memstream.trust import Verdict, gate_stage

log = logging.getLogger(__name__)


@dataclass
class Counters:
    """What the design's updates did, for the scenario eval and the answer table (a design's
    :meth:`~memstream.designs.profile.ProfileDesign.counters`). ``dropped_edits`` counts edits a turn
    asked for that never reached the file: rejected after every retry, blocked, or lost with a turn
    whose file was refused (compaction short of its target, the cap, a failed check)."""

    updates: int = 0
    versions: int = 0
    edits_applied: int = 0
    edits_rejected: int = 0
    retries: int = 0
    dropped_edits: int = 0
    blocked: int = 0
    check_failed: int = 0
    compactions: int = 0
    compactions_short: int = 0
    compacted_lines: int = 0
    refused_cap: int = 0
    failures: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class _Skip(Exception):
    """The turn's update stops here: the file stays as it was (the reason is logged, the count made)."""


def update_stage(store: ProfileStore, owner: str, entries: Sequence[Entry], turns: Sequence[int],
                 config: ProfileConfig, counters: Counters) -> Stage[Version | None]:
    """Update ``owner``'s file (in ``config.scope``) from one turn; the version written, or None."""
    counters.updates += 1
    try:
        with store.lock(owner, config.scope):
            return (yield from _update(store, owner, entries, turns, config, counters))
    except _Skip as why:
        log.warning("profile %s/%s: %s; the file is kept as it was", owner, config.scope, why)
    except LockTimeout:  # never dropped silently: the caller hears who holds the file
        counters.failures += 1
        raise
    except Exception as e:  # memory never breaks an answer: logged, counted, swallowed
        counters.failures += 1
        log.warning("profile %s/%s: update failed (%s: %s); the file is kept as it was", owner, config.scope,
                    type(e).__name__, e)
    return None


def _update(store: ProfileStore, owner: str, entries: Sequence[Entry], turns: Sequence[int],
            config: ProfileConfig, counters: Counters) -> Stage[Version | None]:
    base = store.latest(owner, config.scope)
    before = base.text if base else skeleton(config.sections)
    summary = yield Request(prompts.SUMMARY_PURPOSE, prompts.summary_messages(entries), parse_summary)
    if summary is None:
        counters.failures += 1
        raise _Skip("the turn's summary was lost")
    text, record = yield from _edit(before, summary, config, counters)
    if text == before:
        return base
    if config.compact and len(text) > config.compact_at:
        text, record["compaction"] = yield from _compact(text, _current(store, owner, config.scope), config,
                                                         counters, len(record["edits"]))
    if len(text) > config.cap_chars:
        counters.refused_cap += 1
        counters.dropped_edits += len(record["edits"])
        raise _Skip(f"the file would be {len(text)} characters, over the cap of {config.cap_chars}")
    version = store.append(owner, config.scope, base.n if base else 0, text, record,
                           entries[-1].at.isoformat(), turns)
    counters.versions += 1
    counters.edits_applied += len(record["edits"])
    return version


def _edit(text: str, summary: list[str], config: ProfileConfig,
          counters: Counters) -> Stage[tuple[str, dict[str, Any]]]:
    """The file with the updater's edits made, and the record of them (applied, rejected, blocked). A
    rejected edit is shown to the updater with its reason, up to ``config.retries`` times."""
    applied: list[dict[str, Any]] = []
    rejected: list[tuple[dict[str, Any], str]] = []
    blocked: list[dict[str, Any]] = []
    for attempt in range(config.retries + 1):
        if attempt:
            counters.retries += 1
        answer = yield Request(prompts.UPDATE_PURPOSE,
                               prompts.update_messages(text, summary, config.sections, rejected), parse_edits)
        if answer is None:
            counters.failures += 1
            counters.dropped_edits += len(rejected)
            if not applied:
                raise _Skip("the updater's answer was lost")
            return text, {"edits": applied, "rejected": [r for r, _ in rejected], "blocked": blocked}
        verdicts = yield from _check([_new_text(e) for e in answer.edits], "an edit of the profile", config,
                                     counters, len(answer.edits) + len(applied))
        rejected = []
        for edit, verdict in zip(answer.edits, verdicts, strict=True):
            if not verdict.allowed:
                counters.blocked += 1
                counters.dropped_edits += 1
                blocked.append({**edit.model_dump(), "reason": verdict.reason})
                continue
            try:
                text = apply_edit(text, edit, config.sections)
                applied.append(edit.model_dump())
            except EditRejected as e:
                counters.edits_rejected += 1
                rejected.append((edit.model_dump(), str(e)))
        if not rejected:
            break
    counters.dropped_edits += len(rejected)
    return text, {"edits": applied, "rejected": [r for r, _ in rejected], "blocked": blocked}


def _new_text(edit: Add | Replace) -> str:
    return edit.text if isinstance(edit, Add) else edit.new


def _check(texts: list[str], source: str, config: ProfileConfig, counters: Counters,
           at_stake: int) -> Stage[list[Verdict]]:
    """The safety check's verdicts on ``texts`` (an empty text, a deletion, needs none); if the check
    cannot run, the whole write is skipped and ``at_stake`` edits are counted dropped."""
    asked = [t for t in texts if t.strip()]
    verdicts = iter((yield from gate_stage(asked, sources=[source] * len(asked), enabled=config.gate)))
    out = [next(verdicts) if t.strip() else Verdict(allowed=True, reason="", by="nothing to check") for t in texts]
    if any(v.failed for v in out):
        counters.check_failed += 1
        counters.dropped_edits += at_stake
        raise _Skip("the safety check could not run, so nothing is written")
    return out


def _current(store: ProfileStore, owner: str, scope: str) -> Current:
    """The file's current lines and where each came from, read on from the last time (only new versions)."""
    current = store.derived.setdefault((owner, scope), Current())
    return current.caught_up(store.versions_after(owner, scope, current.last))


def _compact(text: str, current: Current, config: ProfileConfig, counters: Counters,
             edits: int) -> Stage[tuple[str, dict[str, Any]]]:
    """``text`` compacted toward ``config.compact_to``: redundant lines merged by the model (an answer
    that breaks the skeleton, grows the file or loses a ``[user]`` line is not used), then lines dropped
    in the keep order. Short
    of the target, or blocked by the safety check: the turn is skipped and its edits counted dropped."""
    counters.compactions += 1
    merged = yield Request(prompts.MERGE_PURPOSE, prompts.merge_messages(text, config.compact_to), parse_merged)
    used_merge = (merged is not None and len(merged) < len(text) and _well_formed(merged, config)
                  and keeps_user_lines(text, merged))
    origin = {life.text: life.added for life in current.alive}
    compacted, dropped = drop_to(merged if used_merge else text, config.compact_to,
                                 lambda line: origin.get(line, current.count + 1))
    if len(compacted) > config.compact_to:
        counters.compactions_short += 1
        counters.dropped_edits += edits
        raise _Skip(f"compaction reached {len(compacted)} characters, short of its target {config.compact_to} "
                    "(the profile and active goals alone are longer)")
    (verdict,) = yield from _check([compacted], "the compacted profile", config, counters, edits)
    if not verdict.allowed:
        counters.blocked += 1
        counters.dropped_edits += edits
        raise _Skip(f"the safety check blocked the compacted file ({verdict.reason})")
    counters.compacted_lines += len(dropped)
    return compacted, {"merged": used_merge, "dropped": dropped, "from_chars": len(text), "to_chars": len(compacted)}


def keeps_user_lines(before: str, after: str) -> bool:
    """Whether every ``[user]`` line of ``before`` is still said by a ``[user]`` line of ``after`` (its words
    all there: two merged into one pass). A merge that strips the mark (Qwen2.5 1.5B's did, recorded) would
    move a line the user stated down the keep order, so it is not used."""
    kept = [words(line) for line in after.splitlines() if USER in line]
    return all(any(words(line) <= k for k in kept) for line in before.splitlines() if USER in line)


def _well_formed(text: str, config: ProfileConfig) -> bool:
    try:
        check_file(text, config.sections)
    except EditRejected:
        return False
    return True
