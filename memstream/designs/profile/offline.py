"""How the offline stand-in answers the profile design's prompts: generic rules, not a model.

- **Summary**: each line of the turn as ``role: its first sentence`` (at most 20 words), the user's
  lines first, up to the prompt's line limit.
- **Update**: only the user's first-person statements that are not questions are kept (the selection
  rule's "durable" read as "said of oneself"), each as ``- [user] ...`` under the first section whose
  generic English cue words it holds (a correction cue: "actually", "instead", "no longer" ...; a goal:
  "want to", "plan to" ...; a project: "working on" ...; something owned: "I have", "I bought" ...; a
  habit or preference: "prefer", "always", "never" ...; who one is: "I am", "I live", "I work" ...);
  a line with none of them is not kept. A correction replaces the line of the file it shares the most
  words with (two or more), else is added under ``corrections``. A line whose words are all in the file
  already is skipped. Asked again after a failed edit, the rule drops what failed (it has no better idea).
- **Merge**: lines another line of the same section already says are dropped
  (:func:`memstream.designs.profile.compact.merge_redundant`); nothing is rewritten.

The rules know no dataset and no domain; their figures are the stand-in's, never a model's.
"""

from __future__ import annotations

import json
import re

from memstream.designs.offline import first_sentence
from memstream.designs.profile import prompts
from memstream.designs.profile.compact import merge_redundant, words
from memstream.designs.profile.text import HEADING, USER, sections_of
from memstream.models import Message, prompt_of, register_rules

STATEMENT_WORDS = 25
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'll|my|me|we|we're|our)\b", re.IGNORECASE)
_CORRECTION = re.compile(r"\b(actually|instead|no longer|not anymore|any more|changed|switched|from now on)\b",
                         re.IGNORECASE)
#: Section -> its cue words, in the order they are tried (a section the file lacks is skipped).
CUES = (
    ("goals", re.compile(r"\b(want to|wants to|plan to|planning to|going to|my goal|hope to|trying to|aim to)\b",
                         re.IGNORECASE)),
    ("projects", re.compile(r"\b(working on|my project|building|writing|developing|researching)\b", re.IGNORECASE)),
    ("assets", re.compile(r"\b(i have|i've got|i own|i bought|we have|we own|we bought)\b", re.IGNORECASE)),
    ("conventions", re.compile(r"\b(prefer|always|never|please|don't|do not|i like|i love|i hate|usually)\b",
                               re.IGNORECASE)),
    ("profile", re.compile(r"\b(i am|i'm|my name|i live|i work|i was born|years old)\b", re.IGNORECASE)),
)


def answer_summary(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    limit = prompts.SUMMARY_LINES
    turn = prompt.split(prompts.TURN, 1)[-1].split(prompts.SUMMARY, 1)[0]
    lines = [line.split(": ", 1) for line in turn.splitlines() if ": " in line]
    facts = [(role, f"{role}: {first_sentence(text)}") for role, text in lines]
    users = [f for role, f in facts if role == prompts.USER_ROLE]
    rest = [f for role, f in facts if role != prompts.USER_ROLE]
    chosen = set((users + rest)[:limit])
    return "\n".join(f for _, f in facts if f in chosen)


def answer_update(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    if prompts.ERRORS in prompt:
        return json.dumps({"edits": []})
    file = prompt.split(prompts.FILE_OPEN + "\n", 1)[-1].split(prompts.FILE_CLOSE, 1)[0]
    happened = prompt.split(prompts.HAPPENED, 1)[-1].split(prompts.EDITS, 1)[0]
    sections = [name for name, _ in sections_of(file)]
    edits: list[dict[str, str]] = []
    known = [words(line) for line in file.splitlines() if not line.startswith(HEADING)]
    for line in happened.splitlines():
        role, _, said = line.partition(": ")
        if role != prompts.USER_ROLE or said.rstrip().endswith("?") or not _FIRST_PERSON.search(said):
            continue
        new = f"- {USER} {' '.join(said.split()[:STATEMENT_WORDS])}"
        mine = words(new)
        if not mine or any(mine <= k for k in known):
            continue
        edit = _correction(file, new, sections) if _CORRECTION.search(said) else None
        section = next((s for s, cue in CUES if s in sections and cue.search(said)), None)
        if edit is None and section is None:
            continue
        edits.append(edit or {"op": "add", "after": f"{HEADING}{section}", "text": new})
        known.append(mine)
    return json.dumps({"edits": edits})


def _correction(file: str, new: str, sections: list[str]) -> dict[str, str] | None:
    """Replace the file's line sharing the most words (of four letters or more, at least two) with ``new``."""
    content = {w for w in words(new) if len(w) > 3}
    lines = [line for line in file.splitlines() if not line.startswith(HEADING)]
    best = max(lines, key=lambda line: len(content & words(line)), default=None)
    if best is not None and len(content & words(best)) >= 2 and file.count(best) == 1:
        return {"op": "replace", "old": best, "new": new}
    return {"op": "add", "after": f"{HEADING}corrections", "text": new} if "corrections" in sections else None


def answer_merge(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    file = prompt.split(prompts.FILE_OPEN + "\n", 1)[-1].split(prompts.FILE_CLOSE, 1)[0]
    return merge_redundant(file)


register_rules({prompts.SUMMARY_PURPOSE: answer_summary, prompts.UPDATE_PURPOSE: answer_update,
                prompts.MERGE_PURPOSE: answer_merge})
