"""memstream eval: loaders survive the benchmarks' defects, metrics are right, the CLI reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.errors import MemstreamError
from memstream.eval import data_file, evaluate, load_locomo, load_longmemeval
from memstream.eval.datasets import SAMPLES
from memstream.eval.metrics import ndcg, recall_all, recall_any
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.models.base import WINDOW_WORDS
from memstream.stream import Weights, add_rated
from tests.helpers import LOCOMO_DEV, LONGMEMEVAL_DEV, needs_data


def test_metrics() -> None:
    ranked, ev = [4, 2, 9, 1], frozenset({2, 1})
    assert recall_any(ranked, ev, 1) == 0 and recall_any(ranked, ev, 2) == 1
    assert recall_all(ranked, ev, 3) == 0 and recall_all(ranked, ev, 4) == 1
    assert ndcg([2, 1], ev, 2) == pytest.approx(1.0)
    assert ndcg(ranked, ev, 4) == pytest.approx((1 / 1.585 + 1 / 2.3219) / (1 + 1 / 1.585), rel=1e-3)


def _locomo_file(tmp_path: Path) -> Path:
    turns = [{"speaker": "Ann", "dia_id": f"D1:{i}", "text": f"turn {i} about topic{i}"} for i in range(1, 6)]
    turns[1]["blip_caption"] = "a photo of a red bicycle"
    conv = {"sample_id": "c1", "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns},
        "qa": [
            {"question": "joined ids", "answer": 3, "evidence": ["D1:1; D1:2"], "category": 1},
            {"question": "leading zero", "answer": "x", "evidence": ["D1:05"], "category": 4},
            {"question": "missing and malformed", "answer": "x", "evidence": ["D10:19", "D", "D1:3"],
             "category": 2},
            {"question": "no evidence", "answer": "x", "evidence": [], "category": 3},
            {"question": "adversarial", "adversarial_answer": "x", "evidence": [], "category": 5},
        ]}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([conv]))
    return path


def test_locomo_loader_survives_the_known_defects(tmp_path: Path) -> None:
    d = load_locomo(_locomo_file(tmp_path))
    h = d.haystacks[0]
    assert [m.key for m in h.memories] == [f"D1:{i}" for i in range(1, 6)]
    assert "[shares a photo: a photo of a red bicycle]" in h.memories[1].text
    assert h.memories[0].created_at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert [(q.text, sorted(q.evidence)) for q in h.questions] == [
        ("joined ids", [0, 1]), ("leading zero", [4]), ("missing and malformed", [2])]
    assert d.skipped["evidence ids unresolved"] == 2
    assert d.skipped["questions without resolvable evidence"] == 1
    assert d.skipped["adversarial questions (no evidence)"] == 1
    # the turn's context key holds its neighbours under the session date
    assert h.memories[2].lexical_keys[1].startswith("[08 May 2023] Ann: turn 2")


def test_wrong_shapes_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(MemstreamError, match="is not a LoCoMo file"):
        load_locomo(bad)
    with pytest.raises(MemstreamError, match="is not a LongMemEval file"):
        load_longmemeval(bad)
    bad.write_text("{oops")
    with pytest.raises(MemstreamError, match="is not valid JSON"):
        load_locomo(bad)


def _lme_file(tmp_path: Path) -> Path:
    filler = " ".join(["the weather was mild and the tea was warm"] * 60)  # ~600 words
    sessions = [
        [{"role": "user", "content": "I like jazz."}, {"role": "assistant", "content": "Nice."}],
        [{"role": "user", "content": filler + " By the way my cat is named Biscuit.", "has_answer": True},
         {"role": "assistant", "content": "Lovely name."},
         {"role": "user", "content": "Thanks"}, {"role": "assistant", "content": "Welcome."}],
        [{"role": "user", "content": "Recipes for soup?"}, {"role": "assistant", "content": "Try miso."}],
    ]
    item = {"question_id": "q1", "question_type": "single-session-user", "question": "What is my cat named Biscuit?",
            "answer": "Biscuit", "question_date": "2023/05/30 (Tue) 22:54",
            "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00", "2023/05/03 (Wed) 10:00"],
            "haystack_session_ids": ["s0", "answer_s1", "s2"], "haystack_sessions": sessions,
            "answer_session_ids": ["answer_s1"]}
    abstain = dict(item, question_id="q2_abs")
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([item, abstain]))
    return path


def test_longmemeval_granularities_and_abstention(tmp_path: Path) -> None:
    path = _lme_file(tmp_path)
    s = load_longmemeval(path, granularity="session")
    assert len(s.haystacks) == 1 and s.skipped["abstention questions (no evidence)"] == 1
    assert [m.key for m in s.haystacks[0].memories] == ["s0", "answer_s1", "s2"]
    assert s.haystacks[0].questions[0].evidence == {1}
    users = load_longmemeval(path, roles=("user",)).haystacks[0].memories[2]
    assert users.chunks == ["Recipes for soup?"] and "Try miso." in users.text  # BM25 still reads it all
    r = load_longmemeval(path, granularity="round")
    keys = [m.key for m in r.haystacks[0].memories]
    assert keys == ["s0#0", "answer_s1#0", "answer_s1#1", "s2#0"]
    assert r.haystacks[0].questions[0].evidence == {1}


def test_relevance_reads_all_of_a_long_memory(tmp_path: Path) -> None:
    d = load_longmemeval(_lme_file(tmp_path))
    long_session = d.haystacks[0].memories[1]
    assert len(long_session.text.split()) > 2 * WINDOW_WORDS and len(long_session.chunks) >= 4
    results = evaluate(d, HashEmbedder(256), OfflineChatModel(), retrievers=["relevance"], ks=[1],
                       progress=False)
    assert results[0]["recall_any@1"] == 1.0  # the fact sits past the first window


def test_the_span_a_question_names_lifts_the_memories_inside_it(tmp_path: Path) -> None:
    dates = ["2023/03/01 (Wed) 10:00", "2023/04/20 (Thu) 10:00", "2023/05/29 (Mon) 10:00"]
    sessions = [[{"role": "user", "content": "I went hiking in the hills today."}] for _ in dates]
    item = {"question_id": "q1", "question_type": "temporal-reasoning",
            "question": "Where did I go hiking in April?", "answer": "the hills",
            "question_date": "2023/05/30 (Tue) 09:00", "haystack_dates": dates,
            "haystack_session_ids": ["s0", "answer_s1", "s2"], "haystack_sessions": sessions,
            "answer_session_ids": ["answer_s1"]}
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([item]))
    d = load_longmemeval(path)

    def at_1(time: float) -> float:
        w = Weights(recency=0, importance=0, relevance=1, bm25=1, time=time)
        return evaluate(d, HashEmbedder(256), OfflineChatModel(), retrievers=["generative+bm25"], ks=[1], weights=w,
                        progress=False)[0]["recall_any@1"]

    assert at_1(0.0) == 0.0  # identical texts: the tie goes to the newest
    assert at_1(1.0) == 1.0  # "in April" holds 20 April, not 1 March or 29 May


@needs_data
def test_eval_cli_on_slices_of_the_dev_data(tmp_path: Path, capsys) -> None:
    locomo = json.loads(LOCOMO_DEV.read_text())[:1]
    small = tmp_path / "locomo-slice.json"
    small.write_text(json.dumps(locomo))
    out, plot = tmp_path / "r.json", tmp_path / "r.svg"
    code = main(["eval", "locomo", str(small), "--embedder", "hash", "-k", "5,10,20", "--json", str(out),
                 "--plot", str(plot), "--cache", str(tmp_path / "calls.db")])
    printed = capsys.readouterr().out
    assert code == 0 and "bm25+keys" in printed
    rows = json.loads(out.read_text())
    assert [r["retriever"] for r in rows] == ["recency", "importance", "relevance", "bm25", "bm25+keys",
                                              "hybrid", "generative", "generative+bm25"]
    for key in ("dataset", "granularity", "retriever", "n", "recall_any@5", "recall_all@5", "ndcg@5",
                "recall_any@10", "recall_all@10", "ndcg@10", "recall_any@20", "per_category"):
        assert key in rows[0]
    assert set(rows[0]["per_category"]) <= {"multi-hop", "temporal", "open-domain", "single-hop"}
    assert all(0 <= r["recall_all@10"] <= r["recall_any@10"] <= r["recall_any@20"] <= 1 for r in rows)
    svg = plot.read_text()
    assert "recall_any@k" in svg and "bm25+keys" in svg

    items = json.loads(LONGMEMEVAL_DEV.read_text())[:2]
    small = tmp_path / "lme-slice.json"
    small.write_text(json.dumps(items))
    code = main(["eval", "longmemeval", str(small), "--granularity", "round", "--retriever", "bm25,relevance",
                 "--embedder", "hash", "--embed-roles", "user", "--cache", str(tmp_path / "calls.db")])
    assert code == 0 and "longmemeval (round)" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "problem"), [
    (["--retriever", "magic"], "unknown retriever 'magic'"),
    (["-k", "0,5"], "-k"),
    (["--weights", "rel=x"], "--weights"),
    (["--weights", "rec=1,cosine=2"], "rec, imp, rel, bm25, time"),
    (["--plot", "out.pdf"], ".png or .svg"),
])
def test_eval_bad_input_is_one_line(tmp_path: Path, capsys, argv: list[str], problem: str) -> None:
    code = main(["eval", "locomo", str(_locomo_file(tmp_path)), "--embedder", "hash",
                 "--cache", str(tmp_path / "c.db"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1


@needs_data
def test_the_generative_retriever_is_the_streams_own_score(tmp_path: Path) -> None:
    """On real turns, the harness's generative ranking is what a MemoryStream holding them returns."""
    from memstream.eval.harness import _prepare, scores_for
    from memstream.stream import MemoryStream
    from memstream.stream.scoring import top_k

    conv = json.loads(LOCOMO_DEV.read_text())[:1]
    small = tmp_path / "one.json"
    small.write_text(json.dumps(conv))
    h = load_locomo(small, context=0).haystacks[0]
    emb, chat = HashEmbedder(256), OfflineChatModel()
    stream = MemoryStream(":memory:", emb)
    for m in h.memories:
        add_rated(stream, chat, "conv", m.text, at=m.created_at)
    p = _prepare(h, emb, chat, {"generative"})
    hits = 0.0
    for time in (0.0, 1.0):
        w = Weights(time=time)  # the retrievers' and the stream's weights are one type
        for i, q in enumerate(h.questions):
            score = scores_for("generative", p, i, w)
            expected = top_k(score, 10).tolist()
            got = stream.retrieve("conv", q.text, now=q.asked_at, k=10, weights=w, touch=False)
            # the same ranking, up to the order of scores equal within float32 rounding
            assert [score[r.memory.id - 1] for r in got] == pytest.approx([score[e] for e in expected], abs=1e-6)
            assert [r.score for r in got] == pytest.approx([score[r.memory.id - 1] for r in got], abs=1e-6)
            hits += sum(r.time for r in got)
    assert hits > 0  # some questions name a span that holds turns


def test_the_shipped_samples_stand_in_for_the_data_and_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.delenv("MEMSTREAM_DATA", raising=False)
    for benchmark, loader in (("locomo", load_locomo), ("longmemeval", load_longmemeval)):
        path = data_file(benchmark, tmp_path, say=said.append)
        assert path.parent == SAMPLES and path.is_file()
        data = loader(path)
        assert data.n_questions >= 3 and all(q.evidence for h in data.haystacks for q in h.questions)
        assert data.skipped.total() == 1  # the one adversarial or abstention item, as in the real files
    assert len(said) == 2 and all("memstream's own small sample" in s and "arXiv:" in s and "MEMSTREAM_DATA" in s
                                  for s in said)
    assert "LoCoMo" in said[0] and "LongMemEval" in said[1]
    # Where the dev file is, it is the one used, from the folder given or from MEMSTREAM_DATA.
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo-dev.json").write_text("[]")
    said.clear()
    assert data_file("locomo", tmp_path, say=said.append) == tmp_path / "locomo" / "locomo-dev.json"
    monkeypatch.setenv("MEMSTREAM_DATA", str(tmp_path))
    assert data_file("locomo", say=said.append) == tmp_path / "locomo" / "locomo-dev.json"
    assert data_file("longmemeval", say=None).parent == SAMPLES
    assert said == [f"LoCoMo: {tmp_path / 'locomo' / 'locomo-dev.json'}"] * 2
    with pytest.raises(MemstreamError, match="locomo, longmemeval"):
        data_file("lme", tmp_path)  # type: ignore[arg-type]
