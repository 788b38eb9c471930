"""Memory for any agent over the network: ``memstream serve`` (HTTP, MCP), access by tokens, and a Python client.

:class:`MemoryService` (:mod:`.core`) is the one place the operations live, used by the HTTP API
(:mod:`.http`, FastAPI, ``memstream[service]``) and the MCP tools (:mod:`.mcp`, ``memstream[mcp]``) alike;
:class:`Tokens` say which owners a bearer token may use; :class:`MemoryClient` (:mod:`.client`, also
``memstream.client``) calls a server the way the library is called. The errors (:mod:`.errors`) carry their
HTTP status, so both ends raise the same ones.

Names are imported when first used, so ``from memstream.service import MemoryClient`` loads neither the designs
nor FastAPI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memstream.service.client import MemoryClient
    from memstream.service.core import DEFAULT_DESIGN, Health, Hit, MemoryService, Page
    from memstream.service.errors import (
        BadRequest,
        Forbidden,
        NotAllowed,
        NotFound,
        ServiceError,
        TooLarge,
        Unauthorized,
        Unavailable,
    )
    from memstream.service.http import create_app
    from memstream.service.limits import MAX_BODY_BYTES, MAX_BUDGET, MAX_ENTRIES, MAX_PAGE_SIZE, MAX_RESULTS
    from memstream.service.mcp import MCP_PATH, create_mcp_server, mcp_http_app, stdio_principal
    from memstream.service.tokens import LOCAL, Principal, Tokens

#: Each public name and the module that holds it.
_WHERE = {
    "MemoryClient": "client", "create_app": "http",
    "DEFAULT_DESIGN": "core", "Health": "core", "Hit": "core", "MemoryService": "core", "Page": "core",
    "BadRequest": "errors", "Forbidden": "errors", "NotAllowed": "errors", "NotFound": "errors",
    "ServiceError": "errors", "TooLarge": "errors", "Unauthorized": "errors", "Unavailable": "errors",
    "MAX_BODY_BYTES": "limits", "MAX_BUDGET": "limits", "MAX_ENTRIES": "limits", "MAX_PAGE_SIZE": "limits",
    "MAX_RESULTS": "limits",
    "LOCAL": "tokens", "Principal": "tokens", "Tokens": "tokens",
    "MCP_PATH": "mcp", "create_mcp_server": "mcp", "mcp_http_app": "mcp", "stdio_principal": "mcp",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'memstream.service' has no attribute {name!r}")
    return getattr(importlib.import_module(f"memstream.service.{_WHERE[name]}"), name)


__all__ = [
    "DEFAULT_DESIGN", "LOCAL", "MAX_BODY_BYTES", "MAX_BUDGET", "MAX_ENTRIES", "MAX_PAGE_SIZE", "MAX_RESULTS",
    "MCP_PATH",
    "BadRequest", "Forbidden", "Health", "Hit", "MemoryClient", "MemoryService", "NotAllowed", "NotFound", "Page",
    "Principal", "ServiceError", "Tokens", "TooLarge", "Unauthorized", "Unavailable", "create_app",
    "create_mcp_server", "mcp_http_app", "stdio_principal",
]
