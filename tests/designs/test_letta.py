"""The letta design: blocks, every tool and every counted error, heartbeats, the FIFO queue's pressure,
shared blocks, sleep-time consolidation, state, and the strict tool-call parser over generated junk."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.designs import Entry, LettaDesign, entry, make_design
from memstream.designs.letta import prompts as letta_prompts
from memstream.designs.letta.blocks import compile_blocks
from memstream.designs.letta.memory import AgentTranscript, View
from memstream.designs.letta.parse import ToolCall, parse_tool_call
from memstream.designs.letta.queue import Queue, pressure
from memstream.designs.letta.tools import ERRORS, execute
from memstream.errors import MemstreamError, StructuredOutputError
from memstream.models import Message, OfflineChatModel, count_tokens, run_direct
from memstream.models.parsing import tool_call_text

T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


def said(text: str, minute: int = 0, speaker: str = "Ann") -> Entry:
    return entry(text=f"{speaker}: {text}", at=T0 + timedelta(minutes=minute), source=speaker, session="S1")


def call(tool: str | None, heartbeat: bool = False, **arguments: object) -> str:
    return json.dumps({"tool": tool, "arguments": arguments, "request_heartbeat": heartbeat})


class Scripted(OfflineChatModel):
    """Answers the agent's steps from a script (then ``send_message``), keeping every prompt it was shown;
    the designs' other purposes (the summary) get the offline rules."""

    def __init__(self, answers: list[str], purpose: str = letta_prompts.STEP_PURPOSE) -> None:
        super().__init__()
        self.answers = list(answers)
        self.seen: list[list[Message]] = []
        self.register(purpose, self._next)

    def _next(self, messages: list[Message]) -> str:
        self.seen.append(messages)
        return self.answers.pop(0) if self.answers else call("send_message", message="ok")


def run(design: LettaDesign, answers: list[str], entries: list[Entry] | None = None,
        owner: str = "ann") -> Scripted:
    chat = Scripted(answers)
    design.write(owner, entries or [said("hello")], chat=chat)
    return chat


def block_value(design: LettaDesign, owner: str, label: str) -> str:
    return next(b.value for b in design.blocks_of(owner) if b.label == label)


def last_result(chat: Scripted) -> dict:
    """The packaged result the model was shown after its last executed call (read from its next prompt)."""
    shown = [m["content"] for m in chat.seen[-1] if m["content"].startswith(letta_prompts.TOOL_RESULT)]
    return json.loads(shown[-1].removeprefix(letta_prompts.TOOL_RESULT))


# -- blocks ---------------------------------------------------------------------------------------

def test_blocks_compile_in_letta_s_form_with_their_sizes() -> None:
    design = LettaDesign()
    design.share_block("project", ["ann"], "Ship v2 by May.", description="The team's project.", limit=300,
                       read_only=True)
    text = compile_blocks(design.blocks_of("ann"))
    assert text.startswith("<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:")
    assert ("<project>\n<description>\nThe team's project.\n</description>\n<metadata>\n- chars_current=15\n"
            "- chars_limit=300\n- read_only=true\n</metadata>\n<value>\nShip v2 by May.\n</value>\n</project>") in text
    assert [b.label for b in design.blocks_of("ann")] == ["persona", "human", "project"]
    assert text.endswith("</memory_blocks>")


def test_a_shared_block_edited_by_one_owner_is_seen_by_the_other_at_once() -> None:
    design = LettaDesign()
    design.share_block("team", ["ann", "bob"], "", description="What the team knows.")
    run(design, [call("core_memory_append", label="team", content="The launch moved to June.")], owner="ann")
    assert block_value(design, "bob", "team") == "The launch moved to June."
    context = design.context("bob", "When is the launch?", T0 + timedelta(days=1), 2000)
    assert "The launch moved to June." in context.text
    chat = run(design, [], [said("anything new?", 5, "Bob")], owner="bob")
    assert "The launch moved to June." in chat.seen[0][0]["content"]  # in bob's agent's core memory
    assert block_value(design, "ann", "human") == block_value(design, "bob", "human") == ""  # not shared


def test_bad_blocks_are_refused_in_one_line() -> None:
    design = LettaDesign()
    for label, value, limit, says in (("two words", "", 10, "bad block label"), ("<x>", "", 10, "bad block label"),
                                      ("notes", "", 0, "must be positive"), ("notes", "x" * 11, 10, "over its limit"),
                                      ("human", "", 10, "already has a block labelled 'human'")):
        with pytest.raises(MemstreamError, match=says) as refused:
            design.share_block(label, ["ann"], value, limit=limit)
        assert "\n" not in str(refused.value)
    assert [b.label for b in design.store.blocks.values()] == ["persona", "human"]  # nothing half made


# -- every tool -----------------------------------------------------------------------------------

def test_append_replace_insert_and_rethink_edit_the_block_and_say_so() -> None:
    design = LettaDesign()
    chat = run(design, [
        call("core_memory_append", True, label="human", content="Ann likes tea."),
        call("core_memory_append", True, label="human", content="Ann lives in Porto."),
        call("core_memory_replace", True, label="human", old_content="tea", new_content="coffee"),
        call("memory_insert", True, label="human", new_str="Ann is a nurse.", insert_line=0),
        call("memory_insert", True, label="human", new_str="Ann has a cat."),
    ])
    assert block_value(design, "ann", "human") == "Ann is a nurse.\nAnn likes coffee.\nAnn lives in Porto.\nAnn has a cat."
    assert last_result(chat)["status"] == "OK" and "edited (" in last_result(chat)["message"]
    run(design, [call("memory_rethink", label="human", new_memory="Ann: nurse in Porto.")])
    assert block_value(design, "ann", "human") == "Ann: nurse in Porto."
    run(design, [call("core_memory_replace", label="human", old_content=" in Porto", new_content="")])
    assert block_value(design, "ann", "human") == "Ann: nurse."
    counts = design.counters("ann")
    assert counts["block_edits"] == 7 and counts.get("tool_errors", 0) == 0


def test_archival_insert_and_search_pages_through_results() -> None:
    design = LettaDesign(LettaDesign.Config(page_size=2, heartbeat_limit=10))
    inserts = [call("archival_memory_insert", True, content=f"Ann's trip {i} to Lisbon.") for i in range(5)]
    chat = run(design, [*inserts, call("archival_memory_search", True, query="Lisbon trip"),
                        call("archival_memory_search", True, query="Lisbon trip", page=2),
                        call("archival_memory_search", True, query="zebra")])
    pages = [json.loads(m["content"].removeprefix(letta_prompts.TOOL_RESULT))["message"]
             for m in chat.seen[-1] if m["content"].startswith(letta_prompts.TOOL_RESULT)][-3:]
    assert pages[0].startswith("Showing 1-2 of 5 results (page 0 of 2):") and pages[0].count("\n- ") == 2
    assert pages[1].startswith("Showing 5-5 of 5 results (page 2 of 2):")
    assert pages[2] == "No results found."
    assert design.counters("ann")["archival_inserts"] == 5
    assert not design.search("ann", "Lisbon", archival=False)  # archival passages are not conversation


def test_conversation_search_finds_turns_out_of_view_a_page_at_a_time() -> None:
    design = LettaDesign(LettaDesign.Config(page_size=3))
    run(design, [], [said(f"I planted sunflowers, batch {i}.", i) for i in range(7)])
    chat = run(design, [call("conversation_search", True, query="sunflowers", page=1)], [said("anything?", 30)])
    message = last_result(chat)["message"]
    assert message.startswith("Showing 4-6 of ") and "(page 1 of 2):" in message and message.count("sunflowers") == 3


def test_send_message_is_counted_and_dropped_when_listening_and_kept_when_talking() -> None:
    listening = LettaDesign()
    run(listening, [call("send_message", message="Nice!")])
    assert listening.counters("ann")["replies_dropped"] == 1
    assert [r.text for r in listening.log.records("ann")] == ["Ann: hello"]
    talking = LettaDesign(LettaDesign.Config(listen=False))
    run(talking, [call("send_message", message="Nice!")])
    assert [r.text for r in talking.log.records("ann")] == ["Ann: hello", "Nice!"]
    assert talking.search("ann", "nice", archival=False)[0].source == "assistant"


# -- every error: a message the model sees, counted ----------------------------------------------

ERROR_CASES = [
    ("no_tool", call(None, content="x"), "names no tool"),
    ("unknown_tool", call("delete_everything"), "no tool named 'delete_everything'"),
    ("unknown_tool", call("memory_finish_edits"), "no tool named"),  # the sleep-time agent's, not the agent's
    ("missing_argument", call("core_memory_append", label="human"), "needs the argument 'content'"),
    ("bad_argument", call("core_memory_append", label="human", content="x", mood="happy"), "takes no argument"),
    ("bad_argument", call("core_memory_append", label="human", content=5), "content must be text"),
    ("bad_argument", call("conversation_search", query="x", page=-1), "page must be a whole number"),
    ("bad_argument", call("memory_insert", label="human", new_str="x", insert_line=9), "outside the block's lines"),
    ("bad_argument", call("archival_memory_insert", content="  "), "non-empty content"),
    ("no_block", call("core_memory_append", label="diary", content="x"), "no memory block labelled 'diary'"),
    ("replace_absent", call("core_memory_replace", label="persona", old_content="pirate", new_content="x"),
     "not found in block 'persona'"),
    ("over_limit", call("core_memory_append", label="human", content="x" * 201), "exceeds the 200 character limit"),
    ("read_only", call("memory_rethink", label="rules", new_memory="x"), "block 'rules' is read-only"),
]


@pytest.mark.parametrize(("kind", "answer", "says"), ERROR_CASES)
def test_each_failed_call_is_shown_to_the_model_and_counted(kind: str, answer: str, says: str) -> None:
    design = LettaDesign(LettaDesign.Config(block_limit=200))
    design.share_block("rules", ["ann"], "Be kind.", read_only=True)
    before = {b.label: b.value for b in design.blocks_of("ann")}
    chat = run(design, [answer])
    result = last_result(chat)  # a failed call gets a heartbeat: the model's next step shows the error
    assert result["status"] == "Failed" and says in result["message"]
    assert chat.seen[-1][-1]["content"] == letta_prompts.HEARTBEAT_FAILED
    counts = design.counters("ann")
    assert counts["tool_errors"] == 1 and counts[f"error:{kind}"] == 1 and kind in ERRORS
    assert {b.label: b.value for b in design.blocks_of("ann")} == before  # nothing written


def test_an_unreadable_answer_is_retried_then_ends_the_chain_counted() -> None:
    design = LettaDesign()
    chat = run(design, ["I think I will remember that.", "still not JSON"])
    assert design.counters("ann")["unreadable"] == 1
    assert "could not be read" in chat.seen[1][-1]["content"]  # the runner's retry showed the parse error
    assert chat.usage.by_purpose[letta_prompts.STEP_PURPOSE].retried == 1


# -- heartbeats -----------------------------------------------------------------------------------

def test_heartbeats_chain_steps_up_to_the_limit() -> None:
    design = LettaDesign(LettaDesign.Config(heartbeat_limit=3))
    forever = [call("archival_memory_insert", True, content=f"note {i}") for i in range(10)]
    chat = run(design, forever)
    counts = design.counters("ann")
    assert counts["steps"] == 3 and counts["heartbeats"] == 2 and counts["chain_limit"] == 1
    assert len(chat.seen) == 3 and chat.seen[1][-1]["content"] == letta_prompts.HEARTBEAT_OK
    two = LettaDesign(LettaDesign.Config(heartbeat_limit=3))
    run(two, [call("archival_memory_insert", True, content="a"), call("archival_memory_insert", content="b")])
    assert two.counters("ann")["steps"] == 2 and "chain_limit" not in two.counters("ann")


# -- the FIFO queue -------------------------------------------------------------------------------

def test_pressure_thresholds() -> None:
    assert pressure(69, 100, 0.7, False) is None
    assert pressure(70, 100, 0.7, False) == "warn"
    assert pressure(99, 100, 0.7, True) is None  # warned once
    assert pressure(100, 100, 0.7, True) == "evict"


def test_eviction_never_takes_the_turn_being_handled() -> None:
    queue = Queue()
    for i in range(3):
        queue.add("user", f"turn {i}", (i + 1,))
    queue.add("assistant", "{}")
    queue.add("tool", "result")
    queue.add("user", "turn being handled", (9,))
    queue.add("system", letta_prompts.WARNING)
    queue.warned = True
    assert [m.text for m in queue.evict(0.9)] == ["turn 0", "turn 1", "turn 2", "{}", "result"]
    assert [m.text for m in queue.messages] == ["turn being handled", letta_prompts.WARNING] and not queue.warned
    assert queue.evict(0.5) == [] and len(queue.messages) == 2  # nothing older left to evict


def test_a_read_makes_nothing_for_an_unknown_owner() -> None:
    design = LettaDesign()
    assert design.context("nobody", "q", T0, 500).blocks == [] and design.counters("nobody") == {}
    assert design.get_state().owners == {}


def filled_to(design: LettaDesign, target: int) -> None:
    """Messages in ann's queue until the agent's prompt is ``target`` tokens (within a word)."""
    transcript = AgentTranscript(View(design, "ann", T0, ()))
    i = 0
    while transcript.tokens() < target:
        left = target - transcript.tokens()
        design.owner_state("ann").queue.add("user", " ".join(["word"] * min(left, 20)), ())
        i += 1


def prepared(design: LettaDesign) -> bool:
    return run_direct(AgentTranscript(View(design, "ann", T0, ())).prepare(), OfflineChatModel())


def test_the_warning_comes_at_70_percent_and_eviction_at_the_window() -> None:
    base = AgentTranscript(View(LettaDesign(), "ann", T0, ())).tokens()
    window = 2 * base
    design = LettaDesign(LettaDesign.Config(window_tokens=window))
    filled_to(design, math.ceil(0.7 * window) - 1)
    assert prepared(design) and design.counters("ann").get("warnings", 0) == 0
    design.owner_state("ann").queue.add("user", "word", ())
    assert prepared(design) and design.counters("ann")["warnings"] == 1
    assert design.owner_state("ann").queue.messages[-1].text == letta_prompts.WARNING
    assert prepared(design) and design.counters("ann")["warnings"] == 1  # once
    filled_to(design, window - 1)
    assert prepared(design) and design.counters("ann").get("evictions", 0) == 0
    n = len(design.owner_state("ann").queue.messages)
    design.owner_state("ann").queue.add("user", "word word", ())
    assert prepared(design)
    counts = design.counters("ann")
    assert counts["evictions"] == 1 and counts["evicted_messages"] == round((n + 1) * 0.5)


def test_evicted_turns_go_to_the_summary_and_stay_searchable() -> None:
    design = LettaDesign(LettaDesign.Config(window_tokens=1400))
    entries = [said(f"I adopted puppy number {i} from the shelter on Elm street.", i) for i in range(40)]
    run(design, [], entries)
    state = design.owner_state("ann")
    counts = design.counters("ann")
    assert counts["evictions"] >= 1 and counts["warnings"] >= 1 and counts["summaries"] >= 1
    first = design.log.records("ann")[0]
    assert first.id in state.summary.covers                   # summarised
    assert all(first.id not in m.ids for m in state.queue.messages)  # out of view
    assert first.id in {r.id for r in design.search("ann", "puppy number 0 shelter", archival=False)}  # recall
    assert AgentTranscript(View(design, "ann", T0, ())).tokens() < 1400
    assert "have been hidden from view" in AgentTranscript(View(design, "ann", T0, ())).system()["content"]


# -- sleep-time consolidation, the design interface ----------------------------------------------

def test_sleeptime_moves_the_oldest_lines_of_a_full_block_to_archival() -> None:
    design = LettaDesign(LettaDesign.Config(block_limit=400))
    entries = [said(f"I went to pottery class number {i}.", i) for i in range(12)]
    chat = OfflineChatModel()
    design.write("ann", entries, chat=chat)
    full = block_value(design, "ann", "human")
    assert len(full) > 0.8 * 400
    made = design.consolidate("ann", T0 + timedelta(hours=1), chat=chat)
    counts = design.counters("ann")
    assert made == 2 and counts["sleeptime_runs"] == 1 and counts["sleeptime_steps"] == 2
    kept = block_value(design, "ann", "human")
    assert len(kept) <= 200 and full.endswith(kept)
    moved = design.search("ann", "pottery class number 0", archival=True)
    assert moved and "number 0." in moved[0].text
    assert design.consolidate("ann", T0 + timedelta(hours=2), chat=chat) == 0  # nothing new since


def test_context_compiles_core_summary_queue_and_search_under_the_budget() -> None:
    design = make_design("letta", window_tokens=2000)
    ids = design.write("ann", [said(f"I painted a sunset, canvas {i}.", i) for i in range(40)],
                       chat=OfflineChatModel())
    for budget in (50, 300, 2000):
        c = design.context("ann", "What did Ann paint on canvas 3?", T0 + timedelta(days=1), budget)
        assert c.tokens <= budget
        assert c.tokens == sum(count_tokens(b.rendered) for b in c.blocks)
        assert c.ids <= set(ids) | set(design.archival)
    c = design.context("ann", "What did Ann paint on canvas 3?", T0 + timedelta(days=1), 2000)
    assert [b.tier for b in c.blocks] == ["core", "summary", "retrieved", "window"]
    assert "canvas 3." in c.text


def test_a_small_budget_keeps_every_block_s_newest_lines() -> None:
    design = LettaDesign()
    run(design, [call("memory_rethink", label="human", new_memory="\n".join(f"fact {i}" for i in range(200)))])
    c = design.context("ann", "q", T0, 800)
    assert "fact 199" in c.text and "fact 0\n" not in c.text and c.cut > 0 and c.tokens <= 800


def test_state_round_trips_through_json_with_shared_blocks_still_shared() -> None:
    design = LettaDesign(LettaDesign.Config(window_tokens=1400))
    design.share_block("team", ["ann", "bob"], "")
    chat = OfflineChatModel()
    design.write("ann", [said(f"I baked {i} loaves of bread.", i) for i in range(30)], chat=chat)
    design.write("bob", [said("I like chess.", 50, "Bob")], chat=chat)
    design.consolidate("ann", T0 + timedelta(hours=1), chat=chat)
    again = LettaDesign(design.config)
    again.set_state(LettaDesign.State.model_validate_json(design.get_state().model_dump_json()))  # through its JSON
    assert again.get_state() == design.get_state()
    for owner in ("ann", "bob"):
        a = design.context(owner, "bread loaves", T0 + timedelta(days=1), 1500)
        b = again.context(owner, "bread loaves", T0 + timedelta(days=1), 1500)
        assert (a.text, a.ids) == (b.text, b.ids)
    assert again.counters() == design.counters()
    run(again, [call("core_memory_append", label="team", content="shared still")], owner="ann")
    assert block_value(again, "bob", "team") == "shared still"


# -- the parser over generated answers -----------------------------------------------------------

JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=3), max_leaves=8)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(junk=st.text(max_size=200) | JSON_VALUES.map(json.dumps))
def test_junk_is_either_a_tool_call_or_one_parse_error_and_never_crashes_the_executor(junk: str) -> None:
    try:
        parsed = parse_tool_call(junk)
    except StructuredOutputError as e:
        assert "\n" not in str(e)
        return
    assert isinstance(parsed, ToolCall) and isinstance(parsed.arguments, dict)
    design = LettaDesign()
    result = execute(parsed, View(design, "ann", T0, ()))
    assert result.ok or result.error in ERRORS


TOOL_NAMES = st.sampled_from(["core_memory_append", "core_memory_replace", "memory_insert", "memory_rethink",
                              "archival_memory_insert", "archival_memory_search", "conversation_search",
                              "send_message", "memory_finish_edits", "nope", ""])
ARGUMENTS = st.dictionaries(st.sampled_from(["label", "content", "old_content", "new_content", "new_str",
                                             "insert_line", "new_memory", "query", "page", "message", "x"]),
                            st.text(max_size=30) | st.integers(-3, 5) | st.sampled_from(["human", "persona"]),
                            max_size=4)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(tool=TOOL_NAMES, arguments=ARGUMENTS, heartbeat=st.booleans(), fence=st.booleans())
def test_generated_calls_parse_back_and_execute_or_fail_with_a_counted_kind(tool: str, arguments: dict,
                                                                            heartbeat: bool, fence: bool) -> None:
    text = call(tool or None, heartbeat, **arguments)
    parsed = parse_tool_call(f"```json\n{text}\n```" if fence else text)
    assert parsed == ToolCall(tool or None, arguments, heartbeat)
    design = LettaDesign(LettaDesign.Config(block_limit=100))
    result = execute(parsed, View(design, "ann", T0, ()))
    assert result.ok or result.error in ERRORS
    assert all(len(b.value) <= b.limit for b in design.blocks_of("ann"))


@settings(max_examples=200, deadline=None)
@given(name=st.none() | st.integers() | st.text(max_size=20), arguments=st.text(max_size=60) | JSON_VALUES)
def test_a_tools_api_call_becomes_text_the_strict_parser_reads_or_refuses(name: object, arguments: object) -> None:
    text = tool_call_text(name, arguments)
    assert isinstance(json.loads(text), dict)
    try:
        parsed = parse_tool_call(text)
    except StructuredOutputError:
        return
    assert parsed.tool == (name.strip() or None if isinstance(name, str) else None)


@pytest.mark.parametrize("answer", ['{"tool": "x"} {"tool": "y"}', '[{"tool": "x"}]', '{"name": "x"}',
                                    '{"tool": 3}', '{"tool": "x", "arguments": "label=human"}',
                                    '{"tool": "x", "request_heartbeat": "yes"}', "Sure! I'll save that."])
def test_the_parser_is_strict(answer: str) -> None:
    with pytest.raises(StructuredOutputError):
        parse_tool_call(answer)


# -- the endpoint's tools API ---------------------------------------------------------------------

def tool_call_body(name: str, arguments: str) -> dict:
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [
                    {"id": "t1", "type": "function", "function": {"name": name, "arguments": arguments}}]}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}}


@pytest.mark.slow
def test_through_a_tools_api_the_call_comes_back_as_a_tool_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstream.models.openai_backend import OpenAIChat
    from memstream.testing import ScriptedServer

    monkeypatch.delenv("MEMSTREAM_TOOLS", raising=False)
    arguments = json.dumps({"label": "human", "content": "Ann is a nurse.", "request_heartbeat": True})
    script = [(200, tool_call_body("core_memory_append", arguments)), (200, tool_call_body("send_message", "{bad"))]
    with ScriptedServer(script) as server:
        design = LettaDesign()
        design.write("ann", [said("I am a nurse.")], chat=OpenAIChat("m", base_url=server.url, api_key="k"))
        sent = server.requests[0]
    assert block_value(design, "ann", "human") == "Ann is a nurse."
    assert {t["function"]["name"] for t in sent["tools"]} == set(letta_prompts.AGENT_TOOLS)
    assert "response_format" not in sent
    counts = design.counters("ann")  # the heartbeat was lifted from the arguments; the broken one retried, lost
    assert counts["heartbeats"] == 1 and counts["unreadable"] == 1


def test_a_server_that_refuses_tools_is_asked_again_without(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstream.models.openai_backend import OpenAIChat
    from memstream.testing import ScriptedServer

    monkeypatch.delenv("MEMSTREAM_TOOLS", raising=False)
    script = [(400, "tools are not supported by this model"), (200, call("send_message", message="ok"))]
    with ScriptedServer(script) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k")
        LettaDesign().write("ann", [said("hello")], chat=chat)
    assert "tools" in server.requests[0] and "tools" not in server.requests[1]
    assert chat.tools_mode == "prompt" and chat.usage.by_purpose[letta_prompts.STEP_PURPOSE].failed == 0


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(tools=st.lists(st.tuples(TOOL_NAMES, ARGUMENTS, st.booleans()), max_size=8), turns=st.integers(1, 4))
def test_state_round_trips_after_any_sequence_of_calls(tools: list, turns: int) -> None:
    design = LettaDesign(LettaDesign.Config(block_limit=100, window_tokens=900))
    design.share_block("team", ["ann", "bob"], "")
    run(design, [call(t or None, h, **a) for t, a, h in tools], [said(f"I said {i}.", i) for i in range(turns)])
    again = LettaDesign(design.config)
    again.set_state(LettaDesign.State.model_validate_json(design.get_state().model_dump_json()))  # through its JSON
    assert again.get_state() == design.get_state()
    a = design.context("ann", "what did I say", T0 + timedelta(days=1), 700)
    b = again.context("ann", "what did I say", T0 + timedelta(days=1), 700)
    assert (a.text, a.ids, a.tokens) == (b.text, b.ids, b.tokens) and a.tokens <= 700
