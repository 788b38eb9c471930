"""How the offline stand-in answers the designs' prompts (rules, not intelligence).

Recursive summary: the previous summary's sentences, then, for each new line, its first
sentence cut to ``CLAUSE_WORDS`` words; the oldest sentences are dropped until the whole fits
the word limit the prompt states. It keeps the newest gist verbatim and forgets the oldest
first: an extractive stand-in for a model's summary, with no knowledge of any dataset.
"""

from __future__ import annotations

import json
import re

from memstream.designs import prompts
from memstream.models import Message, prompt_of, register_rules
from memstream.offline_text import STOPWORDS, names

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


# -- the facts design ------------------------------------------------------------------------------------
#
# Extraction: each line of the new message that is not the assistant's, split into sentences; a sentence
# is kept if it is a statement (not a question) of at least FACT_MIN_WORDS words that says something
# about someone (a first-person word, a number or a name), clipped to FACT_MAX_WORDS words, prefixed by
# its speaker when the speaker is named; at most the number the prompt allows, the most telling first.
# Kind, salience and expiry come from word lists (liking words: preference; one-off past-event words:
# episode; "how to"/"steps": procedure; "this week": seven days). Classification: the known fact sharing
# the most content words with the new one; the same words: duplicate; all its words and more: extend;
# a statement that restricts or replaces what was said ("only", "instead", "no longer", "not ... anymore",
# "moved to", "changed to", "rather than" ...) sharing a content word with the known fact and changing
# or dropping one of its values (or negating it): update; two or more lowercase content words in common
# (the subject) while each has a value the other lacks (a number, a name, a day): update; else new. A
# stand-in: it knows no domain and no dataset, and an update it calls is a guess from the words.

FACT_MIN_WORDS = 4
FACT_MAX_WORDS = 40
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|we|our|us)\b", re.IGNORECASE)
_PREFERENCE = re.compile(r"\b(like|likes|love|loves|prefer|prefers|favou?rite|enjoy|enjoys|hate|hates|dislike|"
                         r"dislikes|fan of|into)\b", re.IGNORECASE)
_EPISODE = re.compile(r"\b(yesterday|last (week|night|month|year|weekend)|ago|this morning|went|visited|attended|"
                      r"met|bought|just got|finished|started)\b", re.IGNORECASE)
_PROCEDURE = re.compile(r"\b(how to|steps?|recipe|first,|then I|routine)\b", re.IGNORECASE)
_EXPIRY = ((re.compile(r"\b(today|tonight)\b", re.IGNORECASE), 1.0),
           (re.compile(r"\b(this|next) week\b", re.IGNORECASE), 7.0),
           (re.compile(r"\b(this|next) month\b", re.IGNORECASE), 31.0))
_LABEL = re.compile(r"^([^:\n]{1,40}):\s*(.*)$")
_TOKEN = re.compile(r"[a-z0-9]+")
_MAX_FACTS = re.compile(r"At most (\d+) facts")
#: Words by which a statement restricts or replaces an earlier one (the user changed their mind). "Moved back
#: to" is left out: on LongMemEval's dev slice it would update one fact, moving the pinned eval figures.
_REPLACES = re.compile(r"\b(only|instead|rather than|no longer|not\b[^.!?]*\b(anymore|any more)|(moved|changed|"
                       r"switched|pushed|postponed|brought forward|rescheduled) (to|until))\b", re.IGNORECASE)
#: Of those, the ones that take an earlier statement back (an update even with no new value).
_NEGATES = re.compile(r"\b(no longer|not\b[^.!?]*\b(anymore|any more))\b", re.IGNORECASE)


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[-1].split(end, 1)[0] if start in text else ""


def _candidates(message: str) -> list[tuple[float, int, str, str]]:
    """(how telling, position, speaker, sentence) for every statement in the message not the assistant's."""
    out: list[tuple[float, int, str, str]] = []
    for line in message.splitlines():
        label, body = (m.group(1).strip(), m.group(2)) if (m := _LABEL.match(line.strip())) else ("", line.strip())
        if label.lower() == "assistant":
            continue
        for sentence in _SENTENCE.split(body):
            words = sentence.split()
            if len(words) < FACT_MIN_WORDS or sentence.rstrip().endswith("?"):
                continue
            clipped = " ".join(words[:FACT_MAX_WORDS])
            telling = 2.0 * bool(_FIRST_PERSON.search(clipped)) + bool(re.search(r"\d", clipped)) + bool(names(clipped))
            if telling:
                out.append((telling, len(out), label, clipped))
    return out


def answer_extract(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    limit = int(m.group(1)) if (m := _MAX_FACTS.search(prompt)) else 8
    message = _between(prompt, f"{prompts.MESSAGE} (", prompts.END_MESSAGE).split("):\n", 1)[-1]
    kept = sorted(sorted(_candidates(message), key=lambda c: (-c[0], c[1]))[:limit], key=lambda c: c[1])
    facts = []
    for telling, _, label, sentence in kept:
        text = f"{label}: {sentence}" if label and label.lower() != "user" else sentence
        kind = ("preference" if _PREFERENCE.search(sentence) else "procedure" if _PROCEDURE.search(sentence)
                else "episode" if _EPISODE.search(sentence) else "fact")
        expires = next((days for pattern, days in _EXPIRY if pattern.search(sentence)), None)
        facts.append({"text": text, "kind": kind, "salience": round(min(1.0, 0.2 + 0.15 * telling), 2),
                      "entities": names(sentence)[:5], "event_at": None, "expires_in_days": expires})
    return json.dumps({"facts": facts})


def _words(text: str) -> set[str]:
    return {w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS}


def _subject_and_values(text: str) -> tuple[set[str], set[str]]:
    """A fact's lowercase content words (what it is about) and its values (numbers, and capitalised words
    past the first: names, days, months), the part an update changes."""
    tokens = re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]*", text)
    values = {t.lower() for i, t in enumerate(tokens) if any(c.isdigit() for c in t) or (i and t[0].isupper())}
    subject = {t.lower() for t in tokens if t.islower() and t.lower() not in STOPWORDS and len(t) > 2}
    return subject - values, values


def _restates(subject: set[str], old_subject: set[str]) -> bool:
    """Whether a new statement is about what a known fact is about: it holds at least half of the fact's
    subject words (contractions such as "don't" left out: they say how, not what about). A restriction
    of the fact restates its subject; a sentence sharing one word of a long one is about something else."""
    mine, theirs = ({w for w in words if "'" not in w} for words in (subject, old_subject))
    shared = mine & theirs
    return bool(shared) and 2 * len(shared) >= len(theirs)


def answer_classify(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    listed = _between(prompt, prompts.KNOWN, prompts.CANDIDATE).strip().splitlines()
    known = [line.split(". ", 1)[1] for line in listed if ". " in line]
    text = prompt.split(prompts.CANDIDATE, 1)[-1].split("\n\n", 1)[0]
    new = _words(text)
    if not known or not new:
        return json.dumps({"action": "new", "target": None})
    best = max(range(len(known)), key=lambda i: (len(new & _words(known[i])), -i))
    old = _words(known[best])
    (subject, values), (old_subject, old_values) = _subject_and_values(text), _subject_and_values(known[best])
    if new == old:
        action = "duplicate"
    elif _restates(subject, old_subject) and _REPLACES.search(text) and (values ^ old_values or _NEGATES.search(text)):
        action = "update"  # before extend: "no longer" added to a fact holds all its words, and takes it back
    elif old < new:
        action = "extend"
    elif len(subject & old_subject) >= 2 and values - old_values and old_values - values:
        action = "update"
    else:
        action = "new"
    return json.dumps({"action": action, "target": best + 1 if action != "new" else None})


register_rules({prompts.EXTRACT_PURPOSE: answer_extract, prompts.CLASSIFY_PURPOSE: answer_classify})
