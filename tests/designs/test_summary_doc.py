"""The summary's store document, extended write by write, is the one made from scratch (records, covers and
skips growing, pending batches taken, the records' list replaced)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.designs.entries import Record
from memstream.designs.summary import Summary, runs, summary_doc, summary_of
from tests.helpers import hours

steps = st.lists(st.tuples(st.integers(1, 5), st.integers(0, 5), st.booleans(), st.booleans()), max_size=25)


def _from_scratch(summary: Summary, records: list[Record]) -> dict:
    position = {r.id: i for i, r in enumerate(records)}
    return {"text": summary.text, "calls": summary.calls, "covers": runs([position[i] for i in summary.covers]),
            "skipped": runs([position[i] for i in summary.skipped]),
            "pending": runs([position[r.id] for r in summary.pending])}


@given(steps=steps, start=st.integers(1, 1000))
def test_the_document_made_as_memory_grows_is_the_one_made_at_once(steps, start: int) -> None:
    records: list[Record] = []
    summary = Summary()
    for added, folded, skip, reload in steps:
        first = len(records)
        records.extend(Record(start + 3 * (first + i), "ana", f"turn {first + i}", hours(first + i), "user", "turn", "")
                       for i in range(added))
        summary.pending.extend(records[first:])
        chunk, summary.pending = summary.pending[:folded], summary.pending[folded:]
        (summary.skipped if skip else summary.covers).extend(r.id for r in chunk)
        summary.calls += bool(chunk)
        summary.text = f"summary {summary.calls}"
        doc = summary_doc(summary, records)
        assert doc == _from_scratch(summary, records)
        if reload:  # read back from the store: a new list of the same records, a new summary
            records = list(records)
            summary = summary_of(doc, records)
            assert summary_doc(summary, records) == doc
