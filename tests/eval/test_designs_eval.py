"""Answers measured: the offline pipeline end to end, the scores, the stand-ins, bad input, the window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.cli import main
from memstream.errors import MemstreamError
from memstream.eval import Models, evaluate_designs, load_locomo, load_longmemeval, sliced
from memstream.eval.answers import WINDOW
from memstream.eval.offline import answer_extractively, judge_lexically
from memstream.eval.prompts import answer_messages, judge_messages
from memstream.eval.scoring import evidence_reachable, evidence_verbatim, exact_match, token_f1
from memstream.models import ChatModel, Completion, HashEmbedder, OfflineChatModel
from memstream.plots import designs, pareto
from tests.helpers import LOCOMO_DEV, LONGMEMEVAL_DEV, needs_data, offline_models, tiny_locomo


def test_every_design_answers_every_question_and_full_is_always_there(tmp_path: Path) -> None:
    rows = evaluate_designs(load_locomo(tiny_locomo(tmp_path)), ["tiered"], [40, 400], offline_models(), progress=False)
    assert [(r["design"], r["budget"]) for r in rows] == [("full", 40), ("full", 400), ("tiered", 40),
                                                          ("tiered", 400), ("full", WINDOW)]
    whole = rows[-1]
    assert whole["evidence_verbatim"] == 1.0 and whole["cut_per_question"] == 0 and whole["n"] == 3
    assert whole["judge_accuracy"] > 0 and whole["f1"] > 0  # the extractive answer holds "Pixel", "Lisbon"
    assert rows[0]["context_tokens"] <= 40 and rows[0]["cut_per_question"] > 0
    tiered = rows[3]
    assert tiered["evidence_reachable"] >= tiered["evidence_verbatim"]
    assert set(tiered["per_category"]) == {"multi-hop", "single-hop", "temporal"}
    assert tiered["write_calls_per_question"] > 0 and "retrieved" in tiered["context_tokens_by_tier"]


def test_a_context_over_the_window_is_cut_and_counted_never_sent(tmp_path: Path) -> None:
    sent: list[int] = []

    class Measuring(OfflineChatModel):
        def _generate(self, messages, purpose, params):
            if purpose == "eval-answer":
                sent.append(sum(len(m["content"].split()) for m in messages))
            return super()._generate(messages, purpose, params)

    chat = Measuring()
    rows = evaluate_designs(load_locomo(tiny_locomo(tmp_path)), ["vector"], [5000], Models(chat, chat, chat,
                            HashEmbedder(64)), window=420, progress=False)
    assert all(r["cut_to_window"] == 3 for r in rows if r["budget"] == 5000)
    assert all(r["context_tokens"] <= 420 for r in rows)
    assert sent and max(sent) < 420


class Failing(ChatModel):
    name = "failing"

    def _generate(self, messages, purpose, params) -> Completion:
        raise MemstreamError("connection refused")


def test_an_answer_model_that_fails_stops_with_one_line(tmp_path: Path) -> None:
    chat = OfflineChatModel()
    with pytest.raises(MemstreamError, match=r"the answer model \(failing\) gave no usable answer: eval-answer: "
                                             r"the model call failed; answers had so far are kept in the call cache"):
        evaluate_designs(load_locomo(tiny_locomo(tmp_path)), ["full"], [100], Models(chat, Failing(), chat,
                         HashEmbedder(64)), progress=False)


@pytest.mark.slow
def test_the_cli_prints_the_table_writes_json_and_plots(tmp_path: Path, capsys) -> None:
    out, png = tmp_path / "d.json", tmp_path / "d.png"
    code = main(["eval", "locomo", str(tiny_locomo(tmp_path)), "--design", "buffer-summary,stream", "--budget", "60,300",
                 "--embedder", "hash", "--json", str(out), "--plot", str(png)])
    assert code == 0
    table = capsys.readouterr().out
    assert "buffer-summary" in table and "full" in table and "window" in table
    rows = json.loads(out.read_text())
    assert {r["design"] for r in rows} == {"full", "buffer-summary", "stream"} and png.stat().st_size > 0
    again = tmp_path / "again.svg"
    assert main(["plot", "designs", str(out), "--measure", "judge_accuracy", "-o", str(again)]) == 0
    assert again.read_text().startswith("<?xml")


@pytest.mark.parametrize(("argv", "problem"), [
    (["--design", "nosuch"], "unknown design 'nosuch'"),
    (["--design", "full", "--budget", "0"], "--budget '0' must be positive"),
    (["--design", "full", "--budget", "1k"], "--budget '1k' must be positive"),
    (["--design", "tiered", "--retriever", "magic"], "unknown retriever 'magic'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, argv: list[str], problem: str) -> None:
    out = tmp_path / "none.json"
    code = main(["eval", "locomo", str(tiny_locomo(tmp_path)), "--embedder", "hash", "--json", str(out), *argv])
    err = capsys.readouterr().err
    assert code == 2 and problem in err and err.count("\n") == 1 and not out.exists()


def test_state_files_are_reused_and_another_design_s_is_refused(tmp_path: Path, capsys) -> None:
    path, state = tiny_locomo(tmp_path), tmp_path / "state"
    argv = ["eval", "locomo", str(path), "--design", "stream", "--budget", "100", "--embedder", "hash",
            "--state", str(state)]
    assert main([*argv, "--json", str(tmp_path / "a.json")]) == 0
    assert sorted(p.name for p in state.iterdir()) == ["c1.full.json", "c1.stream.json"]
    assert main([*argv, "--json", str(tmp_path / "b.json")]) == 0  # read back, not written again
    first, second = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert [r["evidence_verbatim"] for r in first] == [r["evidence_verbatim"] for r in second]
    assert second[1]["write_calls_per_question"] == 0 < first[1]["write_calls_per_question"]
    capsys.readouterr()
    assert main([*argv, "--weights", "rec=0,imp=0"]) == 2
    assert "c1.stream.json was written with other stream settings" in capsys.readouterr().err
    (state / "c1.full.json").write_bytes((state / "c1.stream.json").read_bytes())
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "holds the state of the 'stream' design, not 'full'; load it with --design stream" in err
    assert err.count("\n") == 1
    (state / "c1.full.json").unlink()
    path.write_text(path.read_text().replace("Pixel", "Mochi"))  # the same conversation's key, other words
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "c1.stream.json was written from another conversation or with another model" in err
    assert err.count("\n") == 1


def test_plot_designs_refuses_other_json(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps([{"retriever": "bm25"}]))
    assert main(["plot", "designs", str(bad), "-o", str(tmp_path / "x.png")]) == 2
    assert "is not memstream eval --design --json output" in capsys.readouterr().err


def test_scores() -> None:
    assert token_f1("Pixel the cat", "pixel") == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0
    assert exact_match("The Pixel.", "pixel") == 1.0
    assert evidence_verbatim("a b c", ["a b", "c"]) == 1.0 and evidence_verbatim("a b c", ["a c"]) == 0.0
    assert evidence_verbatim("anything", []) == 0.0
    assert evidence_reachable({1, 2, 3}, [1, 3]) == 1.0 and evidence_reachable({1}, [1, 2]) == 0.0


def test_the_extractive_answerer_quotes_the_best_matching_sentence() -> None:
    context = ("## Recent conversation\n[08 May 2023 13:56] Ann: I like tea. My cat is called Pixel.\n"
               "[09 May 2023 13:56] Bob: The weather is fine.")
    assert answer_extractively(answer_messages(context, "What is the cat called?", _now())) == "My cat is called Pixel."
    assert answer_extractively(answer_messages(context, "Quantum chromodynamics?", _now())) == "I don't know"


def test_the_lexical_judge_reads_the_templates_it_is_given() -> None:
    def judge(category: str, gold: str, response: str, abstention: bool = False) -> str:
        return judge_lexically(judge_messages(category, "q?", gold, response, abstention=abstention))

    assert judge("single-hop", "Pixel", "My cat is called Pixel.") == "yes"
    assert judge("temporal-reasoning", "7 May 2023", "on 8 May 2023") == "no"
    assert judge("single-session-preference", "likes jazz", "You like jazz.") == "yes"
    assert judge("knowledge-update", "Lisbon", "She lives in Porto") == "no"
    assert judge("x", "no such thing", "I don't know", abstention=True) == "yes"
    assert judge("x", "no such thing", "It was Tuesday", abstention=True) == "no"


@given(st.lists(st.tuples(st.floats(0, 1e5), st.floats(0, 1)), max_size=30))
def test_the_pareto_front_holds_only_points_nothing_beats(points: list[tuple[float, float]]) -> None:
    front = pareto(points)
    for x, y in front:
        assert not any((px <= x and py > y) or (px < x and py >= y) for px, py in points)
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(front, front[1:], strict=False))


def _now():
    from datetime import UTC, datetime

    return datetime(2023, 6, 1, tzinfo=UTC)


@needs_data
def test_both_benchmarks_on_a_slice_of_the_dev_data() -> None:
    chat = OfflineChatModel()
    models = Models(chat, chat, chat, HashEmbedder(128))
    lme = sliced(load_longmemeval(LONGMEMEVAL_DEV, granularity="round", abstention=True), 2)
    rows = evaluate_designs(lme, ["tiered"], [2000], models, progress=False)
    assert rows[-1]["design"] == "full" and rows[-1]["n"] == 2
    locomo = sliced(load_locomo(LOCOMO_DEV), 20)
    rows = evaluate_designs(locomo, ["tiered"], [2000], models, progress=False)
    by = {(r["design"], r["budget"]): r for r in rows}
    assert by[("tiered", 2000)]["evidence_verbatim"] > by[("full", 2000)]["evidence_verbatim"]
    assert rows[0]["skipped"]["adversarial questions (no evidence)"] > 0
    assert designs(rows).axes
