"""The designs' own prompts. Bump VERSION when a prompt changes (the call cache keys on the text anyway)."""

from __future__ import annotations

from collections.abc import Sequence

from memstream.models import Message, one_line, register_answer_tokens

VERSION = 1
SUMMARY_PURPOSE = "design-summary"
#: The answer's bound in tokens (``memstream.models.bounds``): about 2.5 tokens a word of the default
#: 300-word limit (buffer-summary's; tiered asks for 150).
register_answer_tokens({SUMMARY_PURPOSE: 800})
#: Section markers the offline rule reads back (one source for the prompt and the rule).
CURRENT = "Current summary:"
NEW_LINES = "New lines of conversation:"
NEW_SUMMARY = "New summary"


def summary_messages(previous: str, lines: Sequence[str], max_words: int) -> list[Message]:
    """LangChain's progressive summary prompt (ConversationSummaryBufferMemory's SUMMARY_PROMPT, also
    MemGPT's recursive summary: new summary = summarise(old summary + evicted lines)), with a length cap."""
    new = "\n".join(one_line(x) for x in lines)
    text = (
        "Progressively summarize the lines of conversation provided, adding onto the previous summary, "
        f"returning a new summary of at most {max_words} words. Keep names, dates, places, numbers and "
        "what each person said they did, have or plan; drop greetings and small talk.\n\n"
        f"{CURRENT}\n{one_line(previous) or '(none yet)'}\n\n{NEW_LINES}\n{new}\n\n"
        f"{NEW_SUMMARY} (at most {max_words} words, plain text):"
    )
    return [{"role": "user", "content": text}]


# -- the facts design: extraction and classification --------------------------------------------------

EXTRACT_PURPOSE = "facts-extract"
CLASSIFY_PURPOSE = "facts-classify"
#: Bounds: a handful of one-sentence facts as JSON; a one-line verdict.
register_answer_tokens({EXTRACT_PURPOSE: 700, CLASSIFY_PURPOSE: 60})
#: Section markers the offline rules read back.
TODAY = "Today is"
RECENT = "Recent conversation (context only):"
KNOWN = "Already known:"
MESSAGE = "New message"
END_MESSAGE = "Answer with JSON"
CANDIDATE = "New fact:"
#: The answer format's stand-in for entities (a small model copies it: the parser drops it).
ENTITY_PLACEHOLDER = "names"
FACT_KINDS_HELP = ("fact (a lasting truth about someone), preference (a like, dislike or wish), episode (something "
                   "that happened once), procedure (how someone does something)")


def extract_messages(message: str, speaker: str, recent: Sequence[str], known: Sequence[str], today: str,
                     max_facts: int) -> list[Message]:
    """Mem0's extraction step: the message with its context (recent turns, the previous assistant message
    among them; facts already known; the date), candidate facts as structured output."""
    text = (
        "Extract the lasting facts the new message states about its speaker or the people they talk about, "
        "to remember for later conversations. Each fact one short sentence that stands on its own (name who, "
        "what, and any date, place or number said); nothing the message does not state; greetings, questions "
        f"and small talk are not facts. At most {max_facts} facts.\n\n"
        f"{TODAY} {today}.\n\n{RECENT}\n" + ("\n".join(one_line(x) for x in recent) or "(none)") + "\n\n"
        f"{KNOWN}\n" + ("\n".join(f"- {one_line(x)}" for x in known) or "(nothing yet)") + "\n\n"
        f"{MESSAGE} ({speaker}):\n{message.strip()}\n\n"
        f'{END_MESSAGE}: {{"facts": [{{"text": "...", "kind": "fact|preference|episode|procedure", '
        f'"salience": 0.0-1.0, "entities": ["{ENTITY_PLACEHOLDER}"], "event_at": "YYYY-MM-DD or null", '
        '"expires_in_days": "days it stays true, or null"}]}. Kinds: ' + FACT_KINDS_HELP + ". "
        'Answer {"facts": []} if there is nothing to remember.'
    )
    return [{"role": "user", "content": text}]


def classify_messages(candidate: str, known: Sequence[str]) -> list[Message]:
    """Mem0's update step (ADD/UPDATE/NONE, with Graphiti's invalidation: an update closes the old fact
    instead of overwriting it), plus ``extend`` for a detail added to a fact that stays true."""
    listed = "\n".join(f"{i}. {one_line(x)}" for i, x in enumerate(known, start=1))
    text = (
        "A new fact and facts already known that may be about the same thing.\n\n"
        f"{KNOWN}\n{listed}\n\n{CANDIDATE} {one_line(candidate)}\n\n"
        "What is the new fact to the known ones? duplicate: it says what a known fact says; update: it is the "
        "same thing with a changed value, so the known fact is no longer true; extend: it adds detail to a known "
        "fact that stays true; new: it is about something else. "
        'Answer with JSON: {"action": "new|duplicate|update|extend", "target": the known fact\'s number or null}'
    )
    return [{"role": "user", "content": text}]
