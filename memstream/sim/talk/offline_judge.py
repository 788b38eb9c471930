"""The offline stand-in's interview judge: plain rules that check an answer addresses its question and
rests on the memories shown. A stand-in, not a model: its scores rank a non-answer or an off-topic
answer below one that answers, and nothing finer; every verdict says it is the stand-in's.

- **A non-answer** (empty, "I don't remember", "I don't know", the offline model's echo) scores 1.
- **Addressing the question** is two checks, each 0 to 1: the answer gives the kind of thing the
  question asks for (who: a name; when: a time or a day; where: a place after at/in; why: a
  reason; what would you do/say: a first-person intention; about yourself: a first-person
  statement), and the share of the question's topic words (content words, by their first five
  letters) the answer takes up. With a kind, relevance is their mean; without, the share alone.
- **Grounding**: the share of the answer's content words found in the memories shown; under half
  is flagged as hallucinated.
- The score is 1 + 4 x relevance x (1 + grounding) / 2, rounded: an answer that addresses nothing
  of the question scores 1 however grounded, a grounded answer to the point scores 5.
"""

from __future__ import annotations

import json
import re

from memstream.models import Message, prompt_of
from memstream.offline_events import commitment
from memstream.offline_text import content_words, names

_MEMORY = re.compile(r"^- \((\w+), importance (\d+)\) (.+)$", re.M)
_NON_ANSWER = re.compile(r"^\W*$|\b(?:don't|do not|can't|cannot) (?:remember|recall|know|say)\b|^\(offline model\)",
                         re.IGNORECASE)
_TIME_OR_DAY = re.compile(r"\d|\b(?:noon|midnight|morning|afternoon|evening|tonight|today|tomorrow|week|weekend|"
                          r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|o'clock)\b", re.IGNORECASE)
_PLACE = re.compile(r"\b(?:at|in|to)\s+(?:the\s+)?[A-Za-z]", re.IGNORECASE)
_REASON = re.compile(r"\b(?:because|since|so that|as|to)\b", re.IGNORECASE)
_INTENTION = re.compile(r"\b(?:I(?:'d|'ll| would| will| should| am going to)|I'm going to|let's)\b", re.IGNORECASE)
_SELF = re.compile(r"\b(?:I|I'm|my|me)\b")
#: The kind of thing a question asks for, by its words: (question pattern, what an answer to it holds).
_KINDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bwhat would you (?:do|say)\b|\bhow would you\b", re.IGNORECASE), "intention"),
    (re.compile(r"\bwho\b", re.IGNORECASE), "person"),
    (re.compile(r"\bwhen\b|\bwhat time\b|\bat \d", re.IGNORECASE), "time"),
    (re.compile(r"\bwhere\b", re.IGNORECASE), "place"),
    (re.compile(r"\bwhy\b", re.IGNORECASE), "reason"),
    (re.compile(r"\byourself\b|\byour (?:typical|usual|day|life|job|work)\b", re.IGNORECASE), "self"),
]
STAND_IN = "offline stand-in judge (rules, not a model)"


def found(pattern: str, content: str, flags: int = 0) -> re.Match[str]:
    """Where ``pattern`` matches a line every prompt of its stage holds (the offline rules read their
    answers off the prompt); a prompt without it is of another version or stage, which the rules
    cannot answer, and say so."""
    match = re.search(pattern, content, flags)
    if match is None:
        raise ValueError(f"the offline stand-in cannot answer this prompt: it has no {pattern!r}")
    return match


def _kind_given(kind: str, answer: str) -> bool:
    if kind == "person":
        return bool(names(answer[1:]))  # a name inside the answer (not its first, capitalised, word)
    if kind == "time":
        return bool(_TIME_OR_DAY.search(answer))
    if kind == "place":
        return bool(_PLACE.search(answer) or commitment(answer))
    if kind == "reason":
        return bool(_REASON.search(answer))
    if kind == "intention":
        return bool(_INTENTION.search(answer))
    return bool(_SELF.search(answer))


def _stems(text: str) -> set[str]:
    return {w[:5] for w in content_words(text)}


def judge(question: str, answer: str, memories: list[str]) -> tuple[int, bool, str]:
    """(score 1-5, hallucinated, why) for ``answer`` to ``question`` given the memories shown."""
    if _NON_ANSWER.search(answer.strip()) and len(content_words(answer)) < 6:
        return 1, False, f"{STAND_IN}: a non-answer"
    kind = next((k for pattern, k in _KINDS if pattern.search(question)), None)
    topic = _stems(question)
    shared = len(topic & _stems(answer)) / len(topic) if topic else 0.0
    given = kind is not None and _kind_given(kind, answer)
    relevance = (shared + given) / 2 if kind else shared
    words = set(content_words(answer))
    grounded = len(words & set(content_words(" ".join(memories)))) / len(words) if words else 0.0
    score = 1 + round(4 * relevance * (1 + grounded) / 2)
    said = f"{'gives' if given else 'does not give'} the {kind} asked for, " if kind else ""
    return score, grounded < 0.5, (f"{STAND_IN}: {said}takes up {shared:.0%} of the question's topic words; "
                                   f"{grounded:.0%} of its words are in the memories shown")


def answer_judge(messages: list[Message]) -> str:
    content = prompt_of(messages)
    question = found(r"^Question \([^)]*\): (.*)$", content, re.M).group(1)
    answer = found(r"^Answer: (.*)$", content, re.M).group(1)
    score, hallucinated, why = judge(question, answer, [t for _, _, t in _MEMORY.findall(content)])
    return json.dumps({"score": score, "hallucinated": hallucinated, "why": why})
