"""The write gate and the consolidation critic as request stages.

Each text is one request, all yielded as one list, so a runner batches them with whatever else is
asked in the same round (a simulated step's other questions). A lost answer is a failed check:
the caller skips the write and counts it, never stores an unchecked text.

A runner with a fallback (the simulation's) lets the offline rules answer a request the model lost,
as for every stage; the verdict then still names the gate's model in ``by``, and the loss is counted
in the model's usage under the purpose.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstream.models import ChatModel, OfflineChatModel, Request, Stage
from memstream.trust.parse import parse_verdict
from memstream.trust.prompts import CRITIC_PURPOSE, GATE_PURPOSE, critic_messages, gate_messages
from memstream.trust.verdict import OFF, OFFLINE_RULES, Verdict

#: ``Verdict.reason`` of a check that could not run.
LOST = "the check could not run (no usable answer); the write is skipped"
#: ``by`` when the caller does not say which model answers.
GATE_MODEL = "the gate's model"


def judge_name(chat: ChatModel) -> str:
    """What a verdict's ``by`` says for answers from ``chat`` (cached or not): the rules are never called a model."""
    return OFFLINE_RULES if chat.name == OfflineChatModel.name else chat.name


def gate_stage(texts: Sequence[str], *, sources: Sequence[str] | None = None, enabled: bool = True,
               by: str = GATE_MODEL) -> Stage[list[Verdict]]:
    """A verdict for each text: allowed, or blocked with a reason (``by`` names who answers: the
    model's name or :data:`~memstream.trust.verdict.OFFLINE_RULES`). ``sources`` (one per text:
    "told by Tom", "whispered", ...) are shown to the model. ``enabled=False`` allows every text
    and asks nothing."""
    if sources is not None and len(sources) != len(texts):
        raise ValueError(f"{len(sources)} sources for {len(texts)} texts")
    if not enabled:
        return [Verdict(allowed=True, reason="", by=OFF) for _ in texts]
    if not texts:
        return []
    asked = [Request(GATE_PURPOSE, gate_messages(t, sources[i] if sources else None), parse_verdict)
             for i, t in enumerate(texts)]
    answers = yield asked
    return [_verdict(a, by) for a in answers]


def critic_stage(claims: Sequence[str], evidence: Sequence[Sequence[str]], *, enabled: bool = True,
                 by: str = GATE_MODEL) -> Stage[list[Verdict]]:
    """A verdict for each claim (an insight, a summary) against the texts it cites: allowed when the
    evidence supports it and neither carries an instruction. ``enabled=False`` allows every claim."""
    if len(evidence) != len(claims):
        raise ValueError(f"{len(evidence)} evidence lists for {len(claims)} claims")
    if not enabled:
        return [Verdict(allowed=True, reason="", by=OFF) for _ in claims]
    if not claims:
        return []
    answers = yield [Request(CRITIC_PURPOSE, critic_messages(c, list(e)), parse_verdict)
                     for c, e in zip(claims, evidence, strict=True)]
    return [_verdict(a, by) for a in answers]


def _verdict(answer: tuple[bool, str] | None, by: str) -> Verdict:
    if answer is None:
        return Verdict(allowed=False, reason=LOST, by=by, failed=True)
    allowed, reason = answer
    return Verdict(allowed=allowed, reason=reason, by=by)
