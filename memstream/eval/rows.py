"""What ``memstream eval`` writes with ``--json``: a design's row, a scenario's row, the attack results.

TypedDicts, not models: the reports (:mod:`memstream.eval.report`) and plots read them as built, and they are
dumped to JSON as is, so the output keeps its exact bytes (keys in the order they are written).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class Scores(TypedDict):
    """How a design's answers scored over some questions (``n_evidence`` of them had evidence)."""

    judge_accuracy: float
    f1: float
    exact_match: float
    evidence_verbatim: float
    evidence_reachable: float
    n_evidence: int


class CategoryScores(Scores):
    """The scores of one question category, over its ``n`` questions."""

    n: int


class DesignRow(Scores):
    """One design at one budget on a dataset: scores, the context it assembled, and what writing cost."""

    dataset: str
    design: str
    budget: int | str
    n: int
    answer_model: str
    judge: str
    embedder: str
    context_tokens: float
    context_tokens_by_tier: dict[str, float]
    cut_per_question: float
    cut_to_window: int
    assembly_ms: float
    assembly_ms_p95: float
    write_calls_per_question: float
    write_tokens_per_question: float
    write_calls_per_turn: float
    write_tokens_per_turn: float
    write_seconds: float
    answer_latency_s: float
    per_category: dict[str, CategoryScores]
    skipped: dict[str, int]
    gate: str
    gate_counts: dict[str, int]


class Passed(TypedDict):
    """Questions of one kind: how many, how many passed, the share."""

    n: int
    passed: int
    share: float


class CostPerTurn(TypedDict):
    calls: float
    tokens: float
    seconds: float


class FactRow(TypedDict):
    """One scenario fact: the turn that stated it, when contexts first held it, lost it, or it expired."""

    fact: str
    stated: str
    found_first: str | None
    lost_at: str | None
    expired: str | None
    found_at_end: bool | None


class QuestionRow(TypedDict):
    """One scenario question as posed and judged."""

    id: str
    kind: str
    session: str
    after: str | None
    answer: str
    passed: bool
    context_tokens: int


class ScenarioRow(TypedDict):
    """One design through one scenario: facts matched turn by turn, questions passed, cost per turn."""

    scenario: str
    design: str
    budget: int
    turns: int
    facts: int
    answer_model: str
    judge: str
    embedder: str
    matched: float
    matched_at_end: float
    lost: int
    memory_dependent: Passed
    memory_corruptible: Passed
    cost_per_turn: CostPerTurn
    context_tokens: float
    compactions: int | None
    dropped_edits: int | None
    counters: dict[str, int]
    per_turn: list[TurnCheck]
    per_fact: list[FactRow]
    questions: list[QuestionRow]


class TurnCheck(TypedDict):
    """One turn's line of the matched table: the live facts, how many its contexts held, which were lost."""

    turn: str
    session: str
    live: int
    matched: int
    lost: list[str]
    missing: list[str]


class AttackCounts(TypedDict):
    """Texts of one family and kind through one design: how many were blocked, failed the gate, stored, seen."""

    n: int
    blocked: int
    failed: int
    stored: int
    in_context: int
    obeyed: NotRequired[int]


class AttackRow(TypedDict):
    """One text through one design (its answer and whether it was obeyed where probes were answered)."""

    id: str
    family: str
    kind: str
    blocked: bool
    failed: bool
    stored: bool
    in_context: bool
    verbatim: bool
    answer: NotRequired[str]
    obeyed: NotRequired[bool | None]


class AttackSummary(TypedDict):
    """One design's counts per family and kind, and the shares the targets are stated in."""

    attacks: int
    benign: int
    attacks_blocked: float
    attacks_blocked_or_absent: float
    attacks_in_context: float
    benign_blocked: float
    per_family: dict[str, dict[str, AttackCounts]]
    attacks_obeyed: NotRequired[float]
    benign_remembered: NotRequired[float]


class DesignAttacks(AttackSummary):
    """One design's summary, what its gate counted, and every text's row."""

    gate_counts: dict[str, int]
    texts: list[AttackRow]


class AttackResults(TypedDict):
    """What ``memstream eval attacks --json`` writes."""

    gate: str
    budget: int
    answer_model: str | None
    designs: dict[str, DesignAttacks]
