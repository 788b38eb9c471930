"""Model-free scores of an answer and of a context.

Token F1 and exact match follow SQuAD's normalisation (lower case, punctuation and articles
dropped), as LoCoMo's own F1 does. **Evidence in context** asks whether the gold evidence (LoCoMo's
evidence turns, LongMemEval's rounds that hold the answer) is in the assembled context: verbatim
(every evidence text appears in the context's text as written) or reachable through provenance
(every evidence record is among the ids the context's blocks name, so a summary or an insight
that cites it counts).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

import Stemmer

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_STEMMER = Stemmer.Stemmer("english")
#: Words too common to show that two texts are about the same thing.
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being do does did "
    "have has had i you he she it we they me him her us them my your his its our their this that these those "
    "what which who whom whose when where why how not no so than too very can will just would could should "
    "about into over after before up down out there here all any some".split())


def normalise(text: str) -> str:
    return " ".join(_ARTICLES.sub(" ", str(text).lower().translate(_PUNCT)).split())


def token_f1(prediction: str, gold: str) -> float:
    p, g = normalise(prediction).split(), normalise(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if not p or not g or not common:
        return float(p == g)
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> float:
    return float(normalise(prediction) == normalise(gold))


def content_tokens(text: str) -> list[str]:
    """Stemmed words that carry content (no stopwords), for the offline stand-ins' overlaps."""
    return _STEMMER.stemWords([w for w in normalise(text).split() if w not in STOPWORDS])


def evidence_verbatim(context_text: str, evidence_texts: Iterable[str]) -> float:
    texts = list(evidence_texts)
    return float(bool(texts) and all(t in context_text for t in texts))


def evidence_reachable(context_ids: set[int], evidence_ids: Iterable[int]) -> float:
    ids = set(evidence_ids)
    return float(bool(ids) and ids <= context_ids)
