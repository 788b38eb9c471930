"""How the offline stand-in answers the designs' prompts (rules, not intelligence).

Recursive summary: the previous summary's sentences, then, for each new line, its first
sentence cut to ``CLAUSE_WORDS`` words; the oldest sentences are dropped until the whole fits
the word limit the prompt states. It keeps the newest gist verbatim and forgets the oldest
first: an extractive stand-in for a model's summary, with no knowledge of any dataset.
"""

from __future__ import annotations

import re

from memstream.designs import prompts
from memstream.models import Message, prompt_of, register_rules

CLAUSE_WORDS = 20
_LIMIT = re.compile(r"at most (\d+) words")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STAMP = re.compile(r"^\[[^\]]*\]\s*")


def first_sentence(line: str, words: int = CLAUSE_WORDS) -> str:
    text = _STAMP.sub("", line.strip())
    head = _SENTENCE.split(text, maxsplit=1)[0].split()
    clipped = " ".join(head[:words])
    return clipped if clipped.endswith((".", "!", "?")) else clipped + "."


def answer_summary(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    limit = int(m.group(1)) if (m := _LIMIT.search(prompt)) else 200
    previous = prompt.split(prompts.CURRENT, 1)[-1].split(prompts.NEW_LINES, 1)[0].strip()
    new = prompt.split(prompts.NEW_LINES, 1)[-1].split(prompts.NEW_SUMMARY, 1)[0]
    sentences = [] if previous == "(none yet)" else [s for s in _SENTENCE.split(previous) if s]
    sentences += [first_sentence(line) for line in new.splitlines() if line.strip()]
    while len(sentences) > 1 and sum(len(s.split()) for s in sentences) > limit:
        sentences.pop(0)
    return " ".join(sentences)


register_rules({prompts.SUMMARY_PURPOSE: answer_summary})
