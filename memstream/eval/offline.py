"""Stand-ins for the answer model and the judge, so the whole evaluation runs offline (rules, not models).

- **Extractive answerer** (a stand-in, not a reader): answers with the one sentence of the context
  that shares the most content words with the question (ties to the later sentence, as the newer
  memory), or "I don't know" when no sentence shares one. It cannot compute a date, count or
  combine two facts; its scores are a floor for what a context lets an answerer find.
- **Lexical judge** (a stand-in, not a judge): "yes" when the response holds every content word of
  the gold answer (stemmed alike), or, for an abstention item, when the response says it does not
  know. It cannot accept a paraphrase, and it accepts a sentence that merely contains the words.
- **Phrase judge** for scenarios (a stand-in, not a judge): "yes" when the answer holds every
  required phrase of the question's criterion and no forbidden one (``memstream.eval.criteria``);
  it ignores the written criterion and the memory a model judge reads. A non-answer fails (a
  question always requires a phrase); so does a right answer that names the value it rejects.
  The scenario answer prompt keeps the extractive answerer's marks, so that answerer reads the
  memory and the session's history as one context.
"""

from __future__ import annotations

import re

from memstream.eval import criteria, prompts
from memstream.eval.scoring import content_tokens
from memstream.models import Message, prompt_of, register_rules

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_STAMP = re.compile(r"^\[[^\]]*\]\s*")
_STAMP_ONLY = re.compile(r"^\[[^\]]*\]\s*$")
DONT_KNOW = "I don't know"
_ABSTAINS = re.compile(r"\b(don't know|do not know|not (?:mentioned|say|said|stated)|no information|cannot "
                       r"(?:be )?answer|unanswerable|not enough information)\b", re.I)


def answer_extractively(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    context = prompt.split(prompts.CONTEXT_MARK, 1)[-1].rsplit(prompts.QUESTION_MARK, 1)[0]
    question = prompt.rsplit(prompts.QUESTION_MARK, 1)[-1].split("\n", 1)[0]
    wanted = set(content_tokens(question))
    best, best_score = DONT_KNOW, 0
    for line in context.splitlines():
        if line.startswith("## ") or _STAMP_ONLY.match(line):
            continue
        for sentence in _SENTENCE.split(_STAMP.sub("", line)):
            shared = len(wanted & set(content_tokens(sentence)))
            if shared and shared >= best_score:
                best, best_score = sentence.strip(), shared
    return best


def judge_lexically(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    response = prompt.split("Model Response:", 1)[-1].rsplit("\n\n", 1)[0]
    if "unanswerable question" in prompt.split("\n", 1)[0]:
        return "yes" if _ABSTAINS.search(response) else "no"
    gold = next((prompt.split(label, 1)[1].split("Model Response:", 1)[0] for label in prompts.GOLD_LABELS
                 if label in prompt), "")
    needed = set(content_tokens(gold))
    return "yes" if needed and needed <= set(content_tokens(response)) else "no"


def judge_by_phrases(messages: list[Message]) -> str:
    lines = prompt_of(messages).split("\n")
    required = _after(lines, prompts.REQUIRED_MARK)
    forbidden = _after(lines, prompts.FORBIDDEN_MARK, start=required[1])
    answer = _after(lines, prompts.ANSWER_MARK, start=forbidden[1])
    need = criteria.parse(required[0])
    return "yes" if need and criteria.holds(answer[0], need, criteria.parse(forbidden[0])) else "no"


def _after(lines: list[str], mark: str, start: int = 0) -> tuple[str, int]:
    """The rest of the first line from ``start`` that begins with ``mark``, and the index after it."""
    for i in range(start, len(lines)):
        if lines[i].startswith(mark):
            return lines[i][len(mark):].strip(), i + 1
    return "", len(lines)


register_rules({prompts.ANSWER_PURPOSE: answer_extractively, prompts.JUDGE_PURPOSE: judge_lexically,
                prompts.SCENARIO_ANSWER_PURPOSE: answer_extractively, prompts.SCENARIO_JUDGE_PURPOSE: judge_by_phrases})
