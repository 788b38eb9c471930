"""How the offline stand-in model talks (rules, not intelligence).

- It starts a conversation with someone its listed memories mention by name.
- A relationship is what its memories say: whom it knows and how, how often they have talked.
- Each speaker shares, in its own words (first person for itself, the fact without who told it
  for news heard), the most important thing it remembers that has not been said yet and is not
  about the listener, its own doings, a plan or a dialogue (among equally important things, the one
  the run's seed draws); after four lines it says goodbye.
  So news spreads from agent to agent as in the paper's party invitation.
- A memo says what the other told it, turned into the third person; a conversation is as
  poignant as its most poignant line on the importance rules; the planning thought is the first
  event the other mentioned with a time and a place (:func:`memstream.offline_text.commitment`).
- An interview answer quotes the remembered statements that share most words with the question.
- Asked whether it knows of something, it does if a listed memory holds every content word of it.
- As a judge it checks grounding only: the share of the answer's content words found in the memories
  shown, as a score of 1 to 5, hallucinated below half.
"""

from __future__ import annotations

import json
import re

from memstream.models import Message, prompt_of, register_rules, tie_breaker
from memstream.offline_text import commitment, content_words
from memstream.sim import prompts
from memstream.stream import rate_poignancy

_MEMORY = re.compile(r"^- \((\w+), importance (\d+)\) (.+)$", re.M)
_TOLD = re.compile(r"^(?:[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* told [A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* that )+")
#: Not passed on as news: plans, dialogues, what was seen (someone's doings, an object's state) and the
#: rules' own reflections; what is shared is the speaker's situation and what it was told.
_NOT_SHARED_KINDS = frozenset({"plan", "dialogue", "observation", "reflection"})
_FIRST_PERSON = {"has": "have", "is": "am", "does": "do", "was": "was"}
_THIRD_PERSON = {"have": "has", "am": "is", "do": "does", "go": "goes", "was": "was"}
_ACQUAINTANCE = re.compile(r"^[^:]+ knows [^:]+: ")  # whom one knows and how: one's own business, not news
_CLOSINGS = ("Good to know. I should get going.", "Nothing new with me.")


def _news(content: str, listener: str) -> list[tuple[int, str]]:
    """What the speaker could pass on, most important first (equals in the order the run's seed draws): not
    of a kind kept to oneself, not a planning thought, not about the listener, not whom the speaker knows."""
    news = [(int(i), text) for kind, i, text in _MEMORY.findall(content)
            if kind not in _NOT_SHARED_KINDS and not text.startswith(prompts.PLANS_PREFIX) and listener not in text
            and not _ACQUAINTANCE.match(text)]
    draw = tie_breaker(content)
    return [(i, text) for i, _, text in sorted((i, draw.random(), text) for i, text in news)[::-1]]


def in_my_words(fact: str, speaker: str) -> str:
    """A remembered statement as the speaker says it: news without who told it, itself in the first person."""
    text = _TOLD.sub("", fact)
    label = re.match(rf"{re.escape(speaker)}'s (?:current situation|situation on [^:]+): ", text)
    if label:
        rest = text[label.end():]
        text = f"{speaker} {_as_predicate(rest)}" if rest[:1].islower() else rest  # "planning a party"
    text = re.sub(rf"\b{re.escape(speaker)} (\w+)\b", lambda m: "I " + _FIRST_PERSON.get(
        m.group(1), m.group(1)[:-1] if _third_person_verb(m.group(1)) else m.group(1)), text)
    text = re.sub(rf"\b{re.escape(speaker)}'s\b", "my", text)
    text = re.sub(rf"\b{re.escape(speaker)}\b", "I", text)
    return text[:1].upper() + text[1:]


def _third_person_verb(word: str) -> bool:
    """"runs", "loves" (not "curious", "glass", "has" which is handled apart)."""
    return word.endswith("s") and not word.endswith(("ss", "us", "is")) and word.islower()


def _as_predicate(rest: str) -> str:
    """A situation's predicate after the name: "planning a party" -> "is planning a party"."""
    first = rest.split(" ", 1)[0]
    return rest if first in _FIRST_PERSON or _third_person_verb(first) else f"is {rest}"


def in_their_words(said: str, speaker: str, listener: str) -> str:
    """What ``speaker`` said in the first person, retold by ``listener`` in the third."""
    said = re.sub(r"\bI'm\b", "I am", said)
    said = re.sub(r"\bI (\w+)", lambda m: f"{speaker} " + _THIRD_PERSON.get(
        m.group(1), m.group(1) + ("es" if m.group(1).endswith(("s", "sh", "ch", "x")) else "s")), said)
    for pattern, replacement in ((r"\bmy\b", f"{speaker}'s"), (r"\bme\b", speaker), (r"\bI\b", speaker),
                                 (r"\byou\b", listener)):
        said = re.sub(pattern, replacement, said)
    return said


def _lines(content: str, after: str, before: str) -> list[tuple[str, str]]:
    block = content.split(after, 1)[1].split(before, 1)[0]
    return [(speaker, text) for line in block.splitlines() if ": " in line for speaker, text in [line.split(": ", 1)]]


def answer_start(messages: list[Message]) -> str:
    content = prompt_of(messages)
    other = re.search(r"Should .+? start a conversation with (.+)\?", content).group(1)
    return json.dumps({"talk": any(other in text for _, _, text in _MEMORY.findall(content))})


def answer_relationship(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name, other = re.search(r"how does (.+?) know (.+?) and what", content).groups()
    texts = [text for _, _, text in _MEMORY.findall(content)]
    how = next((t.split(": ", 1)[1] for t in texts if t.startswith(f"{name} knows {other}: ")), "")
    talks = sum(t.startswith(f"Conversation with {other}") for t in texts)
    if not how and not talks:
        return json.dumps({"relationship": f"{name} does not know {other} yet"})
    parts = [f"{name} knows {other} ({how})" if how else f"{name} has met {other}"]
    if talks:
        parts.append(f"they have talked {talks} time{'s' if talks > 1 else ''} before")
    return json.dumps({"relationship": "; ".join(parts)})


def answer_turn(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = re.search(r"^You are (.+?)\. Stay in character", content).group(1)
    other = re.search(r"It is [^.]+\. .+? is talking with (.+?) at ", content).group(1)
    dialogue = content.split("The conversation so far:\n", 1)[1].split("\n\nWhat does", 1)[0]
    turns = [] if dialogue == "(nothing yet)" else dialogue.splitlines()
    told = [text for kind, _, text in _MEMORY.findall(content)  # what the two said to each other before
            if kind == "dialogue" and text.startswith(f"Conversation with {other}:")] + [dialogue]
    news = next((in_my_words(t, name) for imp, t in _news(content, other)
                 if imp >= 5 and not any(in_my_words(t, name) in said for said in told)), None)
    first = other.split()[0]
    if len(turns) >= 3:
        return json.dumps({"utterance": f"Bye, {first}! See you around.", "end": True})
    if len(turns) == 2:
        return json.dumps({"utterance": _CLOSINGS[0], "end": False})
    opener = f"Hi {first}! " if not turns else "Oh, I didn't know that. " if "Did you hear? " in turns[-1] else \
        "Good to see you. "
    share = f"Did you hear? {news}" if news else _CLOSINGS[1]
    return json.dumps({"utterance": opener + share, "end": False})


def _news_from(content: str, name: str) -> tuple[str, str] | None:
    """(who, what) of the first news the other side of the dialogue shared."""
    for speaker, text in _lines(content, ":\n", "\n\n"):
        if speaker != name and "Did you hear? " in text:
            return speaker, text.split("Did you hear? ", 1)[1].rstrip(".")
    return None


def answer_summary(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = re.search(r"from (.+?)'s point of view", content).group(1)
    a, b = re.search(r"A conversation between (.+?) and (.+?):\n", content).groups()
    other = b if name == a else a
    news = _news_from(content, name)
    summary = f"{other} told {name} that {in_their_words(news[1], other, name)}." if news else \
        f"{name} chatted with {other}"
    return json.dumps({"summary": summary})


def answer_poignancy(messages: list[Message]) -> str:
    """As poignant as the most poignant thing the other side said."""
    content = prompt_of(messages)
    name = re.search(r"how poignant is this conversation for (.+)\?", content).group(1)
    heard = [text for speaker, text in _lines(content, "just had:\n", "\n\nOn the scale") if speaker != name]
    return str(max((rate_poignancy(text) for text in heard), default=2))


def answer_plans(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = re.search(r"Is there anything from this conversation (.+?) needs to remember", content).group(1)
    for speaker, text in _lines(content, ":\n", "\n\nIs there anything"):
        event = commitment(text) if speaker != name else None
        if event:
            return json.dumps({"plans": f"{event.activity} at {event.place} {event.hours} {event.when}"})
    return json.dumps({"plans": "nothing to plan"})


def answer_interview(messages: list[Message]) -> str:
    """Quote the remembered statements that share most words with the question (then the most important)."""
    content = prompt_of(messages)
    name = re.search(r"^You are (.+?), being interviewed", content, re.M).group(1)
    question = set(content_words(content.rsplit("Interviewer: ", 1)[1].split("\n", 1)[0]))
    ranked = sorted(_MEMORY.findall(content), key=lambda m: (  # most words in common, then not a sighting
        -len(question & set(content_words(m[2]))), m[0] == "observation", -int(m[1])))
    facts = list(dict.fromkeys(in_my_words(text, name) for _, _, text in ranked))[:3]
    if not facts:
        return "I don't remember anything about that."
    return "From what I remember: " + " ".join(f if f.endswith(".") else f + "." for f in facts)


def answer_knows(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = re.search(r"^You are (.+?)\. Answer from", content).group(1)
    fact = re.search(r"Do you know about this: (.+?)\? Say what", content).group(1)
    terms = set(content_words(fact))
    known = next((t for _, _, t in _MEMORY.findall(content) if terms <= set(content_words(t))), None)
    return json.dumps({"knows": known is not None, "what": in_my_words(known, name) if known else ""})


def answer_judge(messages: list[Message]) -> str:
    content = prompt_of(messages)
    answer = set(content_words(re.search(r"^Answer: (.*)$", content, re.M).group(1)))
    remembered = set(content_words(" ".join(t for _, _, t in _MEMORY.findall(content))))
    share = len(answer & remembered) / len(answer) if answer else 0.0
    return json.dumps({"score": 1 + round(4 * share), "hallucinated": share < 0.5,
                       "why": f"{share:.0%} of the answer's words are in the memories shown"})


register_rules({prompts.START_PURPOSE: answer_start, prompts.KNOWS_PURPOSE: answer_knows,
                prompts.JUDGE_PURPOSE: answer_judge, prompts.RELATIONSHIP_PURPOSE: answer_relationship,
                prompts.TURN_PURPOSE: answer_turn, prompts.SUMMARY_PURPOSE: answer_summary,
                prompts.POIGNANCY_PURPOSE: answer_poignancy, prompts.PLANS_PURPOSE: answer_plans,
                prompts.INTERVIEW_PURPOSE: answer_interview})
