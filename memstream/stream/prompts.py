"""The stream stage's prompts (one source of truth). Bump a version when its text changes:
the model-call cache keys on the exact messages, so old answers are never reused for new text.
"""

from __future__ import annotations

from memstream.models import Message, laid_out, one_line, register_answer_tokens

IMPORTANCE_VERSION = 3
IMPORTANCE_PURPOSE = "importance"
ROUND_PURPOSE = "importance.round"  # several memories of one round rated together, so they are compared
#: Memories rated in one request at most (a round's observations; a longer list is asked in parts).
ROUND_SIZE = 8
#: Answers' bounds in tokens (``memstream.models.bounds``): a rating is a number; a round's, a short list.
register_answer_tokens({IMPORTANCE_PURPOSE: 8, ROUND_PURPOSE: 16 + 6 * ROUND_SIZE})

# The poignancy prompt of Park et al. (2023), section 4.1, its scale spelled out from the top down: a
# 1.5B instruct model answered the paper's wording with 1, 5 or 8 only (a heart attack rated 1). Laid
# out for a server's prefix cache (``memstream.models.layout``): the scale in the system message, the
# memory (what changes) in the user's.
IMPORTANCE_INSTRUCTIONS = (
    "You rate how poignant a memory is. 10 = life-changing (a death, an engagement, a college acceptance, "
    "a break-up, a hospital emergency); 8 = a serious event (an argument, losing a job); 6 = a notable event "
    "(an invitation, meeting someone new); 4 = a small event (a chat, a deadline); 2 = routine (walking, "
    "shopping); 1 = mundane (brushing teeth, making bed, waking up, going to bed, a usual meal).\n"
    "Answer with a single integer from 1 to 10, and nothing else."
)
IMPORTANCE_TEMPLATE = "Memory: {memory}\nRating:"
#: The round's form: the same scale, the memories numbered, one rating each (compared with each other).
ROUND_INSTRUCTIONS = (
    "You rate how poignant each of several memories is, comparing them with each other: most of what a "
    "person notices in a day is routine. 10 = life-changing (a death, an engagement, a college acceptance, "
    "a break-up, a hospital emergency); 8 = a serious event (an argument, losing a job); 6 = a notable event "
    "(an invitation, meeting someone new); 4 = a small event (a chat, a deadline); 2 = routine (walking, "
    "shopping); 1 = mundane (brushing teeth, making bed, waking up, going to bed, a usual meal).\n"
    'Answer as JSON {"ratings": [...]}: one integer from 1 to 10 for each numbered memory, in order.\n'
    'Example (3 memories: a neighbour waving, a burst pipe flooding the kitchen, making coffee): '
    '{"ratings": [2, 7, 1]}'
)
ROUND_TEMPLATE = "Memories:\n{memories}\nRatings for all {n}:"


def importance_messages(memory_text: str) -> list[Message]:
    return laid_out(IMPORTANCE_INSTRUCTIONS, IMPORTANCE_TEMPLATE.format(memory=memory_text))


def round_messages(memory_texts: list[str]) -> list[Message]:
    listed = "\n".join(f"{i}. {one_line(t)}" for i, t in enumerate(memory_texts, 1))
    return laid_out(ROUND_INSTRUCTIONS, ROUND_TEMPLATE.format(memories=listed, n=len(memory_texts)))


def round_texts_of(messages: list[Message]) -> list[str]:
    """The memories a round's prompt lists, in order (for the offline stand-in model)."""
    content = next((m["content"] for m in messages if m.get("role") == "user"), "")
    listed = content.split("Memories:\n", 1)[-1].rsplit("\nRatings for all", 1)[0]
    return [line.split(". ", 1)[1] for line in listed.splitlines() if ". " in line and line.split(". ", 1)[0].isdigit()]


def memory_text_of(messages: list[Message]) -> str:
    """The memory an importance prompt asks about (for the offline stand-in model)."""
    content = next((m["content"] for m in messages if m.get("role") == "user"), "")
    start = content.find("Memory: ")
    end = content.rfind("\nRating:")
    return content[start + len("Memory: ") : end] if start >= 0 and end > start else content
