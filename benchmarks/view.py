"""How long a run's page takes to make and to load in headless Chromium, how fast it plays, how big it is.

    python benchmarks/view.py RUN [--seconds 5] [--json] [--results [FILE]]

All times in the browser are the browser's own (``performance.now()``), in a 1,280 x 800 window:
- *load*: from the navigation's start until the page's script has drawn the first frame and
  marked itself ready (parsing the page's data included), best of three; beside it the same seen
  from outside (from sending the navigation to seeing the page ready, polled every 50 ms);
- *fps*: frames drawn a second while the page plays at 10 simulated minutes a second from the
  ten minutes in which most agents set out walking, fitted to the whole town and then zoomed in eight steps (render only what is in view), with each
  frame's script time (p50 and p95).
Targets: a run of 1,000 agents over a simulated day loads in under 10 seconds and plays at 30
frames a second or more.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from memstream.view import Browser, frame_rate, write_page

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

#: Zoom steps (of 1.25) for the zoomed-in frame rate: close enough that most of a large town is out of view.
ZOOM_STEPS = 8


def _busiest(page: Path, window: int = 600) -> int:
    """The start (seconds into the run) of the ``window`` in which most agents set out walking."""
    text = page.read_text(encoding="utf-8")
    data = json.loads(text.split('type="application/json">', 1)[1].split("</script>", 1)[0])
    counts = Counter(trip[0] // window for trips in data["trips"] for trip in trips)
    return max(counts, key=counts.__getitem__) * window if counts else 0


def measure(run: str, seconds: float = 5.0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        page, size = write_page(run, Path(tmp) / "page.html")
        made = time.perf_counter() - started
        with Browser() as browser:
            loads, walls = [], []
            for _ in range(3):
                loads.append(browser.open(page.as_uri()))
                walls.append(browser.wall)
            agents = browser.eval("memstreamView.agents().length")
            busiest = _busiest(page)
            browser.eval(f"memstreamView.draw({busiest})")
            fitted = frame_rate(browser, seconds)
            browser.eval(f"memstreamView.draw({busiest}); document.getElementById('stage').focus()")
            for _ in range(ZOOM_STEPS):
                browser.key("+")
            zoomed = frame_rate(browser, seconds)
    return {"run": run, "agents": agents, "page_mb": round(size / 1e6, 2), "make_s": round(made, 2),
            "load_s": round(min(loads), 2), "load_wall_s": round(min(walls), 2), "fps_fitted": round(fitted["fps"], 1),
            "work_p50_ms_fitted": round(fitted["work_p50_ms"], 2), "work_p95_ms_fitted": round(fitted["work_p95_ms"], 2),
            "fps_zoomed": round(zoomed["fps"], 1), "work_p95_ms_zoomed": round(zoomed["work_p95_ms"], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of play per frame-rate figure")
    parser.add_argument("--json", action="store_true")
    add_results_flag(parser, "view")
    args = parser.parse_args()
    r = measure(args.run, args.seconds)
    if args.results:
        record(args.results, "view", "The served page: made, loaded and played in headless Chromium", [r])
    print(json.dumps(r) if args.json else
          f"{args.run}: {r['agents']} agents; page {r['page_mb']:.1f} MB made in {r['make_s']:.1f} s; "
          f"loads in {r['load_s']:.2f} s ({r['load_wall_s']:.2f} s from outside); plays at {r['fps_fitted']:.0f} fps fitted (script p95 "
          f"{r['work_p95_ms_fitted']:.1f} ms a frame), {r['fps_zoomed']:.0f} fps zoomed in "
          f"(targets for 1,000 agents over a day: load < 10 s, >= 30 fps)")


if __name__ == "__main__":
    main()
