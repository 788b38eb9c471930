"""The LangGraph store adapter: a scripted agent step (no model) in a StateGraph compiled with ``store=`` writes
and reads through :class:`~memstream.integrations.MemstreamStore`, on each design a store keeps."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TypedDict

import pytest

pytest.importorskip("langgraph.store.base", reason="the LangGraph tests need memstream[langgraph]")

from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

from memstream.designs import open_design
from memstream.errors import MemstreamError
from memstream.integrations import MemstreamStore
from memstream.models import make_embedder

ROOT = Path(__file__).resolve().parents[2]
EMBEDDER = make_embedder("hash")


class State(TypedDict):
    user: str
    said: str
    recalled: list[str]


def remember_then_recall(state: State, *, store: BaseStore) -> dict[str, list[str]]:
    """An agent step with no model: store what the user said, then read back what is known of them."""
    ns = ("users", state["user"])
    store.put(ns, f"said-{len(store.search(ns, limit=100))}", {"text": state["said"]})
    return {"recalled": [i.value["text"] for i in store.search(ns, query=state["said"], limit=5)]}


def graph(store: BaseStore):
    g = StateGraph(State)
    g.add_node("step", remember_then_recall)
    g.add_edge(START, "step")
    g.add_edge("step", END)
    return g.compile(store=store)


@pytest.mark.parametrize("design", ["vector", "full"])
def test_a_scripted_agent_step_writes_and_reads_through_the_store(design: str, tmp_path: Path) -> None:
    with open_design(design, store=tmp_path / "m.db", embedder=EMBEDDER) as bound:
        agent = graph(MemstreamStore(bound))
        agent.invoke({"user": "ana", "said": "I moved to Lisbon", "recalled": []})
        out = agent.invoke({"user": "ana", "said": "my sister Rita lives in Porto", "recalled": []})
        other = agent.invoke({"user": "ben", "said": "I like chess", "recalled": []})
        assert set(out["recalled"]) == {"I moved to Lisbon", "my sister Rita lives in Porto"}
        assert other["recalled"] == ["I like chess"]  # one namespace, one owner: ana's items are not ben's
        assert bound.owners() == ["users/ana", "users/ben"]
    with open_design(design, store=tmp_path / "m.db", embedder=EMBEDDER) as bound:  # committed, read again
        store = MemstreamStore(bound)
        assert store.get(("users", "ana"), "said-0").value == {"text": "I moved to Lisbon"}
        assert store.list_namespaces(prefix=("users",)) == [("users", "ana"), ("users", "ben")]
        assert store.list_namespaces(max_depth=1) == [("users",)]
        assert asyncio.run(store.aget(("users", "ben"), "said-0")).value == {"text": "I like chess"}


def test_put_get_search_delete_and_their_refusals(tmp_path: Path) -> None:
    with open_design("vector", store=tmp_path / "m.db", embedder=EMBEDDER) as bound:
        store = MemstreamStore(bound)
        ns = ("team", "notes")
        store.put(ns, "a", {"text": "deploy on Fridays is banned", "priority": 3})
        store.put(ns, "b", {"text": "the staging database is Postgres", "priority": 1})
        store.put(ns, "a", {"priority": 3, "text": "deploy on Fridays is banned"})  # the same value: a no-op
        assert len(bound.records("team/notes")) == 2
        hits = store.search(ns, query="which database does staging use?")
        assert [h.key for h in hits][0] == "b" and all(h.score is not None for h in hits)
        assert [h.key for h in store.search(("team",), filter={"priority": {"$gte": 2}})] == ["a"]
        assert store.get(ns, "missing") is None
        store.put(ns, "a", {"text": "deploys are fine", "priority": 3})  # another value: the record updated
        assert len(bound.records("team/notes")) == 2 and store.get(ns, "a").value["text"] == "deploys are fine"
        assert [h.key for h in store.search(ns, query="deploys are fine")][0] == "a"
        store.delete(ns, "a")
        assert store.get(ns, "a") is None and [h.key for h in store.search(ns, query="deploy")] == ["b"]
        assert "Fridays" not in " ".join(r.text for r in bound.records("team/notes"))
        store.put(ns, "a", {"text": "deploy on Fridays is banned again"})  # a deleted key put again: a new record
        assert store.get(ns, "a").value == {"text": "deploy on Fridays is banned again"}
        store.delete(ns, "missing")  # nothing to delete: a no-op, as LangGraph's stores do
        with pytest.raises(InvalidNamespaceError):
            store.put(("a/b",), "k", {"text": "x"})
        assert store.forget(ns) > 0 and store.get(ns, "a") is None and store.search(ns) == []


def test_a_design_that_builds_on_its_records_refuses_to_change_an_item_with_its_reason(tmp_path: Path) -> None:
    with open_design("tiered", store=tmp_path / "m.db", embedder=EMBEDDER) as bound:
        store = MemstreamStore(bound)
        ns = ("team", "notes")
        store.put(ns, "a", {"text": "deploy on Fridays is banned"})
        with pytest.raises(MemstreamError, match="cannot give the item 'a' alone another value: its session"):
            store.put(ns, "a", {"text": "deploys are fine"})
        with pytest.raises(MemstreamError, match=r"cannot delete the item 'a' alone: .* forget the namespace"):
            store.delete(ns, "a")
        assert store.get(ns, "a").value == {"text": "deploy on Fridays is banned"}  # nothing changed


@settings(max_examples=12, deadline=None)
@given(value=st.dictionaries(st.text(min_size=1, max_size=8), st.one_of(
    st.text(max_size=30), st.integers(), st.booleans(), st.none(), st.lists(st.integers(), max_size=3)),
    min_size=1, max_size=4).filter(lambda v: "\x00" not in repr(v)),
    key=st.text(min_size=1, max_size=20).filter(str.strip))
def test_a_value_comes_back_exactly_as_it_was_put(tmp_path_factory, value, key) -> None:
    """Any key a store can hold gives back what was put; a key it cannot (a NUL, a lone surrogate) is refused in
    one line naming the key, and nothing is written."""
    with open_design("full", store=tmp_path_factory.mktemp("s") / "m.db", embedder=EMBEDDER) as bound:
        store = MemstreamStore(bound)
        if "\x00" in key or any("\ud800" <= c <= "\udfff" for c in key):
            with pytest.raises(MemstreamError, match="bad entry: id"):
                store.put(("p",), key, value)
            assert store.search(("p",)) == []
            return
        store.put(("p",), key, value)
        assert store.get(("p",), key).value == value


def test_the_docs_langgraph_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = (ROOT / "docs" / "service.md").read_text(encoding="utf-8")
    section = doc[doc.index("## LangGraph"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/service.md", "exec"), {})
