"""memstream's memory as MCP tools (``memstream serve --mcp stdio|http``, ``memstream[mcp]``: the official SDK).

Seven tools, each one call of :class:`~.core.MemoryService` (so every check, limit and refusal is the HTTP API's):
``add`` (remember), ``search`` (the context for a query under a budget, each block with the ids of its
records), ``list`` (an owner's records, a page at a time), ``get``, ``update`` and ``delete`` of one record
(where the design's memory is its records; refused with the design's reason where it builds its memory from
them) and ``forget``. A refusal is a tool error whose text is the service's one
line, so the model reads what went wrong and how to fix it.

Who is asking: over stdio, the one principal the server was started for (the token given at start, checked
against ``--tokens``; everyone is local without tokens, as the process is this machine's); over streamable
HTTP, the bearer token of each request (a request without a known token is answered 401 before it reaches the
MCP session, and each tool call reads the token again, so no call runs for a principal it was not given).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from memstream import __version__
from memstream.designs import Entry, entry
from memstream.errors import MemstreamError
from memstream.service.core import MemoryService
from memstream.service.errors import ServiceError, Unauthorized
from memstream.service.limits import MAX_BUDGET, MAX_ENTRIES, MAX_PAGE_SIZE, MAX_QUERY_CHARS
from memstream.service.tokens import LOCAL, Principal, Tokens
from memstream.service.wire import AddOut, ContextOut, ForgetOut, PageOut, RecordOut, context_out, record_out

#: Where streamable HTTP answers MCP (``http://HOST:PORT/mcp``).
MCP_PATH = "/mcp"
#: The MCP transports ``memstream serve --mcp`` offers.
TRANSPORTS = ("stdio", "http")
T = TypeVar("T")


class Memory(BaseModel):
    """One thing to remember, as a model writes it: the text, and optionally when it happened (default: now)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, description="what to remember")
    at: datetime | None = Field(default=None, description="when it happened, with a time zone (default: now)")
    source: str = Field(default="user", description="who said it or where it came from")
    kind: Literal["turn", "observation", "tool", "pinned"] = "turn"
    session: str = ""
    id: str | None = Field(default=None, description="the writer's own id: the same id sent again is stored once")

    def as_entry(self) -> Entry:
        fields = self.model_dump(exclude_none=True)
        fields["at"] = self.at or datetime.now(UTC)
        return entry(**fields)


class Access:
    """Whose calls the tools answer: ``fixed`` over stdio; over HTTP, the bearer token of each request."""

    def __init__(self, tokens: Tokens | None, fixed: Principal) -> None:
        self.tokens, self.fixed = tokens, fixed

    def principal(self, ctx: Context) -> Principal:
        headers = ctx.headers  # None over stdio: no HTTP request carries the call
        if headers is None:
            return self.fixed
        if self.tokens is None:
            return LOCAL
        return self.tokens.principal(bearer(headers.get("authorization")))


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header (None if there is none)."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def stdio_principal(tokens: Tokens | None, token: str | None) -> Principal:
    """The one principal a stdio server answers for: ``token``'s, checked at start (local without tokens)."""
    if tokens is None:
        return LOCAL
    if not token:
        raise MemstreamError("this server has --tokens, so a stdio client must be given one: pass --token TOKEN "
                             "or set MEMSTREAM_TOKEN in the server's environment")
    try:
        return tokens.principal(token)
    except Unauthorized:
        raise MemstreamError("the token given (--token or MEMSTREAM_TOKEN) is not in the --tokens file; "
                             "use one of its tokens") from None


def _answer(call: Callable[[], T]) -> T:
    """``call``'s result; a refusal as a tool error carrying the service's one line (never a traceback)."""
    try:
        return call()
    except ServiceError as e:
        raise ToolError(f"refused ({e.status} {type(e).__name__}): {e}") from None
    except MemstreamError as e:
        raise ToolError(f"refused: {e}") from None


def create_mcp_server(service: MemoryService, tokens: Tokens | None = None,
                      fixed: Principal | None = None) -> MCPServer:
    """The MCP tools answering for ``service``; ``fixed`` is the stdio principal (:func:`stdio_principal`; local
    if None)."""
    access = Access(tokens, fixed or LOCAL)
    server: MCPServer = MCPServer(
        "memstream", version=__version__, log_level="WARNING",
        instructions="Long-term memory per owner. add what should be remembered; search for the context to "
                     "answer a question (each block names the ids of the records it comes from); list or get "
                     "records; update or delete one record (where the design allows it); forget an owner. "
                     f"Designs served: {', '.join(service.designs)}.")

    @server.tool()
    def add(owner: str, memories: list[Memory], ctx: Context, design: str | None = None, scope: str = "") -> AddOut:
        """Remember memories for an owner; returns a record id per memory once committed (one the owner
        already has, by its id or what it says, is not written again: its first id is returned)."""
        who = access.principal(ctx)
        if len(memories) > MAX_ENTRIES:
            raise ToolError(f"refused: {len(memories)} memories in one call; send at most {MAX_ENTRIES} a call")
        return _answer(lambda: AddOut(ids=service.add(who, owner, [m.as_entry() for m in memories], design, scope)))

    @server.tool(description=f"What to know about an owner to answer a query, in at most `budget` tokens (at "
                             f"most {MAX_BUDGET:,}; a query of at most {MAX_QUERY_CHARS:,} characters): blocks in "
                             "reading order, each with the ids of the records it comes from, and what was cut.")
    def search(owner: str, query: str, ctx: Context, budget: int = 1000, at: datetime | None = None,
               design: str | None = None, scope: str = "") -> ContextOut:
        who = access.principal(ctx)
        return _answer(lambda: context_out(service.context(who, owner, query, at, budget, design, scope)))

    @server.tool(name="list", description=f"An owner's records, oldest first, `size` a page (at most "
                                          f"{MAX_PAGE_SIZE}); page 1 is the first.")
    def list_records(owner: str, ctx: Context, page: int = 1, size: int = 50, design: str | None = None,
                     scope: str = "") -> PageOut:
        who = access.principal(ctx)
        p = _answer(lambda: service.list(who, owner, page, size, design, scope))
        return PageOut(records=[record_out(r) for r in p.records], page=p.page, size=p.size, total=p.total)

    @server.tool()
    def get(owner: str, record_id: int, ctx: Context, design: str | None = None, scope: str = "") -> RecordOut:
        """One record of an owner, by its id (the ids a search's blocks name)."""
        who = access.principal(ctx)
        return _answer(lambda: record_out(service.get(who, owner, record_id, design, scope)))

    @server.tool()
    def update(owner: str, record_id: int, text: str, ctx: Context, design: str | None = None,
               scope: str = "") -> RecordOut:
        """Give one record a new text (the same id, what a search cites from now on), where the design allows it
        (the reason, where it does not); returns the record as it now is."""
        who = access.principal(ctx)
        return _answer(lambda: record_out(service.update(who, owner, record_id, text, design, scope)))

    @server.tool()
    def delete(owner: str, record_id: int, ctx: Context, design: str | None = None, scope: str = "") -> str:
        """Remove one record, where the design allows it (the reason, where it does not): gone from every search,
        list and get."""
        who = access.principal(ctx)
        _answer(lambda: service.delete(who, owner, record_id, design, scope))
        return f"record {record_id} removed"

    @server.tool()
    def forget(owner: str, ctx: Context, design: str | None = None, scope: str = "") -> ForgetOut:
        """Erase every trace of an owner (in one design, or every served design): the rows removed per design."""
        who = access.principal(ctx)
        return _answer(lambda: ForgetOut(removed=service.forget(who, owner, design, scope)))

    return server


class BearerGuard:
    """Over streamable HTTP, a request without a token this server knows is answered 401 with the reason
    (and ``WWW-Authenticate: Bearer``) before it reaches the MCP session."""

    def __init__(self, app: ASGIApp, tokens: Tokens) -> None:
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
            try:
                self.tokens.principal(bearer(headers.get("authorization")))
            except Unauthorized as e:
                from starlette.responses import JSONResponse

                await JSONResponse({"detail": str(e)}, status_code=401,
                                   headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
        await self.app(scope, receive, send)


def mcp_http_app(server: MCPServer, tokens: Tokens | None, host: str) -> ASGIApp:
    """The streamable HTTP app (at :data:`MCP_PATH`), behind :class:`BearerGuard` when there are tokens."""
    app: ASGIApp = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return BearerGuard(app, tokens) if tokens is not None else app


__all__ = ["MCP_PATH", "TRANSPORTS", "Access", "BearerGuard", "Memory", "bearer", "create_mcp_server", "mcp_http_app",
           "stdio_principal"]
