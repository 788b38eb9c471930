"""memstream eval: retrieval measured on public long-term-memory benchmarks, every retriever side by side;
answers measured from every memory design's context, against what the context costs; scenario evals
(scripted sessions where only memory carries over, with facts checked turn by turn and questions judged); and
the attack set (texts that try to poison a memory, with benign look-alikes) that a write gate is measured on."""

from memstream.eval import offline as _offline_rules  # noqa: F401 - registers the answerer's and judge's rules
from memstream.eval.answers import Models, evaluate_designs
from memstream.eval.attackset import BUNDLED_ATTACKS, FAMILIES, load_attacks
from memstream.eval.datasets import Dataset, data_file, load_locomo, load_longmemeval, sliced
from memstream.eval.harness import RETRIEVERS, evaluate
from memstream.eval.poisoning import attacks_table, evaluate_attacks
from memstream.eval.report import designs_table, scenarios_table, table
from memstream.eval.rows import AttackResults, DesignRow, ScenarioRow
from memstream.eval.scenario import Scenario, bundled_scenarios, load_scenario
from memstream.eval.scenarios import DEFAULT_BUDGET, evaluate_scenarios

__all__ = [
    "BUNDLED_ATTACKS", "DEFAULT_BUDGET", "FAMILIES", "RETRIEVERS", "AttackResults", "Dataset", "DesignRow", "Models",
    "Scenario", "ScenarioRow", "attacks_table", "bundled_scenarios", "data_file", "designs_table", "evaluate",
    "evaluate_attacks", "evaluate_designs", "evaluate_scenarios", "load_attacks", "load_locomo", "load_longmemeval",
    "load_scenario", "scenarios_table", "sliced", "table",
]
