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
