"""Provenance: where a memory came from, read from what the stream records, and everything downstream
of a whispered source (through citations within an agent, through conversations across agents)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.errors import MemstreamError
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.sim import provenance, source_of
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.town.world import default_town_path, load_town
from memstream.stream import MemoryStream

START = datetime(2023, 2, 13, 6, tzinfo=timezone(timedelta(hours=-8)))
FACT = "Isabella Rodriguez is throwing a Valentine's Day party at Hobbs Cafe on February 14th at 5pm"


@pytest.fixture(scope="module")
def spread() -> tuple[MemoryStream, int]:
    """Two agents who meet (as in test_sim's spreading test), one whispered the party."""
    town = load_town(default_town_path())
    pair = [r for r in town.residents if r.name in ("Isabella Rodriguez", "Maria Lopez")]
    pair[1] = pair[1].model_copy(update={"home": pair[0].home, "wake": pair[0].wake, "routine": pair[0].routine,
                                         "relationships": {"Isabella Rodriguez": "friend"}})
    stream = MemoryStream(":memory:", HashEmbedder(256))
    source = stream.add("Isabella Rodriguez", FACT, at=START - timedelta(hours=1), importance=9, kind="thought",
                        metadata={"whisper": 1})
    Simulation(town, pair, stream, OfflineChatModel(), EventLog(None), start=START).run(START + timedelta(hours=2))
    return stream, source.id


def test_everything_downstream_of_a_whispered_source_is_listed(spread: tuple[MemoryStream, int]) -> None:
    stream, source = spread
    found = provenance(stream, "Isabella Rodriguez", source, fact="Valentine's Day party")
    assert found["memory"]["source"] == "whispered (whisper 1)"
    listed = {(d["owner"], d["id"]) for d in found["downstream"]}
    heard = [m for m in stream.memories("Maria Lopez") if m.kind == "dialogue" and "Valentine's Day party" in m.text]
    assert heard and {("Maria Lopez", m.id) for m in heard} <= listed
    memos = [m for m in stream.memories("Maria Lopez") if set(m.cites) & {h.id for h in heard}]
    assert memos and {("Maria Lopez", m.id) for m in memos} <= listed  # what Maria drew from what she heard
    for d in found["downstream"]:
        assert not d["possibly"]
        assert "Valentine" in d["text"] or d["how"].startswith("cites")
    told = next(d for d in found["downstream"] if d["owner"] == "Maria Lopez" and d["kind"] == "dialogue")
    assert told["source"] == "told by Isabella Rodriguez in a conversation"


def test_without_a_fact_the_owner_s_later_conversations_are_possible_carriers(spread: tuple[MemoryStream, int]
                                                                             ) -> None:
    stream, source = spread
    found = provenance(stream, "isabella rodriguez", source)
    assert found["downstream"] and all(d["possibly"] for d in found["downstream"] if not d["how"].startswith("cites"))


def test_a_model_written_memory_names_its_stage_and_its_evidence(spread: tuple[MemoryStream, int]) -> None:
    stream, _ = spread
    memo = next(m for m in stream.memories("Maria Lopez") if m.metadata.get("memo"))
    assert source_of(memo).startswith("model-written: the memo of a conversation from memory")
    found = provenance(stream, "Maria Lopez", memo.id)
    assert [u["id"] for u in found["upstream"]] == list(memo.cites)


def test_unknown_agents_and_memories_are_one_line(spread: tuple[MemoryStream, int]) -> None:
    stream, _ = spread
    for agent, memory in (("Nobody", 1), ("Maria Lopez", 10_000)):
        with pytest.raises(MemstreamError):
            provenance(stream, agent, memory)


def test_the_command_answers_for_a_run(tmp_path: Path, capsys) -> None:
    from memstream.sim import RunConfig, RunDir, Whisper, start_run

    out = tmp_path / "r"
    start_run(RunConfig(agents=2, start=START, hours=0.1, embedder="hash", gate="off"), out, progress=False,
              whispers=[Whisper(id=1, agent="Isabella Rodriguez", text=FACT, at=START)])
    with RunDir.open(out) as run:
        [whispered] = [m for m in run.stream.memories("Isabella Rodriguez") if "whisper" in m.metadata]
    assert main(["provenance", str(out), "--agent", "Isabella Rodriguez", "--memory", str(whispered.id)]) == 0
    assert "came from: whispered (whisper 1)" in capsys.readouterr().out
    assert main(["provenance", str(out), "--agent", "Isabella Rodriguez", "--memory", "99999"]) == 2
    err = capsys.readouterr().err
    assert "no memory 99999" in err and len(err.strip().splitlines()) == 1
