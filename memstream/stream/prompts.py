"""The stream stage's prompts (one source of truth). Bump a version when its text changes:
the model-call cache keys on the exact messages, so old answers are never reused for new text.
"""

from __future__ import annotations

from memstream.models.base import Message

IMPORTANCE_VERSION = 1
IMPORTANCE_PURPOSE = "importance"

# The poignancy prompt of Park et al. (2023), section 4.1.
IMPORTANCE_TEMPLATE = (
    "On the scale of 1 to 10, where 1 is purely mundane (e.g., brushing teeth, making bed) "
    "and 10 is extremely poignant (e.g., a break up, college acceptance), rate the likely "
    "poignancy of the following piece of memory.\n"
    "Memory: {memory}\n"
    "Rating: <fill in>"
)


def importance_messages(memory_text: str) -> list[Message]:
    return [
        {"role": "system", "content": "Answer with a single integer from 1 to 10."},
        {"role": "user", "content": IMPORTANCE_TEMPLATE.format(memory=memory_text)},
    ]


def memory_text_of(messages: list[Message]) -> str:
    """The memory an importance prompt asks about (for the offline stand-in model)."""
    content = messages[-1]["content"]
    start = content.find("Memory: ")
    end = content.rfind("\nRating:")
    return content[start + len("Memory: ") : end] if start >= 0 and end > start else content
