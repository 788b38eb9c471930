"""The facts design: extraction and classification stages, their parsers and offline rules, the context."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.designs import DESIGNS, FactsDesign, design_names, entry, make_design
from memstream.designs.offline import answer_classify, answer_extract
from memstream.designs.parse import ExtractedFact, parse_extracted, verdict_parser
from memstream.designs.prompts import classify_messages, extract_messages
from memstream.errors import MemstreamError, StructuredOutputError
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.testing import ScriptedChat

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def design(**config) -> FactsDesign:
    return make_design("facts", embedder=HashEmbedder(64), **config)


def said(text: str, days: float, session: str = "s1"):
    return entry(text=text, at=T0 + timedelta(days=days), session=session)


def test_it_is_a_registered_design() -> None:
    assert "facts" in DESIGNS and "facts" in design_names("all")


def test_a_correction_replaces_the_fact_and_history_questions_see_both() -> None:
    d, chat = design(), OfflineChatModel()
    d.write("u", [said("user: My project deadline is next Thursday, the 14th.\nassistant: Noted.", 0)], chat=chat)
    d.write("u", [said("user: Change of plan: my project deadline is now Friday the 15th.", 3, "s2")], chat=chat)
    now = T0 + timedelta(days=4)
    current = d.context("u", "When is my project deadline?", now, 400).text
    assert "Friday the 15th" in current and "Thursday" not in current
    past = d.context("u", "When was my project deadline originally?", now, 400).text
    assert "Thursday, the 14th. (held until 05 March 2026; since changed)" in past and "Friday" in past
    assert set(chat.usage.by_purpose) == {"facts-extract", "facts-classify"}


def test_a_retried_write_returns_the_same_ids_and_writes_nothing_new() -> None:
    d = design()
    turns = [said("user: I keep 3 kayaks in the boathouse by the lake.", 0), said("user: I love sailing at dawn.", 0.1)]
    first = d.write("u", turns, chat=OfflineChatModel())
    facts = d.store.db.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
    assert d.write("u", turns, chat=OfflineChatModel()) == first
    assert d.store.db.execute("SELECT COUNT(*) FROM facts").fetchone()[0] == facts > 0


def test_the_context_names_the_turns_its_facts_came_from_and_keeps_to_the_budget() -> None:
    d = design()
    ids = d.write("u", [said(f"user: I planted {n} tulips in the north garden bed.", n) for n in range(1, 30)],
                  chat=OfflineChatModel())
    for budget in (40, 200, 2000):
        c = d.context("u", "How many tulips did I plant?", T0 + timedelta(days=40), budget)
        assert c.tokens <= budget and c.ids <= set(ids)


def test_an_unusable_model_answer_loses_no_turn() -> None:
    chat = ScriptedChat({"facts-extract": lambda m: "I cannot help with that."})
    d = design()
    ids = d.write("u", [said("user: My sister Maya lives in Porto.", 0)], chat=chat)
    assert len(ids) == 1 and d.store.db.execute("SELECT text FROM sources").fetchone()[0].endswith("Porto.")
    assert d.store.db.execute("SELECT COUNT(*) FROM facts").fetchone()[0] == 0


def test_a_classifier_naming_a_fact_it_was_not_shown_is_retried_then_taken_as_new() -> None:
    chat = ScriptedChat({"facts-classify": lambda m: '{"action": "update", "target": 99}'})
    d = design()
    d.write("u", [said("user: My office is in room 12 on the third floor.", 0)], chat=chat)
    d.write("u", [said("user: My office moved to room 40 on the third floor.", 1)], chat=chat)
    rows = d.store.db.execute("SELECT is_latest FROM facts").fetchall()
    assert rows == [(1,), (1,)]  # nothing superseded on a bad number


def test_state_round_trips_and_another_embedder_is_refused() -> None:
    d = design()
    d.write("u", [said("user: I drive a red 2015 Volvo estate.", 0)], chat=OfflineChatModel())
    state = d.State.model_validate_json(d.get_state().model_dump_json())  # through its JSON
    again = design()
    again.set_state(state)
    assert "Volvo" in again.context("u", "what car do I drive", T0 + timedelta(days=1), 300).text
    other = make_design("facts", embedder=HashEmbedder(32))
    with pytest.raises(MemstreamError, match="vectors of 'hash-64'"):
        other.set_state(state)


def test_consolidation_sweeps_what_has_expired() -> None:
    d = design()
    d.write("u", [said("user: I am working from the Lisbon office this week.", 0)], chat=OfflineChatModel())
    assert "Lisbon" in d.context("u", "where am I working", T0 + timedelta(days=2), 300).text
    assert d.consolidate("u", T0 + timedelta(days=8), chat=OfflineChatModel()) == 1
    assert "Lisbon" not in d.context("u", "where am I working", T0 + timedelta(days=9), 300).text


# -- prompts, parsers, offline rules -----------------------------------------------------------------


def test_the_offline_extraction_keeps_statements_not_questions_or_the_assistant() -> None:
    prompt = extract_messages("user: Hi! Do you know a good café? I adopted a beagle named Rufus last week.\n"
                              "assistant: I recommend the Blue Door café on Main Street.", "user", [], [],
                              "Monday 02 March 2026", 8)
    facts = parse_extracted(answer_extract(prompt))
    assert [f.text for f in facts] == ["I adopted a beagle named Rufus last week."]
    assert facts[0].kind == "episode" and "Rufus" in facts[0].entities


@pytest.mark.parametrize(("known", "new", "action"), [
    ("My project deadline is Thursday the 14th.", "My project deadline is now Friday the 15th.", "update"),
    ("I have 3 bikes in the garage.", "I have 3 bikes in the garage.", "duplicate"),
    ("I have 3 bikes in the garage.", "I have 3 bikes in the garage, all red.", "extend"),
    ("I have 3 bikes in the garage.", "My mother visited Rome in June.", "new"),
])
def test_the_offline_classifier(known: str, new: str, action: str) -> None:
    verdict = verdict_parser(1)(answer_classify(classify_messages(new, [known])))
    assert verdict.action == action and (verdict.target == 1) == (action != "new")


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_extraction_answer_parses_to_facts_or_raises_one_error(answer: str) -> None:
    try:
        facts = parse_extracted(answer)
    except StructuredOutputError as e:
        assert "\n" not in str(e)
    else:
        assert all(isinstance(f, ExtractedFact) and f.text for f in facts)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=80), st.builds(lambda a, t: json.dumps({"action": a, "target": t}),
                                                 st.sampled_from(["new", "update", "extend", "duplicate", "x"]),
                                                 st.one_of(st.none(), st.integers(-3, 8)))))
def test_a_verdict_names_a_listed_fact_or_is_refused(answer: str) -> None:
    try:
        v = verdict_parser(3)(answer)
    except (StructuredOutputError, ValueError):
        return
    assert v.action == "new" or 1 <= v.target <= 3


def test_bad_extracted_fields_are_refused() -> None:
    for bad, field in (('{"facts": [{"text": "x", "kind": "rumour"}]}', "kind"),
                       ('{"facts": [{"text": "x", "event_at": "May"}]}', "event_at"),
                       ('{"facts": [{"text": "", "salience": 3}]}', "text"), ("nothing to say", "answer")):
        with pytest.raises(StructuredOutputError, match=field):
            parse_extracted(bad)
    assert parse_extracted('{"facts": []}') == []


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_an_extracted_text_with_any_characters_is_cleaned_or_skipped_never_a_crash(text: str) -> None:
    answer = json.dumps({"facts": [{"text": text, "kind": "fact"}, {"text": "I own a red canoe.", "kind": "fact"}]})
    chat = ScriptedChat({"facts-extract": lambda m: answer})
    d = design()
    d.write("u", [said("user: anything", 0)], chat=chat)
    stored = [t for (t,) in d.store.db.execute("SELECT text FROM facts")]
    assert "I own a red canoe." in stored and all(t == " ".join(t.split()) and t.isprintable() for t in stored)


def test_writing_no_entries_asks_nothing() -> None:
    chat = OfflineChatModel()
    assert design().write("u", [], chat=chat) == [] and not chat.usage.by_purpose


# -- a statement that restricts or replaces an earlier one updates it (the user changed their mind) -------

def current_texts(d: FactsDesign, owner: str) -> list[str]:
    """The owner's current facts, oldest first (from the store: what the context's current view draws on)."""
    ids = [r[0] for r in d.store.db.execute("SELECT id FROM facts WHERE owner=? ORDER BY id", (owner,))]
    return [f.text for f in d.store.facts(ids) if f.current]


def test_the_readmes_changed_mind_example_keeps_friday_only() -> None:
    d, chat = design(), OfflineChatModel()
    t1 = T0 + timedelta(days=1)
    d.write("ann", [entry(text="user: my deadline is Thursday the 14th", at=T0)], chat=chat)
    d.write("ann", [entry(text="user: my deadline moved to Friday the 15th", at=t1)], chat=chat)
    now = t1 + timedelta(hours=1)
    assert current_texts(d, "ann") == ["my deadline moved to Friday the 15th"]
    current = d.context("ann", "When is my deadline?", now, 2000).text
    assert "Friday the 15th" in current and "Thursday" not in current
    both = d.context("ann", "When was my deadline originally?", now, 2000).text
    assert "Thursday the 14th (held until" in both and "Friday the 15th" in both


DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SUBJECTS = ("deadline", "dentist appointment", "team meeting", "piano lesson", "flight home", "yoga class",
            "book club", "haircut")
#: (the earlier statement, the one that restricts or replaces it); {s} the subject, {a} the old day, {b} the new.
CHANGES = (("my {s} is on {a}", "my {s} moved to {b}"),
           ("my {s} is on {a}", "my {s} is on {b} instead"),
           ("my {s} is on {a}", "my {s} changed to {b}"),
           ("my {s} is on {a}", "my {s} got pushed to {b}"),
           ("my {s} is on {a}", "my {s} is no longer on {a}, it is on {b}"),
           ("my {s} is on {a}", "my {s} is not on {a} anymore but on {b}"),
           ("my {s} is on {a} and {b}", "my {s} is on {b} only"),
           ("my {s} is on {a} and {b}", "my {s} is only on {b} now"))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SUBJECTS), st.lists(st.sampled_from(DAYS), min_size=2, max_size=2, unique=True),
       st.sampled_from(CHANGES), st.booleans())
def test_a_restriction_or_replacement_updates_the_fact_it_restricts(subject: str, days: list[str],
                                                                    change: tuple[str, str], capital: bool) -> None:
    a, b = days
    before, after = (c.format(s=subject, a=a, b=b) for c in change)
    if capital:
        before, after = before[0].upper() + before[1:], after[0].upper() + after[1:]
    d, chat = design(), OfflineChatModel()
    d.write("u", [said(f"user: {before}", 0)], chat=chat)
    d.write("u", [said(f"user: {after}", 1, "s2")], chat=chat)
    assert current_texts(d, "u") == [after]  # one current fact, the later one: not two that contradict


def test_an_unrelated_only_is_not_an_update() -> None:
    d, chat = design(), OfflineChatModel()
    d.write("u", [said("user: my sister lives in Lisbon with her two cats", 0)], chat=chat)
    d.write("u", [said("user: I only drink coffee on Monday mornings at the office", 1, "s2")], chat=chat)
    assert len(current_texts(d, "u")) == 2
