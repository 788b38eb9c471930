"""Trust: a write gate in front of every memory, and a critic in front of every consolidation.

A memory is shown to every later prompt, so one poisoned entry is a persistent prompt injection.
The gate classifies each new text (allow, or block with a reason) before it is stored; the critic
checks a model-written claim (an insight, a summary) against the evidence it cites. Both are
request stages, answered by a model or by the offline rules (a documented stand-in, not a model).
"""

from memstream.trust import offline as _offline_rules  # noqa: F401 - registers the gate's and critic's rules
from memstream.trust.audit import BLOCKED, CHECKED, FAILED, REJECTED, Audit, Blocked
from memstream.trust.checker import GATE_OFF, GATE_OFFLINE, Checker, make_checker
from memstream.trust.gate import GATE_MODEL, LOST, critic_stage, gate_stage, judge_name
from memstream.trust.offline import critic_reason, gate_reason
from memstream.trust.parse import MAX_REASON_CHARS, parse_verdict
from memstream.trust.prompts import CRITIC_PURPOSE, GATE_PURPOSE, critic_messages, gate_messages
from memstream.trust.verdict import OFF, OFFLINE_RULES, Verdict

__all__ = [
    "BLOCKED", "CHECKED", "CRITIC_PURPOSE", "FAILED", "GATE_MODEL", "GATE_OFF", "GATE_OFFLINE", "GATE_PURPOSE", "LOST",
    "MAX_REASON_CHARS", "OFF", "OFFLINE_RULES", "REJECTED", "Audit", "Blocked", "Checker", "Verdict", "critic_messages",
    "critic_reason", "critic_stage", "gate_messages", "gate_reason", "gate_stage", "judge_name", "make_checker",
    "parse_verdict",
]
