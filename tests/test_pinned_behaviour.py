"""Behaviour pinned across restructurings: the same seed gives the same town and the same eval figures.

The digests below were taken from the code before the house's second round of restructuring (a
6-agent run, the valentine scenario, and ``memstream eval --design all`` on slices of the dev
halves). A change that moves code must leave them as they are. A change that means to change
behaviour (new offline rules, a new prompt) updates them in the same commit and says why: a failing
test prints the digests it found.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memstream.cli import main
from tests.helpers import DATA, contents

RUNS = {
    "six-agents": (["run", "--agents", "6", "--hours", "6", "--embedder", "hash", "--seed", "3"],
                   "343110ee3a95617d71934353aef789300224180c7a01395b55e1f80381b98155",
                   "24fd63010274e70538f75a69b81ecd52fd6bc0173055e0eb8308412e5a379dc7"),
    "valentine": (["run", "--scenario", "valentine", "--hours", "10", "--embedder", "hash"],
                  "e05438cb3ddee5de175a0a3a825b6edf0b7af71dc9979aedac8203d82d1a40b8",
                  "e93255048196432d194427bae8740ed2a4df23832143036052c7f278b0aceb3f"),
}

EVALS = {
    "locomo": (DATA / "locomo" / "locomo-dev.json", 12,
               "2e0c79f864505e2e6f6d2cf4bfdb861fbb809335bf156cce36b5f60848c24c15"),
    "longmemeval": (DATA / "longmemeval" / "longmemeval-s-dev.json", 1,
                    "58011d01e76b925ad49a182e1bbeb8d96ab6983d9c402b2fc64c3c3100302b50"),
}
#: Figures that are wall-clock times, which no two runs share.
TIMED = {"assembly_ms", "assembly_ms_p95", "write_seconds", "answer_latency_s"}
#: The models' names: the offline rules' name carries their version, which a change to rules these evals never
#: use (the town's talk, say) bumps; what is pinned is what the models answered and how it scored.
NAMES = {"answer_model", "judge"}


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=bytes.hex).encode()).hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_seeded_run_writes_the_pinned_event_log_and_stream(tmp_path: Path, name: str) -> None:
    args, events_digest, stream_digest = RUNS[name]
    assert main([*args, "--out", str(tmp_path / name)]) == 0
    events, memories, accesses = contents(tmp_path / name)
    found = (hashlib.sha256(events.encode()).hexdigest(), _digest([memories, accesses]))
    assert found == (events_digest, stream_digest), f"{name} now digests to {found}"


@pytest.mark.slow
@pytest.mark.real_data
@pytest.mark.parametrize("benchmark", sorted(EVALS))
def test_eval_of_every_design_gives_the_pinned_figures(tmp_path: Path, benchmark: str) -> None:
    path, limit, pinned = EVALS[benchmark]
    if not path.exists():
        pytest.skip(f"{path} is not here (the dev halves live in ../shared/data)")
    out = tmp_path / "eval.json"
    assert main(["eval", benchmark, str(path), "--design", "all", "--limit", str(limit), "--embedder", "hash",
                 "--json", str(out)]) == 0
    rows = [{k: v for k, v in row.items() if k not in TIMED | NAMES} for row in json.loads(out.read_text())]
    assert _digest(rows) == pinned, f"{benchmark} now digests to {_digest(rows)}"
