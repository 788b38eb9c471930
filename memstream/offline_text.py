"""Small text helpers the offline stand-in model uses to answer like a (very plain) writer."""

from __future__ import annotations

import re
from collections import Counter

_STOPWORDS = """a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more most my
myself no nor not now of off on once only or other our ours out over own same she should so some such than
that the their theirs them then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself today yesterday tomorrow
said says told tell one two also really going get got went go"""
STOPWORDS = frozenset(_STOPWORDS.split())

_NAME = re.compile(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b")
_WORD = re.compile(r"[a-z][a-z'-]+")


def names(text: str) -> list[str]:
    """Capitalised words and runs of them (people, places), minus sentence-starting function words."""
    return [n for n in _NAME.findall(text) if n.lower() not in STOPWORDS]


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 2]


def frequent(items: list[str], n: int, min_count: int = 1) -> list[str]:
    """The n most frequent items, ties broken by first appearance (deterministic)."""
    counts = Counter(items)
    first = {x: i for i, x in reversed(list(enumerate(items)))}
    ranked = sorted(counts, key=lambda x: (-counts[x], first[x]))
    return [x for x in ranked if counts[x] >= min_count][:n]


_IRREGULAR = {"be": "being", "have": "having", "lie": "lying", "die": "dying", "see": "seeing", "go": "going"}
_DOUBLE = {"run", "sit", "get", "set", "shop", "swim", "stop", "plan", "chat", "jog", "put", "cut", "begin"}


#: First words that do not start a verb phrase ("the party", "his work", "at the cafe").
_NOT_VERBS = frozenset("""a an the his her their my our your its this that these those at in on to for from with by
of and or but as after before during while about into onto""".split())


def is_verb_phrase(phrase: str) -> bool:
    """Whether ``phrase`` starts with a verb, as plan activities do ("serve coffee"): its first word is
    a lowercase word that is not an article, a pronoun's possessive or a preposition."""
    head = phrase.strip().split(" ", 1)[0]
    return bool(head) and head.isalpha() and head.islower() and head not in _NOT_VERBS


def doing(name: str, activity: str) -> str:
    """What another agent sees: "Ann is serving coffee", or "Ann is busy with the party" for a noun phrase."""
    return f"{name} is {gerund(activity)}" if is_verb_phrase(activity) else f"{name} is busy with {activity}"


def gerund(phrase: str) -> str:
    """'have breakfast' -> 'having breakfast': the first verb of a plan activity in -ing form.
    Anything that is not a verb phrase is returned as it is."""
    head, _, rest = phrase.strip().partition(" ")
    word = head.lower()
    if not word or word.endswith("ing") or not is_verb_phrase(phrase):
        return phrase
    if word in _IRREGULAR:
        ing = _IRREGULAR[word]
    elif word in _DOUBLE:
        ing = word + word[-1] + "ing"
    elif word.endswith("ie"):
        ing = word[:-2] + "ying"
    elif word.endswith("e") and not word.endswith(("ee", "ye", "oe")):
        ing = word[:-1] + "ing"
    else:
        ing = word + "ing"
    return f"{ing} {rest}".strip()


# -- persons: a statement turned between "I" and a name, as plain rules do it ----------------------

#: Words after "I" that stay as they are for any person: modals, the past, a few adverbs ("I just got").
_INVARIANT = frozenset("""can could will would shall should may might must did had was went got saw met told said
made took came heard thought found knew left felt bought brought gave ran sat began kept lost won wrote read
just really also never always still already often usually only once recently finally""".split())
_BE_HAVE = {"am": "is", "have": "has", "do": "does", "go": "goes", "was": "was"}
_BASE = {v: k for k, v in _BE_HAVE.items()}


def third_person(verb: str) -> str:
    """The verb after "I" as it reads after a name: "am" -> "is", "watch" -> "watches", "try" ->
    "tries"; a modal, a past form or an adverb is unchanged."""
    word = verb.lower()
    if word in _BE_HAVE:
        return _BE_HAVE[word]
    if word in _INVARIANT or word.endswith(("ed", "ly")) or not word.isalpha():
        return verb
    if word.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def first_person(verb: str) -> str:
    """The verb after a name as it reads after "I": "is" -> "am", "watches" -> "watch", "tries" -> "try"."""
    word = verb.lower()
    if word in _BASE:
        return _BASE[word]
    if not is_third_person(word):
        return verb
    if word.endswith("ies") and len(word) > 4:
        return verb[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1]


def is_third_person(word: str) -> bool:
    """"runs", "loves", "watches" (not "curious", "glass", "this", "has" which is handled apart)."""
    return word.endswith("s") and not word.endswith(("ss", "us", "is")) and word.isalpha() and word.islower()
