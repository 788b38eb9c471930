"""Sense checks on reflection answers: questions about a life, insights that are more than a statement.

A small model asked for high-level questions may ask about the shower it just saw; asked for insights,
it may copy one memory ("Ann is brushing her teeth") and cite statements that have nothing to do with
it. Those answers parse, so the shape parsers (:mod:`memstream.reflection.parse`) pass them; these
checks compare them with the statements the model was shown and refuse them with
:class:`ImplausibleAnswerError`, naming the problem, so the one retry shows the model what was wrong
(``docs/sense-checks.md``). Every rule is about words, never about a town's names.

Insights are judged one by one: the good ones of an answer are kept and the bad ones dropped (and
counted by check, :data:`RESTATEMENT`, :data:`UNSUPPORTED`); only an answer with nothing good left is
refused as a whole, because a retry costs a call and would lose the good insights already had.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memstream.errors import ImplausibleAnswerError
from memstream.offline_text import content_words, names
from memstream.reflection.parse import Insight

#: The checks an insight can fail, as named in ``DroppedInsight.check`` and the run's counts.
CITATIONS = "citations"
UNSUPPORTED = "unsupported"
RESTATEMENT = "restatement"

#: Words that make a question about a life rather than a thing: a relation, a plan, a feeling, work.
#: Conservative on purpose: a question with any of them (or naming anyone) is never called "about a thing".
LIFE_WORDS = frozenset("""relationship relationships friend friends friendship family neighbour neighbor colleague
colleagues partner plan plans planning planned goal goals intend intends hope hopes hoping want wants wish wishes
feel feels feeling feelings felt mood happy unhappy worried worry worries afraid fear fears excited enjoy enjoys
love loves like likes care cares think thinks believe believes value values focus focused focusing priority
priorities motivate motivates motivated work works working job career research study studies project projects
business life lives routine habit habits lately future ambition ambitions dream dreams interest interests
interested""".split())

#: An insight that adds at most this many content words to one cited statement adds nothing to it ...
RESTATED_NEW_WORDS = 1
#: ... unless it has fewer words than this besides names: in a short insight ("Klaus loves research") the one
#: new word may be the whole idea, while in a longer one it is a modifier copied around ("brushing her teeth
#: carefully"). Names are not counted, so a long name ("Ayesha Khan") does not make an insight long.
RESTATED_MIN_WORDS = 3


def _words(text: str) -> set[str]:
    return set(content_words(text))


def _name_words(text: str) -> set[str]:
    return {w.lower() for n in names(text) for w in n.split()}


def about_a_thing(question: str) -> bool:
    """Whether a question asks about a thing, not a life: it names no one and has no life word."""
    return not names(question) and not (_words(question) & LIFE_WORDS)


def _one_statement_holds(question: str, statements: list[str]) -> bool:
    words = _words(question)
    return bool(words) and any(words <= _words(s) for s in statements)


def _shared_object(questions: list[str], statements: list[str]) -> str | None:
    """A content word of the statements that every question (two or more) asks about, if there is one."""
    if len(questions) < 2:
        return None
    common = set.intersection(*(_words(q) for q in questions)) & set().union(*(_words(s) for s in statements))
    return min(common) if common else None


def check_questions(questions: list[str], statements: list[str]) -> list[str]:
    """``questions`` if at least one asks about a life; refused when every one asks about a thing (naming
    no one, with no word of relation, plan, feeling or work) and either they all ask about the same word
    of the statements or each is wholly the words of one statement."""
    if not questions or not all(about_a_thing(q) for q in questions):
        return questions
    shared = _shared_object(questions, statements)
    if shared or all(_one_statement_holds(q, statements) for q in questions):
        on = f"all about {shared!r}" if shared else "each only the words of one statement"
        raise ImplausibleAnswerError(
            f"the questions are about one object or observation ({on}), not about the person's life: ask "
            "high-level questions about the person named (their relationships, plans, feelings, work)")
    return questions


def restated(insight: str, statement: str) -> bool:
    """Whether ``insight`` only restates ``statement``: it adds no content word to it, or one word when it
    has :data:`RESTATED_MIN_WORDS` or more besides names (its words are almost all the statement's)."""
    words = _words(insight)
    new = words - _words(statement)
    long = len(words - _name_words(insight)) >= RESTATED_MIN_WORDS
    return bool(words) and (not new or (len(new) <= RESTATED_NEW_WORDS and long))


def supported(insight: str, cited: list[str]) -> bool:
    """The cheap first check of support: the insight shares a content word or a name with a cited statement."""
    words = _words(insight) | set(names(insight))
    return any(words & (_words(s) | set(names(s))) for s in cited)


def citation_problem(insight: Insight, n_statements: int) -> str | None:
    if not insight.because:
        return "no citations"
    bad = [n for n in insight.because if not 1 <= n <= n_statements]
    if bad:
        return f"citations out of range: {bad} (statements are 1-{n_statements})"
    return None


def insight_problem(insight: Insight, statements: list[str]) -> tuple[str, str] | None:
    """The check ``insight`` fails against the numbered ``statements`` it was written from, and why; None if
    it passes them all."""
    if reason := citation_problem(insight, len(statements)):
        return CITATIONS, reason
    cited = {n: statements[n - 1] for n in dict.fromkeys(insight.because)}
    if not supported(insight.insight, list(cited.values())):
        return UNSUPPORTED, f"shares no word with the statements it cites ({', '.join(map(str, cited))})"
    for n, text in cited.items():
        if restated(insight.insight, text):
            return RESTATEMENT, f"only restates statement {n} ({text[:80]!r})"
    return None


@dataclass
class CheckedInsights:
    """An insights answer judged item by item: what passed, and what was refused with its check and why."""

    kept: list[Insight] = field(default_factory=list)
    refused: list[tuple[Insight, str, str]] = field(default_factory=list)


def check_insights(insights: list[Insight], statements: list[str]) -> CheckedInsights:
    """Each insight judged against the statements; the answer refused as a whole only when none passes and
    one or more failed a sense check (citations alone out of range are dropped as before, not retried)."""
    out = CheckedInsights()
    for insight in insights:
        problem = insight_problem(insight, statements)
        if problem:
            out.refused.append((insight, *problem))
        else:
            out.kept.append(insight)
    senseless = [(i, why) for i, check, why in out.refused if check != CITATIONS]
    if not out.kept and senseless:
        listed = "; ".join(f"{i.insight[:80]!r} {why}" for i, why in senseless)
        raise ImplausibleAnswerError(
            f"no insight says more than the statements: {listed}. An insight states a pattern, a cause or a "
            "relationship that no single statement says outright, citing the statements that support it")
    return out
