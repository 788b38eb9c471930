"""``memstream serve``: memory for any agent over HTTP (``memstream[service]``: FastAPI and uvicorn), or as MCP
tools (``--mcp stdio|http``, ``memstream[mcp]``).

The server binds to 127.0.0.1 unless told otherwise, and refuses to listen on another address without
``--tokens`` (memory is private: on a network, every call must carry a token allowed its owner).
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
from collections.abc import Callable

from memstream.cli.flags import model_flags, positive_int
from memstream.errors import MemstreamError, import_extra

#: The address and port ``memstream serve`` listens on by default (loopback: this machine only).
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8420
#: Where a stdio MCP server started with ``--tokens`` reads its client's token when ``--token`` is not given.
TOKEN_ENV = "MEMSTREAM_TOKEN"
#: The MCP transports (as memstream.service.mcp.TRANSPORTS, written here so --help needs no extra).
MCP_TRANSPORTS = ("stdio", "http")


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("serve", help="serve memory designs over HTTP (memstream[service]) or MCP (memstream[mcp])")
    p.add_argument("--store", required=True, metavar="PATH|URL",
                   help="the design store: an SQLite file's path (made if missing) or a postgresql:// URL")
    p.add_argument("--design", metavar="D,...",
                   help="the designs to serve, comma-separated, the first the default of a call "
                        "(default: those the store holds, else vector)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"the address to listen on (default {DEFAULT_HOST}; another needs --tokens)")
    p.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"1-65535 (default {DEFAULT_PORT})")
    p.add_argument("--tokens", metavar="FILE",
                   help="bearer tokens, one a line: TOKEN OWNER[,OWNER...] or TOKEN * (docs/service.md)")
    p.add_argument("--mcp", choices=MCP_TRANSPORTS,
                   help="serve MCP tools instead of the HTTP API: stdio (for a client that starts this command) "
                        "or http (streamable HTTP at http://HOST:PORT/mcp, bearer tokens as the API's)")
    p.add_argument("--token", help=f"with --mcp stdio and --tokens: the token the client is (default: env {TOKEN_ENV})")
    p.add_argument("--read-only", action="store_true", help="serve reads only (writes answer 409)")
    model_flags(p, cache=False)
    return {"serve": cmd_serve}


def port(text: str) -> int:
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text[:20]} is not a port; use 1-65535")
    return value


def refuse_taken(host: str, number: int) -> None:
    """One line, before the store is opened, if ``host:number`` cannot be listened on (taken, or no such address)."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host.strip("[]"), number))
    except OSError as e:
        raise MemstreamError(f"cannot listen on {host}:{number} ({e.strerror or e}); choose another --port "
                             "or --host") from None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    if not is_loopback(args.host) and not args.tokens:
        raise MemstreamError(f"refusing to listen on {args.host} without --tokens: anyone who can reach it would "
                             "read every owner's memory; pass --tokens FILE, or keep the default --host 127.0.0.1")
    if args.mcp:
        return serve_mcp(args)
    uvicorn = import_extra("uvicorn", feature="memstream serve", extra="service")
    refuse_taken(args.host, args.port)
    import_extra("fastapi", feature="memstream serve", extra="service")
    from memstream.designs import design_names
    from memstream.models import make_chat_model, make_embedder
    from memstream.service import MemoryService, Tokens, create_app

    tokens = Tokens.read(args.tokens) if args.tokens else None
    designs = design_names(args.design) if args.design else None
    chat = make_chat_model(args.llm, timeout=args.timeout, concurrency=args.concurrency)
    with MemoryService(args.store, designs, chat=chat, embedder=make_embedder(args.embedder),
                       read_only=args.read_only) as service:
        app = create_app(service, tokens)
        access = f"{len(tokens)} tokens" if tokens else "no tokens: loopback only"
        print(f"memstream serve: {', '.join(service.designs)} on {service.health().store} at "
              f"http://{args.host}:{args.port} ({access})", file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", server_header=False)
    return 0


def serve_mcp(args: argparse.Namespace) -> int:
    """The MCP tools over stdio (this process's stdin and stdout are the protocol's: only stderr is written) or
    streamable HTTP."""
    import os

    import_extra("mcp.server.mcpserver", feature="memstream serve --mcp", extra="mcp")
    if args.mcp == "http":
        uvicorn = import_extra("uvicorn", feature="memstream serve --mcp http", extra="mcp")
        refuse_taken(args.host, args.port)
    from memstream.designs import design_names
    from memstream.models import make_chat_model, make_embedder
    from memstream.service import MCP_PATH, MemoryService, Tokens, create_mcp_server, mcp_http_app, stdio_principal

    tokens = Tokens.read(args.tokens) if args.tokens else None
    fixed = stdio_principal(tokens, args.token or os.environ.get(TOKEN_ENV)) if args.mcp == "stdio" else None
    designs = design_names(args.design) if args.design else None
    chat = make_chat_model(args.llm, timeout=args.timeout, concurrency=args.concurrency)
    with MemoryService(args.store, designs, chat=chat, embedder=make_embedder(args.embedder),
                       read_only=args.read_only) as service:
        server = create_mcp_server(service, tokens, fixed)
        where = "stdio" if args.mcp == "stdio" else f"http://{args.host}:{args.port}{MCP_PATH}"
        access = f"{len(tokens)} tokens" if tokens else "no tokens: this machine only"
        print(f"memstream serve --mcp: {', '.join(service.designs)} on {service.health().store} at {where} "
              f"({access})", file=sys.stderr, flush=True)
        if args.mcp == "stdio":
            server.run("stdio")
        else:
            uvicorn.run(mcp_http_app(server, tokens, args.host), host=args.host, port=args.port, log_level="warning",
                        server_header=False)
    return 0
