"""The profile design's prompts: the turn summariser, the updater (edits, not a new file) and the merge
that compaction asks for. One source for the markers the offline rules read back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memstream.designs.entries import Entry
from memstream.designs.profile.text import HEADING
from memstream.models import Message, one_line, register_answer_tokens

VERSION = 2
SUMMARY_PURPOSE = "profile-summary"
UPDATE_PURPOSE = "profile-update"
MERGE_PURPOSE = "profile-merge"
#: Lines a turn's summary may hold.
SUMMARY_LINES = 12
#: Answers' bounds in tokens: a dozen short lines; a dozen edits of a line or two each; the whole file
#: (8,000 characters, about 2,000 tokens) once merged, with room to spare.
register_answer_tokens({SUMMARY_PURPOSE: 400, UPDATE_PURPOSE: 700, MERGE_PURPOSE: 2600})

TURN = "The turn:"
SUMMARY = "Summary (one fact per line):"
FILE_OPEN, FILE_CLOSE = "<<<", ">>>"
HAPPENED = "What happened in this turn:"
ERRORS = "Your previous edits that could not be applied (the others were; fix or drop these):"
EDITS = "Edits (JSON only):"
MERGED = "The merged file:"
#: Who said a summary line; the updater marks the ``USER_ROLE``'s direct statements ``[user]``.
USER_ROLE, ASSISTANT_ROLE, TOOL_ROLE = "user", "assistant", "tool"
ASSISTANT_SOURCES = frozenset({"assistant", "agent", "ai", "bot", "system"})

SELECTION_RULE = (
    "Record only what is durable (still true in a later session), not re-fetchable (not something a tool, "
    "a file or a search can give again) and useful across sessions: who the user is, their goals and how "
    "far they got, their projects, what they have, how they want things done, and what they corrected. "
    "Do not record small talk, one-off requests, tool output that can be fetched again, or your own guesses."
)


def role_of(e: Entry) -> str:
    """Who an entry comes from, as the summary names it: a tool, the assistant, or the user."""
    if e.kind == "tool":
        return f"{TOOL_ROLE} {e.source}"
    return ASSISTANT_ROLE if e.source.lower() in ASSISTANT_SOURCES else USER_ROLE


def spoken(e: Entry) -> str:
    """An entry's text with its speaker, once (a turn that already starts "Name:" is not prefixed again)."""
    text = one_line(e.text)
    return text if text.startswith(f"{e.source}:") or e.source == "user" else f"{e.source}: {text}"


def summary_messages(entries: Sequence[Entry]) -> list[Message]:
    turn = "\n".join(f"{role_of(e)}: {spoken(e)}" for e in entries)
    text = (
        "Summarise this turn of a conversation between a user and an assistant, tool calls and their results "
        f"included, in at most {SUMMARY_LINES} lines, one fact per line. Start each line with who it comes "
        f"from ('{USER_ROLE}:', '{ASSISTANT_ROLE}:' or '{TOOL_ROLE} NAME:'). Keep what the user stated "
        "directly in their own words; keep names, dates, numbers and decisions; drop greetings.\n\n"
        f"{TURN}\n{turn}\n\n{SUMMARY}"
    )
    return [{"role": "user", "content": text}]


def update_messages(file: str, summary: Sequence[str], sections: Sequence[str],
                    errors: Sequence[tuple[dict, str]] = ()) -> list[Message]:
    """The updater's prompt: the file, the turn's summary, and (when asked again) the edits that failed.
    A small model copies a prompt's example (Qwen2.5 1.5B did, recorded): the example's anchors are lines
    no real file holds, so a copied example is rejected, never applied."""
    example = json.dumps({"edits": [
        {"op": "add", "after": "- Has a cat named Tom.", "text": "- [user] Adopted a second cat, Mia."},
        {"op": "replace", "old": "- Lives in Porto.", "new": "- [user] Lives in Madrid."},
        {"op": "replace", "old": "- Plays chess on Sundays.", "new": ""}]})
    failed = "".join(f"\n- {json.dumps(edit)}: {reason}" for edit, reason in errors)
    text = (
        "You keep the user's profile: a file read whole at the start of every session. Update it with what "
        f"this turn adds. {SELECTION_RULE}\n\n"
        f"Sections (fixed; never add, rename or remove a '{HEADING}' heading): {', '.join(sections)}. One fact per "
        "line, each line starting '- '. Start a line with [user] when the user stated it directly. Under goals, "
        "a goal is '- goal', its progress '  - checkpoint: ...', a finished goal '- (done) goal'. When the user "
        "overrides or corrects something, replace the old line instead of adding a second one.\n\n"
        "Answer with edits, not a new file: "
        '{"op": "add", "after": ANCHOR, "text": NEW LINE} inserts after the line holding ANCHOR; '
        '{"op": "replace", "old": EXACT TEXT, "new": TEXT} replaces it ("new": "" deletes it). ANCHOR and '
        "EXACT TEXT must be copied from the file and occur in it exactly once. Answer "
        '{"edits": []} if the turn holds nothing worth keeping.\n'
        f"Example (another user's file, not this one; never copy it): {example}\n\n"
        f"The file now:\n{FILE_OPEN}\n{file}{FILE_CLOSE}\n\n"
        f"{HAPPENED}\n" + "\n".join(one_line(s) for s in summary) + "\n\n"
        + (f"{ERRORS}{failed}\n\n" if errors else "")
        + EDITS
    )
    return [{"role": "user", "content": text}]


def merge_messages(file: str, target: int) -> list[Message]:
    text = (
        f"This profile file is {len(file)} characters and must come down toward {target}. Merge lines that say "
        "the same thing into one line; keep [user] at the start of a merged line if any line it merges had "
        f"it; keep every '{HEADING}' heading exactly, in order; add no fact and change no fact. Answer with the "
        "whole file and nothing else.\n\n"
        f"{FILE_OPEN}\n{file}{FILE_CLOSE}\n\n{MERGED}"
    )
    return [{"role": "user", "content": text}]
