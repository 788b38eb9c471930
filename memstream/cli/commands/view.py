"""``memstream view``: a run as one self-contained page to watch in a browser, or served with search."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from memstream.cli.flags import output_flag, positive_int
from memstream.errors import MemstreamError


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("view", help="write a run as one self-contained page to watch in a browser")
    p.add_argument("run")
    output_flag(p, required=False, help="the page, .html (opens from disk; no server, no network)")
    p.add_argument("--fact", help="mark the agents who know this fact at the time shown")
    p.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 instead, with search: its "
                   "search box ranks an agent's memories for a typed query (needs the run's embedder)")
    p.add_argument("--port", type=positive_int, default=8765)
    return {"view": cmd_view}


def cmd_view(args: argparse.Namespace) -> int:
    from memstream.view import write_page

    if args.serve:
        from memstream.view import serve

        serve(args.run, port=args.port, fact=args.fact)
        return 0
    if not args.output:
        raise MemstreamError("give -o PAGE.html, or --serve to serve the page with search")
    out, size = write_page(args.run, args.output, fact=args.fact)
    print(f"wrote {out} ({size / 1e6:.1f} MB); open it in a browser (add #t=YYYY-MM-DD HH:MM&agent=NAME to the "
          "address to start there)")
    return 0

