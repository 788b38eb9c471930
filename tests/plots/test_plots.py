"""What the plots show: bars, labels, order, curves, cells; and bad input as one line."""

from __future__ import annotations

import json
from datetime import datetime
from importlib.resources import files
from pathlib import Path

import pytest

from memstream import plots
from memstream.cli import main
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.reflection import reflect
from memstream.stream import MemoryStream, Weights, add_rated
from tests.helpers import hours

OWNER = "Isabella Rodriguez"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("plots") / "s.db"
    with MemoryStream(path, HashEmbedder(256)) as s:
        for line in (files("memstream") / "examples" / "isabella.jsonl").read_text().splitlines():
            d = json.loads(line)
            add_rated(s, OfflineChatModel(), d["owner"], d["text"], at=datetime.fromisoformat(d["created_at"]))
        reflect(s, OWNER, hours(30), chat=OfflineChatModel())
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_components_bars_follow_the_recall_ranking(db: Path, capsys) -> None:
    code, out, _ = run(capsys, "recall", str(db), "--agent", OWNER, "--query", "Valentine party", "-k", "6",
                       "--no-touch", "--json")
    ranked = json.loads(out)
    with MemoryStream(db, create=False) as s:
        fig = plots.components(s, OWNER, "Valentine party", k=6)
    ax = fig.axes[0]
    assert len(ax.patches) == 3 * 6  # three stacked components per memory
    labels = [t.get_text() for t in ax.get_yticklabels()]
    positions = [t.get_position()[1] for t in ax.get_yticklabels()]
    top_down = [label for _, label in sorted(zip(positions, labels, strict=True), reverse=True)]
    for label, row in zip(top_down, ranked, strict=True):
        assert label.endswith(f"[{row['kind']}]") and label[:20] == " ".join(row["text"].split())[:20]
    widths = [sum(p.get_width() for p in ax.patches if abs(p.get_y() + p.get_height() / 2 - y) < 1e-6)
              for y in sorted(positions, reverse=True)]
    assert widths == pytest.approx([r["score"] for r in ranked])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["recency × 1", "importance × 1", "relevance × 1"]


def test_components_show_the_time_term_when_it_is_weighted(db: Path, capsys, tmp_path: Path) -> None:
    out = tmp_path / "t.svg"
    argv = ["plot", "components", str(db), "--agent", OWNER, "--query", "What did I do today?", "-k", "4",
            "--weights", "time=2", "-o", str(out)]
    assert run(capsys, *argv)[0] == 0
    assert "time × 2" in out.read_text()
    code, printed, _ = run(capsys, "recall", str(db), "--agent", OWNER, "--query", "What did I do today?", "-k", "4",
                           "--weights", "time=2", "--no-touch", "--json")
    rows = json.loads(printed)
    with MemoryStream(db, create=False) as s:
        fig = plots.components(s, OWNER, "What did I do today?", k=4, weights=Weights(time=2))
    ax = fig.axes[0]
    assert len(ax.patches) == 4 * 4  # four stacked components per memory
    widths = sorted((sum(p.get_width() for p in ax.patches if abs(p.get_y() - q.get_y()) < 1e-6)
                     for q in ax.patches[:4]), reverse=True)
    assert widths == pytest.approx([r["score"] for r in rows])
    assert any(r["time"] == 1.0 for r in rows)  # the stream's last day is "today" at its own clock


def test_svg_keeps_its_text(db: Path, capsys, tmp_path: Path) -> None:
    out = tmp_path / "c.svg"
    assert run(capsys, "plot", "components", str(db), "--agent", OWNER, "--query", "party", "-o", str(out))[0] == 0
    svg = out.read_text()
    assert "Why Isabella Rodriguez recalls these" in svg and "relevance × 1" in svg


def test_decay_curves_and_memories(db: Path) -> None:
    with MemoryStream(db, create=False) as s:
        fig = plots.decay(s, OWNER, decays=(0.99, 0.995))
        n = s.count(OWNER)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["decay 0.99 per hour", "decay 0.995 per hour"]
    assert [len(c.get_offsets()) for c in ax.collections] == [n, n]
    assert ax.get_lines()[0].get_ydata()[0] == 1.0


def test_importance_counts_every_memory(db: Path) -> None:
    with MemoryStream(db, create=False) as s:
        fig = plots.importance(s, OWNER)
        total = s.count(OWNER)
    ax = fig.axes[0]
    assert sum(p.get_height() for p in ax.patches) == total
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {"observation", "reflection"}


def test_timeline_marks_reflections_and_the_trigger(db: Path) -> None:
    with MemoryStream(db, create=False) as s:
        fig = plots.timeline(s, OWNER)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["observation", "reflection"]
    assert any(c.get_label() == "reflection" for c in ax.collections)
    assert fig.axes[1].get_ylabel().startswith("trigger sum")


def test_reflection_graph_has_every_citation(db: Path) -> None:
    with MemoryStream(db, create=False) as s:
        refl = [m for m in s.memories(OWNER) if m.kind == "reflection"]
        fig = plots.reflections(s, OWNER, memory=refl[0].id)
    ax = fig.axes[0]
    arrows = [c for c in ax.texts if getattr(c, "arrow_patch", None) is not None]
    assert len(arrows) == len(refl[0].cites)
    assert any(t.get_text().startswith(f"[{refl[0].id}]") for t in ax.texts)


def test_weights_grid_shows_robust_and_fragile_memories(db: Path) -> None:
    with MemoryStream(db, create=False) as s:
        fig = plots.weights(s, OWNER, "Valentine party", k=3, step=0.5)
        only_relevance = s.retrieve(OWNER, "Valentine party", now=s.latest_time(OWNER), k=3, touch=False,
                                    weights=plots.Weights(recency=0, importance=0))
    ax = fig.axes[0]
    columns = [t.get_text() for t in ax.get_xticklabels()]
    assert columns == ["0/0/1", "0/0.5/0.5", "0/1/0", "0.5/0/0.5", "0.5/0.5/0", "1/0/0"]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    ranks = ax.images[0].get_array()
    column = ranks[:, columns.index("0/0/1")]
    by_rank = {int(column[i]): rows[i] for i in range(len(rows)) if not ranks.mask[i, 0]}
    assert [by_rank[r] for r in (1, 2, 3)] == [plots._label(r.memory.text, r.memory.kind, 40) for r in only_relevance]
    # rows are sorted by how many weightings keep the memory in the top k
    kept = (~ranks.mask).sum(axis=1)
    assert list(kept) == sorted(kept, reverse=True)


def test_recall_plot_from_eval_json(tmp_path: Path, capsys) -> None:
    results = [{"dataset": "locomo", "granularity": "turn", "retriever": name, "n": 3, "embedder": "hash-64",
                "recall_any_curve": curve} for name, curve in (("bm25", [0.2, 0.5, 0.9]), ("relevance", [0.1, 0.3, 0.6]))]
    path = tmp_path / "eval.json"
    path.write_text(json.dumps(results))
    out = tmp_path / "recall.svg"
    assert run(capsys, "plot", "recall", str(path), "-o", str(out))[0] == 0
    svg = out.read_text()
    assert "bm25" in svg and "relevance" in svg and "recall_any@k" in svg


@pytest.mark.parametrize(("argv", "problem"), [
    (["plot", "components", "{db}", "--agent", "Nobody", "--query", "x", "-o", "{tmp}/a.png"], "unknown agent"),
    (["plot", "components", "{db}", "--agent", OWNER, "--query", "x", "-o", "{tmp}/a.pdf"], ".png or .svg"),
    (["plot", "timeline", "{tmp}/empty.db", "--agent", OWNER, "-o", "{tmp}/a.png"], "unknown agent"),
    (["plot", "recall", "{tmp}/nothing.json", "-o", "{tmp}/a.png"], "no such eval --json output"),
    (["plot", "decay", "{tmp}/missing.db", "--agent", OWNER, "-o", "{tmp}/a.png"], "no stream at"),
])
def test_plot_bad_input(db: Path, tmp_path: Path, capsys, argv, problem) -> None:
    MemoryStream(tmp_path / "empty.db", HashEmbedder(8)).close()
    code, _, err = run(capsys, *[a.format(db=db, tmp=tmp_path) for a in argv])
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1
