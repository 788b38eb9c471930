"""The stream stage's prompts (one source of truth). Bump a version when its text changes:
the model-call cache keys on the exact messages, so old answers are never reused for new text.
"""

from __future__ import annotations

from memstream.models import Message, laid_out, register_answer_tokens

IMPORTANCE_VERSION = 3
IMPORTANCE_PURPOSE = "importance"
#: An answer's bound in tokens (``memstream.models.bounds``): a rating is a number.
register_answer_tokens({IMPORTANCE_PURPOSE: 8})

# The poignancy prompt of Park et al. (2023), section 4.1, its scale spelled out from the top down: a
# 1.5B instruct model answered the paper's wording with 1, 5 or 8 only (a heart attack rated 1). Laid
# out for a server's prefix cache (``memstream.models.layout``): the scale in the system message, the
# memory (what changes) in the user's.
IMPORTANCE_INSTRUCTIONS = (
    "You rate how poignant a memory is. 10 = life-changing (a death, an engagement, a college acceptance, "
    "a break-up, a hospital emergency); 8 = a serious event (an argument, losing a job); 6 = a notable event "
    "(an invitation, meeting someone new); 4 = a small event (a chat, a deadline); 2 = routine (walking, "
    "shopping); 1 = mundane (brushing teeth, making bed).\n"
    "Answer with a single integer from 1 to 10, and nothing else."
)
IMPORTANCE_TEMPLATE = "Memory: {memory}\nRating:"


def importance_messages(memory_text: str) -> list[Message]:
    return laid_out(IMPORTANCE_INSTRUCTIONS, IMPORTANCE_TEMPLATE.format(memory=memory_text))


def memory_text_of(messages: list[Message]) -> str:
    """The memory an importance prompt asks about (for the offline stand-in model)."""
    content = next((m["content"] for m in messages if m.get("role") == "user"), "")
    start = content.find("Memory: ")
    end = content.rfind("\nRating:")
    return content[start + len("Memory: ") : end] if start >= 0 and end > start else content
