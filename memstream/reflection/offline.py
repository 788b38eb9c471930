"""How the offline stand-in model answers reflection prompts (rules, not intelligence).

Questions come from the most frequent people and activities in the statements;
insights group the numbered statements that share a frequent word or name and
cite exactly those statements, so every citation is real.
"""

from __future__ import annotations

import json
import re

from memstream.models import Message, prompt_of, register_rules
from memstream.offline_text import content_words, frequent, names
from memstream.reflection import prompts

_STATEMENT = re.compile(r"^(\d+)\. (.*)$")


def answer_questions(messages: list[Message]) -> str:
    text = prompt_of(messages).split("\n\nGiven only the information above")[0]
    people = frequent([n for line in text.splitlines() for n in names(line)], 2)
    words = [w for line in text.splitlines() for w in content_words(line)]
    activities = frequent([w for w in words if w.endswith("ing")], 2)
    topics = frequent(words, 3)
    subject = people[0] if people else "the agent"
    questions = [f"What is {subject} most focused on lately?"]
    if len(people) > 1:
        questions.append(f"What is the relationship between {people[0]} and {people[1]}?")
    if activities:
        questions.append(f"Why does {subject} spend time {activities[0]}?")
    for topic in topics:
        if len(questions) >= prompts.N_QUESTIONS:
            break
        questions.append(f"What does {subject} think about {topic}?")
    return json.dumps({"questions": questions[: prompts.N_QUESTIONS]})


def answer_insights(messages: list[Message]) -> str:
    content = prompt_of(messages)
    owner = content.splitlines()[0].removeprefix("Statements about ").strip()
    lines = content.splitlines()
    statements = {int(m.group(1)): m.group(2) for line in lines if (m := _STATEMENT.match(line))}
    keys = {n: set(content_words(t)) | {x.lower() for x in names(t)} for n, t in statements.items()}
    owner_words = set(content_words(owner)) | {owner.lower()} | {x.lower() for x in names(owner)}
    candidates = frequent([k for n in sorted(keys) for k in sorted(keys[n]) if k not in owner_words],
                          4 * prompts.N_INSIGHTS, min_count=2)
    insights, used = [], set()
    for key in candidates:
        cited = [n for n in sorted(keys) if key in keys[n]][:5]
        if tuple(cited) in used:
            continue
        used.add(tuple(cited))
        insights.append({"insight": f"{owner} often deals with {key}", "because": cited})
        if len(insights) == prompts.N_INSIGHTS:
            break
    if not insights and statements:
        insights.append({"insight": f"{owner} has had a quiet stretch", "because": sorted(statements)[:3]})
    return json.dumps({"insights": insights})


register_rules({prompts.QUESTIONS_PURPOSE: answer_questions, prompts.INSIGHTS_PURPOSE: answer_insights})
