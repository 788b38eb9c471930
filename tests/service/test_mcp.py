"""The MCP tools through the SDK's own client: ``memstream serve --mcp stdio`` started as a subprocess
(``mcp.client.stdio``), its tools listed and called, and a token for one owner kept from the others."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP tests need memstream[mcp]")

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memstream.service.mcp import bearer
from tests.service.conftest import ADMIN, ANA, TOKENS

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"add", "search", "list", "get", "update", "delete", "forget"}


def server(store: Path, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memstream.cli", "serve", "--store", str(store), "--mcp", "stdio",
                                      "--embedder", "hash", *extra],
        env={"PYTHONPATH": str(ROOT), **(env or {})}, cwd=str(ROOT))


async def session_calls(params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]]) -> tuple[
        set[str], list[Any]]:
    """The tools the server lists and each call's result, in one session."""
    with anyio.fail_after(30):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            return names, [await session.call_tool(name, args) for name, args in calls]


def run(params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    return anyio.run(session_calls, params, calls)


def text(result: Any) -> str:
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@pytest.mark.slow
def test_add_search_forget_through_the_sdk_client(tmp_path: Path) -> None:
    memories = [{"text": "Ana moved to Lisbon in May", "at": "2026-05-01T10:00:00+00:00"},
                {"text": "Ana's sister is called Rita"}]
    names, (added, found, listed, got, updated, deleted, gone, changed, forgot, after) = run(server(tmp_path / "m.db"), [
        ("add", {"owner": "ana", "memories": memories}),
        ("search", {"owner": "ana", "query": "where does Ana live?", "budget": 200}),
        ("list", {"owner": "ana", "size": 1}),
        ("get", {"owner": "ana", "record_id": 1}),
        ("update", {"owner": "ana", "record_id": 2, "text": "Ana's sister is called Rosa"}),
        ("delete", {"owner": "ana", "record_id": 1}),
        ("get", {"owner": "ana", "record_id": 1}),
        ("search", {"owner": "ana", "query": "where does Ana live, and her sister?", "budget": 200}),
        ("forget", {"owner": "ana"}),
        ("search", {"owner": "ana", "query": "Lisbon"}),
    ])
    assert names == TOOLS
    assert not added.is_error and len(added.structured_content["ids"]) == 2
    context = found.structured_content
    assert "Lisbon" in context["text"] and context["tokens"] <= 200
    assert {i for b in context["blocks"] for i in b["ids"]} <= set(added.structured_content["ids"])  # provenance
    assert listed.structured_content["total"] == 2 and len(listed.structured_content["records"]) == 1
    assert added.structured_content["ids"][0] == 1, text(got)  # a fresh store counts record ids from 1
    assert got.structured_content["text"] == "Ana moved to Lisbon in May"
    assert updated.structured_content == {**updated.structured_content, "id": 2, "text": "Ana's sister is called Rosa"}
    assert not deleted.is_error and "removed" in text(deleted)  # the vector design's memory is its records
    assert gone.is_error and "404" in text(gone) and "no record 1" in text(gone)
    assert "Lisbon" not in changed.structured_content["text"] and "Rosa" in changed.structured_content["text"]
    assert not forgot.is_error and sum(forgot.structured_content["removed"].values()) > 0
    assert after.is_error and "no memory for the owner 'ana'" in text(after)  # the forgotten text is gone


@pytest.mark.slow
def test_a_token_for_one_owner_cannot_touch_another_through_the_tools(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(TOKENS)
    store = tmp_path / "m.db"
    _, (seeded,) = run(server(store, "--tokens", str(tokens), env={"MEMSTREAM_TOKEN": ADMIN}),
                       [("add", {"owner": "ben", "memories": [{"text": "Ben's PIN is 4812"}]})])
    assert not seeded.is_error
    _, results = run(server(store, "--tokens", str(tokens), "--token", ANA), [
        ("search", {"owner": "ben", "query": "PIN"}),
        ("list", {"owner": "ben"}),
        ("get", {"owner": "ben", "record_id": 1}),
        ("forget", {"owner": "ben"}),
        ("add", {"owner": "ben", "memories": [{"text": "planted"}]}),
        ("search", {"owner": "nobody", "query": "PIN"}),
    ])
    *reads, forgot, write, unknown = results
    assert all(r.is_error for r in results)
    assert all("4812" not in text(r) for r in results)
    said = {text(r).split(": ", 1)[1] for r in [*reads, forgot]}  # past "Error executing tool NAME: "
    assert said == {text(unknown).split(": ", 1)[1].replace("nobody", "ben")}  # nothing learnt of ben
    assert "may not write for the owner 'ben'" in text(write)
    _, (still,) = run(server(store, "--tokens", str(tokens), "--token", ADMIN),
                      [("list", {"owner": "ben"})])
    assert [r["text"] for r in still.structured_content["records"]] == ["Ben's PIN is 4812"]


def test_a_stdio_server_with_tokens_but_none_given_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    from memstream.cli import main

    tokens = tmp_path / "tokens.txt"
    tokens.write_text(TOKENS)
    assert main(["serve", "--store", str(tmp_path / "m.db"), "--mcp", "stdio", "--tokens", str(tokens),
                 "--token", "not-a-known-token-at-all"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "memstream: error: the token given (--token or MEMSTREAM_TOKEN) is not in the --tokens file; "
        "use one of its tokens"]
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize(("header", "token"), [
    (None, None), ("", None), ("Bearer", None), ("Bearer   ", None), ("Basic abc", None),
    ("Bearer abc", "abc"), ("bearer  abc ", "abc")])
def test_bearer_reads_only_a_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer(header) == token


@pytest.mark.slow
def test_streamable_http_takes_each_request_s_bearer_token(tmp_path: Path) -> None:
    import socket
    import subprocess
    import time

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.service.conftest import BEN

    tokens = tmp_path / "tokens.txt"
    tokens.write_text(TOKENS)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen([sys.executable, "-m", "memstream.cli", "serve", "--store", str(tmp_path / "m.db"),
                             "--mcp", "http", "--port", str(port), "--embedder", "hash", "--tokens", str(tokens)],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))

    async def calls(token: str, todo: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http, \
                    streamable_http_client(url, http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return [await session.call_tool(name, args) for name, args in todo]

    try:
        for _ in range(100):
            try:
                refused = httpx2.post(url, json={})
                break
            except httpx2.HTTPError:
                time.sleep(0.1)
        assert refused.status_code == 401 and "Authorization: Bearer" in refused.json()["detail"]
        (added,) = anyio.run(calls, ANA, [("add", {"owner": "ana", "memories": [{"text": "Ana lives in Lisbon"}]})])
        assert not added.is_error
        read, wrote = anyio.run(calls, BEN, [("search", {"owner": "ana", "query": "Lisbon"}),
                                             ("add", {"owner": "ana", "memories": [{"text": "planted"}]})])
        assert read.is_error and "Lisbon" not in text(read) and "no memory for the owner 'ana'" in text(read)
        assert wrote.is_error and "may not write" in text(wrote)
    finally:
        proc.terminate()
        proc.wait(10)
