"""How the offline stand-in model talks (rules, not intelligence).

It starts a conversation with someone it has a relationship with or remembers;
each speaker shares the most important thing it remembers that has not been said
yet ("Did you hear? ..."), so news spreads from agent to agent as in the paper's
party invitation; after four turns it says goodbye.
"""

from __future__ import annotations

import json
import re

from memstream.models.base import Message
from memstream.models.offline import prompt_of, register_rules
from memstream.offline_text import content_words
from memstream.sim import prompts

_MEMORY = re.compile(r"^- \(importance (\d+)\) (.+)$", re.M)


_NOT_NEWS = re.compile(r"^(Conversation with|Plan for|From \d\d:\d\d|At \d\d:\d\d .* changed plans)|is sleeping$")


def _facts(content: str, listener: str = "") -> list[tuple[int, str]]:
    """Remembered statements worth passing on, most important first (not plans, not about the listener)."""
    facts = [(int(i), t) for i, t in _MEMORY.findall(content)]
    return sorted((f for f in facts if not _NOT_NEWS.search(f[1]) and (not listener or listener not in f[1])),
                  key=lambda f: -f[0])


def answer_start(messages: list[Message]) -> str:
    content = prompt_of(messages)
    relationship = re.search(r"relationship with .+?: (.+)", content).group(1)
    other = re.search(r"Should .+? start a conversation with (.+)\?", content).group(1)
    remembered = any(other in t for _, t in _facts(content))
    return json.dumps({"talk": relationship != "none" or remembered})


def answer_turn(messages: list[Message]) -> str:
    content = prompt_of(messages)
    other = re.search(r"It is [^.]+\. .+? is talking with (.+?) at ", content).group(1)
    dialogue = content.split("The conversation so far:\n", 1)[1].split("\n\nWhat does", 1)[0]
    turns = [] if dialogue == "(nothing yet)" else dialogue.splitlines()
    news = next((t for imp, t in _facts(content, other) if t not in dialogue and imp >= 5), None)
    first = other.split()[0]
    if len(turns) >= 3:
        return json.dumps({"utterance": f"Bye, {first}! Talk soon.", "end": True})
    if len(turns) == 2:
        return json.dumps({"utterance": "Good to know. I should get going.", "end": False})
    opener = f"Hi {first}! " if not turns else "Oh, I didn't know that. "
    share = f"Did you hear? {news}" if news else "Not much news from me."
    return json.dumps({"utterance": opener + share, "end": False})


def answer_summary(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = re.search(r"from (.+?)'s point of view", content).group(1)
    said = [line.split(": ", 1) for line in content.split(":\n", 1)[1].split("\n\nIn one sentence")[0].splitlines()
            if ": " in line]
    theirs = [text for speaker, text in said if speaker != name]
    other = next((speaker for speaker, _ in said if speaker != name), "someone")
    news = next((t.split("Did you hear? ", 1)[1] for t in theirs if "Did you hear? " in t), None)
    summary = f"{other} told {name}: {news}" if news else f"{name} chatted with {other}"
    return json.dumps({"summary": summary})


def answer_interview(messages: list[Message]) -> str:
    """Quote the remembered statements that share most words with the question (then the most important)."""
    content = prompt_of(messages)
    question = set(content_words(content.split("Interviewer: ", 1)[1].split("\n", 1)[0]))
    facts = list(dict.fromkeys(t for _, t in sorted(_facts(content), key=lambda f: (
        -len(question & set(content_words(f[1]))), -f[0]))))[:3]
    if not facts:
        return "I don't remember anything about that."
    return "From what I remember: " + " ".join(f if f.endswith(".") else f + "." for f in facts)


register_rules({prompts.START_PURPOSE: answer_start, prompts.TURN_PURPOSE: answer_turn,
            prompts.SUMMARY_PURPOSE: answer_summary, prompts.INTERVIEW_PURPOSE: answer_interview})
