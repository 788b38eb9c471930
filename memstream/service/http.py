"""The HTTP API of ``memstream serve``: :class:`~.core.MemoryService` behind FastAPI (``memstream[service]``).

Every call names its owner (in the body of a POST, as ``?owner=`` otherwise, so any name, slashes included,
travels as sent). Endpoints are plain functions, which FastAPI answers from its thread pool; the service
serialises what must be (see :mod:`.core`). A refusal is a :class:`~.errors.ServiceError` answered with its
status and ``{"detail": "one line"}``; so is input FastAPI cannot read (malformed JSON, a wrong type: 422) and
a body over :data:`~.limits.MAX_BODY_BYTES` (413, refused before it is read whole). Tokens come in the
``Authorization: Bearer`` header and are never logged (the access log has the path and query, not headers).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi import Path as PathPart
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from memstream import __version__
from memstream.designs import Entry
from memstream.service.core import MemoryService
from memstream.service.errors import ServiceError
from memstream.service.limits import (
    MAX_BODY_BYTES,
    MAX_BUDGET,
    MAX_ENTRIES,
    MAX_PAGE_SIZE,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
)
from memstream.service.tokens import LOCAL, Principal, Tokens
from memstream.service.wire import (
    AddOut,
    ContextOut,
    ErrorOut,
    ForgetOut,
    HealthOut,
    HistoryOut,
    HitOut,
    OwnersOut,
    PageOut,
    RecordOut,
    SearchOut,
    context_out,
    record_out,
)

log = logging.getLogger("memstream.service")

#: The longest owner name or scope a request may carry (the store's limit on a scope).
MAX_NAME_CHARS = 200

Owner = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, description="whose memory")]
Design = Annotated[str | None, Field(max_length=50, description="a served design (default: the first)")]
ScopeField = Annotated[str, Field(max_length=MAX_NAME_CHARS, description="a tenant or workspace; '' for none")]


class In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddIn(In):
    owner: Owner
    entries: list[Entry] = Field(min_length=1, max_length=MAX_ENTRIES)
    design: Design = None
    scope: ScopeField = ""


class ContextIn(In):
    owner: Owner
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    at: datetime | None = Field(default=None, description="the time of the query, with a zone (default: now)")
    budget: int = Field(default=1000, ge=1, le=MAX_BUDGET, description="tokens")
    design: Design = None
    scope: ScopeField = ""


class SearchIn(In):
    owner: Owner
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    limit: int = Field(default=10, ge=1, le=MAX_RESULTS)
    design: Design = None
    scope: ScopeField = ""


class UpdateIn(In):
    owner: Owner
    text: str = Field(min_length=1)
    design: Design = None
    scope: ScopeField = ""


class ForgetIn(In):
    owner: Owner
    design: Design = None
    scope: ScopeField = ""


#: What every endpoint may answer besides its result, for the spec.
REFUSALS: dict[int | str, dict[str, Any]] = {
    s: {"model": ErrorOut, "description": d} for s, d in (
        (401, "no token, or an unknown one"), (403, "a write for an owner the token may not use"),
        (404, "no such owner or record (or one the token may not see)"), (409, "the design or store refuses it"),
        (413, "over a limit"), (422, "input that cannot be used"), (503, "the store cannot be reached just now"))}

OwnerQuery = Annotated[str, Query(min_length=1, max_length=MAX_NAME_CHARS, description="whose memory")]
DesignQuery = Annotated[str | None, Query(max_length=50, description="a served design (default: the first)")]
ScopeQuery = Annotated[str, Query(max_length=MAX_NAME_CHARS, description="a tenant or workspace")]
RecordId = Annotated[int, PathPart(ge=0, le=2**62, description="a record's id (what a context's provenance names)")]


BEARER = HTTPBearer(auto_error=False, description="a token from the server's --tokens file")


def principal(request: Request,
              credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]) -> Principal:
    """Who the request's token is (everyone is :data:`~.tokens.LOCAL` on a server started without tokens)."""
    tokens: Tokens | None = request.app.state.tokens
    if tokens is None:
        return LOCAL
    return tokens.principal(credentials.credentials if credentials else None)


Who = Annotated[Principal, Depends(principal)]


def version_out(v: Any) -> dict[str, Any]:
    return v.to_dict() if hasattr(v, "to_dict") else dict(vars(v))


class BodyLimit:
    """Refuse a body over ``limit`` bytes with 413: at once when its Content-Length says so, else as soon as
    more than that has arrived (a chunked body is not read to its end)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if not declared.isdigit():
            await _refuse_body(scope, receive, send, "a Content-Length that is not a number of bytes")
            return
        if int(declared) > self.limit:
            await _refuse_body(scope, receive, send, f"{int(declared):,} bytes")
            return
        seen, refused = 0, False

        async def counted() -> Message:
            """The body as it arrives; once past the limit, the 413 is sent and the app is told the client left
            (so it stops reading, and whatever it answers then is dropped)."""
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                refused = True
                await _refuse_body(scope, receive, send, f"over {self.limit:,} bytes")
                return {"type": "http.disconnect"}
            return message

        async def unless_refused(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counted, unless_refused)


async def _refuse_body(scope: AsgiScope, receive: Receive, send: Send, what: str) -> None:
    detail = f"the body is {what}; send at most {MAX_BODY_BYTES:,} bytes (and at most {MAX_ENTRIES} entries a call)"
    await JSONResponse({"detail": detail}, status_code=413)(scope, receive, send)


def create_app(service: MemoryService, tokens: Tokens | None = None) -> FastAPI:
    """The API answering for ``service``; with ``tokens``, every call needs one of them (else all is local)."""
    app = FastAPI(title="memstream", version=__version__, responses=REFUSALS,
                  description="Memory for any agent: memstream's designs behind one API. Every call names its "
                              "owner; writes are acknowledged once committed. See docs/service.md.")
    app.state.tokens, app.state.service = tokens, service

    @app.exception_handler(ServiceError)
    def refused(request: Request, e: ServiceError) -> JSONResponse:
        return JSONResponse({"detail": str(e)}, status_code=e.status)

    @app.exception_handler(StarletteHTTPException)
    def http_refusal(request: Request, e: StarletteHTTPException) -> JSONResponse:
        if e.status_code == 400:  # FastAPI could not read the body at all (bytes that are not UTF-8, say)
            return JSONResponse({"detail": "the body cannot be read as JSON text (is it UTF-8?); send a JSON object"},
                                status_code=422)
        return JSONResponse({"detail": str(e.detail)}, status_code=e.status_code, headers=e.headers)

    @app.exception_handler(RequestValidationError)
    def unreadable(request: Request, e: RequestValidationError) -> JSONResponse:
        first: dict[str, Any] = dict(e.errors()[0]) if e.errors() else {"loc": (), "msg": "cannot be read"}
        if first.get("type") == "json_invalid":
            error = (first.get("ctx") or {}).get("error", "")
            return JSONResponse({"detail": f"the body is not valid JSON ({error}); send a JSON object"[:500]},
                                status_code=422)
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        return JSONResponse({"detail": f"{where}: {first.get('msg', 'invalid')}{more}"[:500]}, status_code=422)

    @app.get("/health", response_model=HealthOut, responses={503: {"model": HealthOut}}, tags=["service"])
    def health() -> Any:
        """Whether the store answers now; 503 (with the problem) when it does not."""
        h = service.health()
        out = HealthOut(ok=h.ok, store=h.store, designs=h.designs, read_only=h.read_only, problem=h.problem,
                        version=__version__)
        return out if h.ok else JSONResponse(out.model_dump(mode="json"), status_code=503)

    @app.get("/v1/owners", response_model=OwnersOut, tags=["owners"])
    def owners(who: Who, design: DesignQuery = None, scope: ScopeQuery = "") -> OwnersOut:
        """The owners with memory that the token may use."""
        return OwnersOut(owners=service.owners(who, design, scope))

    @app.post("/v1/add", response_model=AddOut, tags=["memory"])
    def add(body: AddIn, who: Who) -> AddOut:
        """Remember entries for an owner; their record ids once committed (an entry the owner already has,
        by its id or what it says, is not written again: its first id is returned)."""
        return AddOut(ids=service.add(who, body.owner, body.entries, body.design, body.scope))

    @app.post("/v1/context", response_model=ContextOut, tags=["memory"])
    def context(body: ContextIn, who: Who) -> ContextOut:
        """What the model would be shown for a query under a token budget: blocks with their provenance."""
        return context_out(service.context(who, body.owner, body.query, body.at, body.budget, body.design, body.scope))

    @app.post("/v1/search", response_model=SearchOut, tags=["memory"])
    def search(body: SearchIn, who: Who) -> SearchOut:
        """The records most relevant to a query, best first, with their scores (designs that rank)."""
        hits = service.search(who, body.owner, body.query, body.limit, body.design, body.scope)
        return SearchOut(hits=[HitOut(record=record_out(h.record), score=h.score) for h in hits])

    @app.get("/v1/records", response_model=PageOut, tags=["records"])
    def records(who: Who, owner: OwnerQuery, page: Annotated[int, Query(ge=1, le=10**9)] = 1,
                size: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 50, design: DesignQuery = None,
                scope: ScopeQuery = "") -> PageOut:
        """An owner's records, oldest first, a page at a time (page 1 is the first)."""
        p = service.list(who, owner, page, size, design, scope)
        return PageOut(records=[record_out(r) for r in p.records], page=p.page, size=p.size, total=p.total)

    @app.get("/v1/records/{record_id}", response_model=RecordOut, tags=["records"])
    def get(record_id: RecordId, who: Who, owner: OwnerQuery,
            design: DesignQuery = None, scope: ScopeQuery = "") -> RecordOut:
        """One record of an owner."""
        return record_out(service.get(who, owner, record_id, design, scope))

    @app.patch("/v1/records/{record_id}", tags=["records"], status_code=204)
    def update(record_id: RecordId, body: UpdateIn, who: Who) -> None:
        """Give one record a new text, where the design's memory is its records (full, vector, recent): the same
        record id, what a context cites from now on; 409 with the design's reason where it builds its memory
        from its records, 404 for a record the owner does not have."""
        service.update(who, body.owner, record_id, body.text, body.design, body.scope)

    @app.delete("/v1/records/{record_id}", tags=["records"], status_code=204)
    def delete(record_id: RecordId, who: Who, owner: OwnerQuery,
               design: DesignQuery = None, scope: ScopeQuery = "") -> None:
        """Delete one record, where the design's memory is its records: gone from every context, search, listing
        and export; 409 with the design's reason where it builds its memory from its records, 404 for a record the
        owner does not have."""
        service.delete(who, owner, record_id, design, scope)

    @app.post("/v1/forget", response_model=ForgetOut, tags=["owners"])
    def forget(body: ForgetIn, who: Who) -> ForgetOut:
        """Erase every trace of an owner (in one design, or in every served design): the rows removed."""
        return ForgetOut(removed=service.forget(who, body.owner, body.design, body.scope))

    @app.get("/v1/history", response_model=HistoryOut, tags=["records"])
    def history(who: Who, owner: OwnerQuery, design: DesignQuery = None, scope: ScopeQuery = "") -> HistoryOut:
        """Every version of what the design holds of an owner (designs that keep versions; 409 otherwise)."""
        return HistoryOut(versions=[version_out(v) for v in service.history(who, owner, design, scope)])

    app.add_middleware(BodyLimit)
    return app
