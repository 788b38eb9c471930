"""A writer's gate and critic together, switched per run: off, the offline rules, or a model.

A :class:`Checker` is what a writer (a memory design, the town's stream) holds: it runs the gate
on new texts and the critic on model-written claims, and keeps the audit of what it kept out.
Who answers:

- ``off``: nothing is asked, every text is allowed (for experiments: the unguarded baseline);
- ``offline``: the offline rules, answered at once (no model, no network);
- a model of its own (``chat``), answered at once, outside the writer's batches;
- the writer's own model (``chat=None``, ``by`` naming it): the requests are yielded, so a batched
  runner answers them with everything else asked in the same round.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from memstream.errors import MemstreamError
from memstream.models import ChatModel, OfflineChatModel, Stage, concurrently, run_direct
from memstream.trust.audit import BLOCKED, CHECKED, FAILED, REJECTED, Audit, Blocked
from memstream.trust.gate import GATE_MODEL, critic_stage, gate_stage, judge_name
from memstream.trust.verdict import OFF, Verdict

R = TypeVar("R")

GATE_OFF = "off"
"""``--gate off``: no gate; every text is written as it comes."""
GATE_OFFLINE = "offline"
"""``--gate offline``: the offline rules judge each text (the other value is a model's spec)."""


@dataclass
class Checker:
    """The gate and the critic of one writer, with its audit."""

    enabled: bool = True
    critic: bool = True
    chat: ChatModel | None = None
    by: str = GATE_MODEL
    audit: Audit = field(default_factory=Audit)

    @classmethod
    def off(cls) -> Checker:
        return cls(enabled=False, critic=False, by=OFF)

    @classmethod
    def offline(cls, *, critic: bool = True) -> Checker:
        chat = OfflineChatModel()
        return cls(chat=chat, by=judge_name(chat), critic=critic)

    @property
    def name(self) -> str:
        """What ``--gate`` was: off, offline rules, or the model's name."""
        return OFF if not self.enabled else self.by

    def gate_stage(self, owner: str, texts: Sequence[str], *, what: str, sources: Sequence[str],
                   at: Sequence[str] | str = "") -> Stage[list[Verdict]]:
        """A verdict per text (every one allowed when off); each one kept out is audited and counted."""
        if not self.enabled or not texts:
            return [Verdict(True, "", OFF) for _ in texts]
        verdicts = yield from self._answered(gate_stage(texts, sources=sources, by=self.by))
        stamps = [at] * len(texts) if isinstance(at, str) else list(at)
        self.audit.counts[CHECKED] += len(texts)
        for text, source, stamp, v in zip(texts, sources, stamps, verdicts, strict=True):
            if not v.allowed:
                self.audit.counts[FAILED if v.failed else BLOCKED] += 1
                self.audit.blocked.append(Blocked(owner, text, what, source, v.reason, v.by, "gate", stamp, v.failed))
        return verdicts

    def consolidation_stage(self, owner: str, claims: Sequence[str], evidence: Sequence[Sequence[str]], *,
                            what: str, source: str, at: str = "") -> Stage[list[Verdict]]:
        """A verdict per model-written claim: the gate on its text and (unless switched off) the critic
        against its evidence, asked in one round; allowed only if both allow it."""
        if not self.enabled or not claims:
            return [Verdict(True, "", OFF) for _ in claims]
        stages = [gate_stage(claims, sources=[source] * len(claims), by=self.by)]
        if self.critic:
            stages.append(critic_stage(claims, evidence, by=self.by))
        results = yield from self._answered(concurrently(stages))
        self.audit.counts[CHECKED] += len(claims)
        out = []
        for i, claim in enumerate(claims):
            gate = results[0][i]
            critic = results[1][i] if self.critic else gate
            v = gate if not gate.allowed else critic
            if not v.allowed:
                count = FAILED if v.failed else (BLOCKED if v is gate else REJECTED)
                self.audit.counts[count] += 1
                self.audit.blocked.append(Blocked(owner, claim, what, source, v.reason, v.by,
                                                  "gate" if v is gate else "critic", at, v.failed))
            out.append(v)
        return out

    def _answered(self, stage: Stage[R]) -> Stage[R]:
        """``stage`` answered at once by this checker's own model, else yielded to the writer's runner."""
        if self.chat is not None:
            return run_direct(stage, self.chat)
        return (yield from stage)


def make_checker(spec: str, *, runner: ChatModel | None = None, critic: bool = True,
                 model: Callable[[str], ChatModel] | None = None) -> Checker:
    """A checker from ``--gate``: ``off``, ``offline``, or a model spec. The writer's own model
    (``runner``, when its name matches) is asked in the writer's batches; another model (made by
    ``model``, e.g. one with the caller's call cache, else plainly) at once."""
    if spec == GATE_OFF:
        return Checker.off()
    if spec == GATE_OFFLINE:
        return Checker.offline(critic=critic)
    if runner is not None and spec == runner.name:
        return Checker(by=runner.name, critic=critic)
    from memstream.models import make_chat_model

    try:
        chat = (model or make_chat_model)(spec)
    except MemstreamError as error:
        raise MemstreamError(f"--gate {spec!r}: {error}; use off, offline or a model spec such as "
                             "openai:MODEL") from None
    return Checker(chat=chat, by=judge_name(chat), critic=critic)
