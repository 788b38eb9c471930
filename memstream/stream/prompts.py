"""The stream stage's prompts (one source of truth). Bump a version when its text changes:
the model-call cache keys on the exact messages, so old answers are never reused for new text.
"""

from __future__ import annotations

from memstream.models.base import Message

IMPORTANCE_VERSION = 2
IMPORTANCE_PURPOSE = "importance"

# The poignancy prompt of Park et al. (2023), section 4.1, with anchors along the scale so a small
# model uses all of it (unanchored, one used only 1, 5 and 8 and rated a heart attack 1).
IMPORTANCE_TEMPLATE = (
    "On the scale of 1 to 10, where 1 is purely mundane (e.g., brushing teeth, making bed) "
    "and 10 is extremely poignant (e.g., a break up, college acceptance), rate the likely "
    "poignancy of the following piece of memory.\n"
    "Anchors: 1 brushing teeth; 2 walking to work; 3 buying groceries; 4 a routine chat with a "
    "neighbour; 5 a project deadline; 6 meeting a new friend; 7 being invited to a party; 8 a "
    "serious argument; 9 a parent taken to hospital; 10 a death in the family.\n"
    "Memory: {memory}\n"
    "Rating: <fill in>"
)


def importance_messages(memory_text: str) -> list[Message]:
    return [
        {"role": "system", "content": "Answer with a single integer from 1 to 10, and nothing else."},
        {"role": "user", "content": IMPORTANCE_TEMPLATE.format(memory=memory_text)},
    ]


def memory_text_of(messages: list[Message]) -> str:
    """The memory an importance prompt asks about (for the offline stand-in model)."""
    content = next((m["content"] for m in messages if m.get("role") == "user"), "")
    start = content.find("Memory: ")
    end = content.rfind("\nRating:")
    return content[start + len("Memory: ") : end] if start >= 0 and end > start else content
