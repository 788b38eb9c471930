"""A Python client of ``memstream serve``: the library's calls, over HTTP (``memstream[service]``: httpx).

>>> with MemoryClient("http://127.0.0.1:8420", token="...") as memory:     # doctest: +SKIP
...     memory.add("ana", [{"text": "I moved to Lisbon", "at": "2026-05-01T10:00:00+00:00"}])
...     memory.search("ana", "where does Ana live?")

A refusal raises the :class:`~.errors.ServiceError` the server raised (by its status), with the server's
one-line reason; a server that cannot be reached is :class:`~.errors.Unavailable`. Entries are dicts (or
anything with ``model_dump``, such as :class:`memstream.designs.Entry`); times may be datetimes.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from memstream.errors import import_extra
from memstream.service.errors import BY_STATUS, ServiceError, Unavailable
from memstream.service.wire import (
    AddOut,
    ContextOut,
    ForgetOut,
    HealthOut,
    HistoryOut,
    HitOut,
    OwnersOut,
    PageOut,
    RecordOut,
    SearchOut,
)

if TYPE_CHECKING:
    import httpx

#: Seconds a call waits for the server (a write commits before it answers, so give it time).
TIMEOUT_S = 30.0
M = TypeVar("M", bound=BaseModel)


class MemoryClient:
    """Calls the server at ``url`` (``http://host:port``) with ``token`` (None for a server without tokens);
    ``http``: an httpx client of the caller's to send through instead (FastAPI's TestClient, in tests)."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = TIMEOUT_S,
                 http: httpx.Client | None = None) -> None:
        httpx_ = import_extra("httpx", feature="memstream.client", extra="service")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self._http: httpx.Client = http or httpx_.Client(base_url=self.url, timeout=timeout)
        self._own = http is None  # a caller's client is the caller's to close
        self._headers = headers
        self._httpx = httpx_

    def close(self) -> None:
        if self._own:
            self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the calls ------------------------------------------------------------------------------

    def add(self, owner: str, entries: Iterable[Mapping[str, Any] | Any], *, design: str | None = None,
            scope: str = "") -> list[int | None]:
        """Remember ``entries`` for ``owner``: a record id per entry, once committed."""
        body = {"owner": owner, "entries": [_entry(e) for e in entries], "design": design, "scope": scope}
        return self._call("POST", "/v1/add", AddOut, json=body).ids

    remember = add

    def context(self, owner: str, query: str, *, at: datetime | None = None, budget: int = 1000,
                design: str | None = None, scope: str = "") -> ContextOut:
        body = {"owner": owner, "query": query, "at": at.isoformat() if at else None, "budget": budget,
                "design": design, "scope": scope}
        return self._call("POST", "/v1/context", ContextOut, json=body)

    def search(self, owner: str, query: str, *, limit: int = 10, design: str | None = None,
               scope: str = "") -> list[HitOut]:
        body = {"owner": owner, "query": query, "limit": limit, "design": design, "scope": scope}
        return self._call("POST", "/v1/search", SearchOut, json=body).hits

    def get(self, owner: str, record_id: int, *, design: str | None = None, scope: str = "") -> RecordOut:
        return self._call("GET", f"/v1/records/{int(record_id)}", RecordOut, params=_q(owner, design, scope))

    def list(self, owner: str, *, page: int = 1, size: int = 50, design: str | None = None,
             scope: str = "") -> PageOut:
        params = {**_q(owner, design, scope), "page": page, "size": size}
        return self._call("GET", "/v1/records", PageOut, params=params)

    def delete(self, owner: str, record_id: int, *, design: str | None = None, scope: str = "") -> None:
        self._call("DELETE", f"/v1/records/{int(record_id)}", None, params=_q(owner, design, scope))

    def update(self, owner: str, record_id: int, text: str, *, design: str | None = None, scope: str = "") -> None:
        body = {"owner": owner, "text": text, "design": design, "scope": scope}
        self._call("PATCH", f"/v1/records/{int(record_id)}", None, json=body)

    def forget(self, owner: str, *, design: str | None = None, scope: str = "") -> dict[str, int]:
        body = {"owner": owner, "design": design, "scope": scope}
        return self._call("POST", "/v1/forget", ForgetOut, json=body).removed

    def history(self, owner: str, *, design: str | None = None, scope: str = "") -> builtins.list[dict[str, Any]]:
        return self._call("GET", "/v1/history", HistoryOut, params=_q(owner, design, scope)).versions

    def owners(self, *, design: str | None = None, scope: str = "") -> builtins.list[str]:
        params = {k: v for k, v in {"design": design, "scope": scope}.items() if v}
        return self._call("GET", "/v1/owners", OwnersOut, params=params).owners

    def health(self) -> HealthOut:
        """The server's health; a server whose store does not answer raises :class:`~.errors.Unavailable`."""
        return self._call("GET", "/health", HealthOut)

    # -- one request ----------------------------------------------------------------------------

    def _call(self, method: str, path: str, model: type[M] | None, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, headers=self._headers, **kwargs)
        except self._httpx.HTTPError as e:
            raise Unavailable(f"cannot reach the memstream server at {self.url} ({type(e).__name__}: {e})") from None
        if response.status_code >= 400:
            raise _refusal(response.status_code, response)
        if model is None:
            return None
        try:
            return model.model_validate_json(response.content)
        except ValidationError as e:
            raise ServiceError(f"{self.url}{path} answered what this client cannot read "
                               f"({e.errors()[0]['msg']}); is it a memstream server of this version?") from None


def _refusal(status: int, response: Any) -> ServiceError:
    try:
        body = response.json()
        detail = body.get("detail") if isinstance(body, dict) else None
        if not isinstance(detail, str):
            detail = (body.get("problem") if isinstance(body, dict) else None) or response.text[:200]
    except ValueError:
        detail = response.text[:200] or f"HTTP {status}"
    kind = BY_STATUS.get(status, Unavailable if status >= 500 else ServiceError)
    error = kind(detail)
    return error


def _entry(e: Mapping[str, Any] | Any) -> dict[str, Any]:
    if hasattr(e, "model_dump"):
        return e.model_dump(mode="json", exclude_none=True)
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in dict(e).items()}


def _q(owner: str, design: str | None, scope: str) -> dict[str, str]:
    return {"owner": owner, **({"design": design} if design else {}), **({"scope": scope} if scope else {})}
