"""How long a run's page takes to make and to load in headless Chromium, and how big it is.

    python benchmarks/view.py RUN [--json]

The load time is Chromium's wall time for loading the page and running its script to the end
(``--dump-dom`` after the page marks itself ready), minus the same for an empty page (the browser's
own start-up), best of three. Target: a run of 1,000 agents over a simulated day loads in under
10 seconds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from memstream.view import write_page

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--dump-dom"]


def _load(browser: str, url: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        out = subprocess.run([browser, *FLAGS, url], capture_output=True, text=True, timeout=300).stdout
        best = min(best, time.perf_counter() - started)
        if "data-ready" not in out and "empty" not in out:
            raise SystemExit("the page did not finish loading")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        raise SystemExit("no Chromium here: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        page, size = write_page(args.run, Path(tmp) / "page.html")
        made = time.perf_counter() - started
        empty = Path(tmp) / "empty.html"
        empty.write_text("<!DOCTYPE html><title>empty</title><p>empty</p>")
        baseline = _load(browser, empty.as_uri())
        loaded = _load(browser, page.as_uri())
    result = {"run": args.run, "page_mb": round(size / 1e6, 2), "make_s": round(made, 2),
              "load_s": round(loaded - baseline, 2), "browser_start_s": round(baseline, 2)}
    print(json.dumps(result) if args.json else
          f"{args.run}: page {size / 1e6:.1f} MB made in {made:.1f} s; loads in {loaded - baseline:.1f} s "
          f"(+{baseline:.1f} s browser start; target < 10 s for 1,000 agents over a day)")


if __name__ == "__main__":
    main()
