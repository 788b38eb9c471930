"""Trust: a write gate in front of every memory, and a critic in front of every consolidation.

A memory is shown to every later prompt, so one poisoned entry is a persistent prompt injection.
The gate classifies each new text (allow, or block with a reason) before it is stored; the critic
checks a model-written claim (an insight, a summary) against the evidence it cites. Both are
request stages, answered by a model or by the offline rules (a documented stand-in, not a model).
"""

from memstream.trust import offline as _offline_rules  # noqa: F401 - registers the gate's and critic's rules
from memstream.trust.audit import Audit, AuditCounts, AuditRecord, Blocked, BlockedRecord
from memstream.trust.checker import GATE_OFF, GATE_OFFLINE, Checker, make_checker
from memstream.trust.gate import critic_stage, gate_stage, judge_name
from memstream.trust.prompts import CRITIC_PURPOSE, GATE_PURPOSE
from memstream.trust.verdict import Verdict

__all__ = [
    "CRITIC_PURPOSE", "GATE_OFF", "GATE_OFFLINE", "GATE_PURPOSE", "Audit", "AuditCounts", "AuditRecord", "Blocked",
    "BlockedRecord", "Checker", "Verdict", "critic_stage", "gate_stage", "judge_name", "make_checker",
]
