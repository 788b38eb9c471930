"""Memory designs: the interface's promises (budgets, provenance, cuts counted, state), each design's own rule."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.designs import (
    DESIGNS,
    BufferSummary,
    Entry,
    FullContext,
    LettaDesign,
    MemoryDesign,
    StreamDesign,
    TieredDesign,
    design_names,
    entry,
    load_state,
    make_design,
    save_state,
)
from memstream.designs.offline import answer_summary
from memstream.designs.prompts import summary_messages
from memstream.errors import MemstreamError
from memstream.models import HashEmbedder, OfflineChatModel, count_tokens
from tests.helpers import FIXTURES

T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
TOPICS = ["painting", "adoption agency", "camping trip", "pottery class", "charity race", "new puppy",
          "guitar lessons", "job interview", "sunflowers", "beach house"]


def turns(n: int, session: str = "S1", start: int = 0) -> list[Entry]:
    """Statements a selective memory keeps too (the profile's selection rule: durable, said of oneself)."""
    speakers = ("Ann", "Bob")
    return [entry(text=f"{speakers[i % 2]}: I love the {TOPICS[i % len(TOPICS)]} number {i}.",
                  at=T0 + timedelta(minutes=i), source=speakers[i % 2], session=session) for i in range(start, start + n)]


def build(name: str, **config) -> MemoryDesign:
    return make_design(name, embedder=HashEmbedder(64), **config)


def written(design: MemoryDesign, entries: list[Entry], owner: str = "ann") -> list[int]:
    chat = OfflineChatModel()
    ids = design.write(owner, entries, chat=chat)
    design.consolidate(owner, entries[-1].at, chat=chat)
    return ids


@pytest.mark.parametrize("name", list(DESIGNS))
def test_every_design_keeps_to_its_budget_and_names_its_sources(name: str) -> None:
    design = build(name)
    ids = written(design, turns(60))
    assert ids == sorted(ids) and len(set(ids)) == 60
    for budget in (60, 300, 5000):
        c = design.context("ann", "Tell me about the pottery class", T0 + timedelta(days=1), budget)
        assert c.tokens <= budget
        assert all(b.tokens == count_tokens(b.rendered) for b in c.blocks)  # counted exactly as the model reads it
        passages = set(design.archival) if isinstance(design, LettaDesign) else set()  # the agent's, between turns
        assert c.ids and c.ids <= set(ids) | set(range(ids[-1] + 1, ids[-1] + 1000)) | passages  # or insights it wrote
        assert c.text.count("## ") == len(c.blocks)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_owners_never_mix(name: str) -> None:
    design = build(name)
    written(design, turns(12), owner="ann")
    written(design, [entry(text="Bob: I have a secret, the blue door.", at=T0, source="Bob")], owner="bob")
    assert "blue door" not in design.context("ann", "what is the secret door?", T0 + timedelta(hours=1), 4000).text
    assert "blue door" in design.context("bob", "what is the secret door?", T0 + timedelta(hours=1), 4000).text


def test_full_cuts_from_the_oldest_and_counts_it() -> None:
    design = FullContext()
    written(design, turns(40))
    c = design.context("ann", "anything", T0, 200)
    assert "number 39." in c.text and "number 0." not in c.text
    assert c.cut > 0 and c.cut + c.text.count("\n[") == 40  # every record either shown or counted as cut
    whole = design.context("ann", "anything", T0, 100_000)
    assert whole.cut == 0 and all(f"number {i}." in whole.text for i in range(40))
    assert FullContext(FullContext.Config(window_tokens=150)).context("ann", "x", T0, 100_000).tokens <= 150


def test_buffer_summary_keeps_the_last_turns_and_summarises_the_rest_in_batches() -> None:
    design = BufferSummary(BufferSummary.Config(turns=8, batch=5, summary_words=60))
    chat = OfflineChatModel()
    design.write("ann", turns(33), chat=chat)
    summary = design.summaries["ann"]
    assert len(summary.covers) == 25 and summary.calls == 5  # 25 evicted, in batches of 5; 8 in the window
    assert design.consolidate("ann", T0, chat=chat) == 0  # nothing left over
    c = design.context("ann", "x", T0, 10_000)
    assert [b.tier for b in c.blocks] == ["summary", "window"]
    assert all(f"number {i}." in c.blocks[1].text for i in range(25, 33))
    assert set(c.blocks[0].ids) == set(summary.covers)
    assert len(summary.text.split()) <= 60
    assert chat.usage.by_purpose["design-summary"].calls == 5


def test_a_summary_batch_the_model_cannot_answer_stays_pending() -> None:
    design = BufferSummary(BufferSummary.Config(turns=2, batch=3))
    broken = OfflineChatModel()
    broken.register("design-summary", lambda messages: "   ")
    design.write("ann", turns(8), chat=broken)
    assert design.summaries["ann"].covers == [] and len(design.summaries["ann"].pending) == 6
    assert "number 0." in design.context("ann", "x", T0, 10_000).text  # not lost: still in the window
    assert broken.usage.by_purpose["design-summary"].unusable == 1


def test_the_stream_reflects_and_an_insight_cites_its_turns() -> None:
    design = StreamDesign(StreamDesign.Config(reflect_threshold=20), embedder=HashEmbedder(64))
    met = [entry(text=f"Ann: I met Ben Lee at the {TOPICS[i % len(TOPICS)]} number {i}.", at=T0 + timedelta(minutes=i),
                 source="Ann") for i in range(40)]  # a pattern the offline reflection states (it invents none)
    ids = written(design, met)
    assert design.reflections == 1
    insights = [m for m in design.stream.memories("ann") if m.kind == "reflection"]
    assert insights
    c = design.context("ann", insights[0].text, T0 + timedelta(days=1), 4000)
    assert "(insight)" in c.text and set(insights[0].cites) <= c.ids
    assert c.ids - set(ids) <= {m.id for m in insights}


def test_tiered_fills_each_tier_under_its_share_and_always_shows_what_is_pinned() -> None:
    design = TieredDesign(TieredDesign.Config(retriever="bm25", window_turns=4, batch=5), embedder=None)
    pinned = entry(text="Ann is vegetarian and lives in Leeds.", at=T0 - timedelta(days=1), kind="pinned")
    written(design, [pinned, *turns(50)])
    c = design.context("ann", "How did the charity race go?", T0 + timedelta(days=1), 400)
    tiers = {b.tier: b for b in c.blocks}
    assert list(tiers) == ["pinned", "summary", "retrieved", "window"]
    assert "vegetarian" in tiers["pinned"].text
    assert tiers["summary"].tokens <= 40 + 1 and tiers["window"].tokens <= 60 + 1
    assert "charity race" in tiers["retrieved"].text
    assert not set(tiers["retrieved"].ids) & set(tiers["window"].ids)  # nothing shown twice


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                              max_size=80).filter(str.strip), min_size=1, max_size=30),
       budget=st.integers(1, 400), name=st.sampled_from(sorted(DESIGNS)), query=st.text(max_size=30))
def test_any_text_and_budget_gives_a_context_within_the_budget(texts: list[str], budget: int, name: str,
                                                               query: str) -> None:
    design = build(name, **({"reflect_threshold": 10} if name == "stream" else {}))
    entries = [entry(text=t, at=T0 + timedelta(minutes=i), session=f"S{i // 7}") for i, t in enumerate(texts)]
    ids = written(design, entries)
    c = design.context("ann", query, T0 + timedelta(days=1), budget)
    assert c.tokens <= budget and sum(b.tokens for b in c.blocks) == c.tokens
    if name != "stream":
        assert c.ids <= set(ids)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_state_round_trips_through_its_file(tmp_path: Path, name: str) -> None:
    design = build(name, **({"reflect_threshold": 20} if name == "stream" else {}))
    written(design, turns(30))
    path = save_state(design, tmp_path / f"{name}.json")
    again = build(name)
    load_state(again, path)
    for budget in (100, 1000):
        a = design.context("ann", "the new puppy", T0 + timedelta(days=1), budget)
        b = again.context("ann", "the new puppy", T0 + timedelta(days=1), budget)
        assert (a.text, a.ids) == (b.text, b.ids)


def test_another_design_s_state_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = save_state(build("stream"), tmp_path / "state.json")
    with pytest.raises(MemstreamError, match=r"holds the state of the 'stream' design, not 'tiered'; load it with "
                                             r"--design stream") as refused:
        load_state(build("tiered"), path)
    assert "\n" not in str(refused.value)
    (tmp_path / "junk.json").write_text('{"some": "thing"}')
    with pytest.raises(MemstreamError, match="not a memstream design state file"):
        load_state(build("full"), tmp_path / "junk.json")


def test_bad_names_budgets_and_settings_are_one_line() -> None:
    with pytest.raises(MemstreamError, match="unknown design 'nosuch'; use one of full, buffer-summary"):
        design_names("full,nosuch")
    assert design_names("all") == [n for n, d in DESIGNS.items() if d.in_all]  # a floor only when named
    assert "recent" not in design_names("all") and design_names("recent") == ["recent"]
    for budget in (0, -5):
        with pytest.raises(MemstreamError, match="positive number of tokens"):
            build("vector").context("ann", "q", T0, budget)
    with pytest.raises(MemstreamError, match="unknown retriever 'magic'"):
        build("tiered", retriever="magic")
    with pytest.raises(MemstreamError, match="bad settings for the buffer-summary design: turns"):
        build("buffer-summary", turns=0)
    with pytest.raises(MemstreamError, match="bad entry: at"):
        entry(text="x", at=datetime(2023, 1, 1))


def test_a_design_that_needs_a_model_says_so_when_given_none() -> None:
    with pytest.raises(MemstreamError, match="the stream design asks a chat model to write .importance."):
        build("stream").write("ann", turns(2))
    assert build("full").write("ann", turns(2)) == [1, 2]  # a design that asks nothing needs no model


@given(words=st.integers(5, 80), n=st.integers(1, 30))
def test_the_offline_summary_keeps_to_the_limit_it_is_asked(words: int, n: int) -> None:
    lines = [f"[08 May 2023 13:00] Ann: line {i} about the {TOPICS[i % 10]}. And more." for i in range(n)]
    answer = answer_summary(summary_messages("An earlier summary. It has two sentences.", lines, words))
    assert answer and (len(answer.split()) <= words or answer.count(".") == 1)
    assert f"line {n - 1}" in answer or len(answer.split()) > words  # the newest line is kept first


def test_summary_calls_grow_with_the_history_not_with_each_turn() -> None:
    design = BufferSummary(BufferSummary.Config(turns=10, batch=10))
    chat = OfflineChatModel()
    for s in range(10):
        design.write("ann", turns(30, session=f"S{s}", start=30 * s), chat=chat)
        design.consolidate("ann", T0, chat=chat)
    assert chat.usage.by_purpose["design-summary"].calls == math.ceil(290 / 10)


STATES = FIXTURES / "design_states"


#: The designs there were before typed state (a design made since has no state file of then).
BEFORE_TYPED_STATE = ("full", "buffer-summary", "vector", "stream", "tiered", "letta", "profile", "facts")


@pytest.mark.parametrize("name", BEFORE_TYPED_STATE)
def test_a_state_file_written_before_typed_state_loads_and_means_the_same(name: str) -> None:
    """The files in fixtures/design_states were written by the code before design state was typed."""
    import json

    written_then = json.loads((STATES / f"{name}.json").read_text())
    expected = json.loads((STATES / "contexts.json").read_text())[name]
    design = build(name, **written_then["config"])
    loaded = load_state(design, STATES / f"{name}.json")
    assert loaded.extra["note"] == "written at dfd4261" and loaded.config == design.config
    for key, want in expected.items():
        if key == "counters":
            continue
        owner, query, budget = key.split("|")
        c = design.context(owner, query, T0 + timedelta(days=1), int(budget))
        assert {"text": c.text, "ids": sorted(c.ids), "cut": c.cut, "cut_tokens": c.cut_tokens} == want, key
    # the stream counts the reflections it made since it was made; the others keep their counts in their state
    assert design.counters() == ({"reflections": 0} if name == "stream" else expected["counters"])


def test_fill_tiers_gives_each_tier_its_share_and_the_rest_what_is_left() -> None:
    from memstream.designs.context import Fit, Line, fit_newest, header_tokens
    from memstream.designs.tiers import Tier, assemble, fill_tiers, shown_ids

    lines = [Line(f"line {i}", 1, (i,), float(i)) for i in range(400)]  # a token each, more than fit
    rooms: dict[str, int] = {}

    def newest(name: str):
        def fill(room: int, fits: object) -> Fit:
            rooms[name] = room
            return fit_newest(lines, room)
        return fill

    fits = fill_tiers([Tier("pinned", newest("pinned"), 0.1), Tier("window", lambda room, _: Fit([]), 0.5),
                       Tier("retrieved", lambda room, fits: fit_newest(
                           [x for x in lines if x.ids[0] not in shown_ids(fits, "pinned")], room))], 200)
    assert rooms["pinned"] == 20 - header_tokens("pinned")  # its share, less its heading
    used = header_tokens("pinned") + fits["pinned"].tokens
    assert fits["retrieved"].tokens == 200 - used - header_tokens("retrieved")  # the empty window's share goes on
    assert not shown_ids(fits, "pinned") & shown_ids(fits, "retrieved")
    c = assemble(fits, ("retrieved", "pinned", "window"), 200)
    assert [b.tier for b in c.blocks] == ["retrieved", "pinned"] and c.tokens == 200


@pytest.mark.parametrize("name", BEFORE_TYPED_STATE)
def test_a_first_format_file_saved_again_is_per_owner_and_means_the_same(tmp_path: Path, name: str) -> None:
    import json

    config = json.loads((STATES / f"{name}.json").read_text())["config"]
    old = build(name, **config)
    load_state(old, STATES / f"{name}.json")
    saved = json.loads(save_state(old, tmp_path / "again.json").read_text())
    assert saved["format"] == 2 and (name == "facts" or set(saved["state"]["owners"]) == {"ann", "bob"})
    again = build(name, **config)
    load_state(again, tmp_path / "again.json")
    assert again.get_state() == old.get_state()
    for owner in ("ann", "bob"):
        a, b = (d.context(owner, "the pottery class", T0 + timedelta(days=1), 500) for d in (old, again))
        assert (a.text, a.ids, a.cut) == (b.text, b.ids, b.cut)


@pytest.mark.parametrize(("name", "damage", "problem"), [
    ("full", lambda s: s["owners"]["ann"]["records"][0].pop("text"), "damaged full state (owners.ann.records.0.text"),
    ("tiered", lambda s: s["owners"]["ann"]["summary"].update(pending=[999]), "damaged tiered state (KeyError: 999)"),
    ("letta", lambda s: s["owners"]["ann"]["agent"]["queue"]["messages"][0].update(role="boss"),
     "damaged letta state (owners.ann.agent.queue.messages.0.role"),
    ("stream", lambda s: s["owners"]["ann"]["memories"][0].update(created_at="yesterday"), "damaged stream state"),
    ("facts", lambda s: s.update(path="elsewhere.db"), "damaged facts state"),
])
def test_a_damaged_state_file_is_refused_in_one_line(tmp_path: Path, name: str, damage, problem: str) -> None:
    import json

    design = build(name, **({"batch": 50} if name == "tiered" else {}))
    written(design, turns(30))
    path = save_state(design, tmp_path / "state.json")
    data = json.loads(path.read_text())
    damage(data["state"])
    path.write_text(json.dumps(data))
    with pytest.raises(MemstreamError) as refused:
        load_state(build(name, **({"batch": 50} if name == "tiered" else {})), path)
    assert problem in str(refused.value) and "\n" not in str(refused.value)
