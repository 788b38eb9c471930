"""Reflection prompts (Park et al. 2023, section 4.2), one source of truth, versioned.

The model-call cache keys on the exact messages, so bumping a version's text
never reuses an old answer.
"""

from __future__ import annotations

from memstream.models import Message, laid_out, one_line, register_answer_tokens

VERSION = 4
QUESTIONS_PURPOSE = "reflection.questions"
INSIGHTS_PURPOSE = "reflection.insights"
#: Answers' bounds in tokens (``memstream.models.bounds``), about twice the longest a real model gave:
#: three questions; five insights, each a sentence and its citations.
register_answer_tokens({QUESTIONS_PURPOSE: 250, INSIGHTS_PURPOSE: 600})
N_QUESTIONS = 3
N_INSIGHTS = 5

# Each prompt is laid out for a server's prefix cache (``memstream.models.layout``): the stage's fixed
# instructions and worked example as the system message; the statements (what changes) as the user's.
QUESTIONS_INSTRUCTIONS = (
    "Given only the statements the user lists about a person, what are {n} most salient high-level questions "
    "we can answer about that person's life: their relationships, plans, feelings and work? Ask about the "
    "person, not about one object or one moment.\n"
    'Answer as JSON {{"questions": ["...", "...", "..."]}} or as a numbered list.\n'
    'Example (about someone else): {{"questions": ["What is Ann most worried about at work?", '
    '"How does Ann feel about her neighbour Ben?", "Why has Ann been sleeping badly?"]}}'
)
#: The user message of both prompts: whose statements they are (the identity first), then the statements.
STATEMENTS_TEMPLATE = "Statements about {owner}\n{statements}"

INSIGHTS_INSTRUCTIONS = (
    "What {n} high-level insights can you infer from the numbered statements the user lists? "
    "(example format: insight (because of 1, 5, 3))\n"
    'Answer as JSON {{"insights": [{{"insight": "...", "because": [1, 5, 3]}}]}} (one JSON object, every '
    "insight in its one list) or one insight per line in the example format. Cite only the numbers listed. "
    "An insight says what no single statement says outright (a pattern, a cause, a relationship) and cites "
    "the statements that support it; never repeat a statement.\n"
    'Example (about someone else): {{"insights": [{{"insight": "Ann is dedicated to her research", '
    '"because": [2, 4]}}, {{"insight": "Ann and Ben are becoming friends", "because": [1, 3, 6]}}]}}'
)

def numbered(texts: list[str]) -> str:
    return "\n".join(f"{i}. {one_line(t)}" for i, t in enumerate(texts, 1))


def questions_messages(owner: str, statements: list[str]) -> list[Message]:
    """The owner is named so the questions are about the owner's life, not about what the statements mention."""
    return laid_out(QUESTIONS_INSTRUCTIONS.format(n=N_QUESTIONS),
                    STATEMENTS_TEMPLATE.format(owner=owner, statements="\n".join(map(one_line, statements))))


def insights_messages(owner: str, statements: list[str]) -> list[Message]:
    return laid_out(INSIGHTS_INSTRUCTIONS.format(n=N_INSIGHTS),
                    STATEMENTS_TEMPLATE.format(owner=owner, statements=numbered(statements)))
