"""Headless Chromium driven over the DevTools protocol, with the standard library only.

Why: the page's map is interactive (wheel, drag, keys, clicks on a canvas, playing in real time),
so checking it and timing it needs real input events and the browser's own clock, which
``--dump-dom`` cannot give. Chromium speaks the protocol over a pipe (``--remote-debugging-pipe``:
it reads commands from fd 3 and writes answers to fd 4, each a JSON message ended by a NUL byte),
so no port, websocket library or driver package is needed. Used by the page's tests,
``benchmarks/view.py`` and the README's screenshots.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from memstream.errors import MemstreamError
from memstream.files import JsonObject

#: Names Chromium is installed under (Debian's package is ``chromium``).
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: The window the page is measured and pictured in.
SIZE = (1280, 800)


def find_browser() -> str | None:
    return next((b for b in BROWSERS if shutil.which(b)), None)


class Browser:
    """One headless Chromium with one page, scripted by protocol commands; a context manager."""

    def __init__(self, size: tuple[int, int] = SIZE, timeout: float = 120.0) -> None:
        browser = find_browser()
        if browser is None:
            raise MemstreamError("no Chromium here: apt-get install chromium")
        self.timeout = timeout
        read_end, self._out = os.pipe()
        self._in, write_end = os.pipe()
        # above 9, so that moving them to 3 and 4 cannot close one another
        to_child, from_child = fcntl.fcntl(read_end, fcntl.F_DUPFD, 10), fcntl.fcntl(write_end, fcntl.F_DUPFD, 10)
        os.close(read_end)
        os.close(write_end)
        # a profile of its own: another Chromium on the same profile would take the page and close the pipe
        self.profile = tempfile.mkdtemp(prefix="memstream-chromium-")
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
                 "--no-first-run", "--disable-extensions", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                 f"--window-size={size[0]},{size[1]}"]
        # the protocol's fds are 3 and 4 in the child: moved there by the shell that becomes Chromium (bash: dash
        # cannot name an fd above 9)
        script = f'exec "$0" "$@" 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-'
        self.process = subprocess.Popen(["bash", "-c", script, browser, *flags, "about:blank"],
                                        pass_fds=(to_child, from_child),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        self.wall = 0.0
        self.events: list[JsonObject] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            os.close(self._out)
            os.close(self._in)
        except OSError:
            pass
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method: str, params: JsonObject | None = None, session: str | None = None) -> JsonObject:
        """Send one command and wait for its answer (events that arrive meanwhile are kept)."""
        self._next += 1
        message: JsonObject = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise MemstreamError(f"{method}: {answer['error'].get('message')}")
                return answer.get("result", {})
            self.events.append(answer)

    def send(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """A command to the page."""
        return self.call(method, params, self.session)

    def _read(self, deadline: float) -> JsonObject:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise MemstreamError("Chromium did not answer in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise MemstreamError("Chromium closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def open(self, url: str, ready: str = "document.body && document.body.dataset.ready === '1'") -> float:
        """Load ``url`` and wait until ``ready`` holds; the seconds that took, by the page's own clock
        (``performance.now()`` counts from the navigation's start). ``self.wall`` has the same by this
        process's clock, from sending the navigation to seeing the page ready (polled every 50 ms)."""
        self.send("Page.navigate", {"url": "about:blank"})  # else a new fragment alone would not reload the page
        self.events.clear()
        started = time.perf_counter()
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                if self.eval(f"!!({ready})"):
                    self.wall = time.perf_counter() - started
                    return float(self.eval("performance.now()")) / 1000
            except MemstreamError:
                pass  # the old document is being replaced
            thrown = [e for e in self.events if e.get("method") == "Runtime.exceptionThrown"]
            if thrown:
                details = thrown[0]["params"]["exceptionDetails"]
                raise MemstreamError(f"the page failed: {details.get('exception', {}).get('description', details)}")
            time.sleep(0.05)
        raise MemstreamError(f"{url} did not get ready in {self.timeout:.0f} s")

    def eval(self, expression: str, wait: bool = False) -> Any:
        """The value of a script expression in the page (``wait``: a promise, awaited)."""
        out = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": wait})
        if "exceptionDetails" in out:
            raise MemstreamError(f"in the page: {out['exceptionDetails'].get('exception', {}).get('description', out)}")
        return out["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, **extra: Any) -> None:
        """One mouse event at page coordinates (``mousePressed``, ``mouseReleased``, ``mouseMoved``, ``mouseWheel``)."""
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra})

    def click(self, x: float, y: float) -> None:
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", buttons=1, clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", buttons=0, clickCount=1)

    def drag(self, x: float, y: float, dx: float, dy: float, steps: int = 8) -> None:
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", buttons=1, clickCount=1)
        for k in range(1, steps + 1):
            self.mouse("mouseMoved", x + dx * k / steps, y + dy * k / steps, button="left", buttons=1)
        self.mouse("mouseReleased", x + dx, y + dy, button="left", buttons=0, clickCount=1)

    def wheel(self, x: float, y: float, dy: float) -> None:
        self.mouse("mouseWheel", x, y, deltaX=0, deltaY=dy)

    def key(self, key: str, code: str | None = None) -> None:
        """Press and release one key in the focused element (``key`` as ``KeyboardEvent.key`` names it)."""
        text = key if len(key) == 1 else ""
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": code or key,
                                                 "text": text if kind == "keyDown" else "",
                                                 "windowsVirtualKeyCode": _virtual_key(key)})

    def pinch(self, x: float, y: float, scale: float) -> None:
        """Two fingers moving apart (``scale`` > 1) or together around (x, y), as touch events."""
        start, steps = 60.0, 8
        def points(d: float) -> list[dict[str, float]]:
            return [{"x": x - d, "y": y, "id": 0}, {"x": x + d, "y": y, "id": 1}]
        self.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": points(start)})
        for k in range(1, steps + 1):
            spread = start * (1 + (scale - 1) * k / steps)
            self.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": points(spread)})
        self.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

    def screenshot(self, path: str | Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path


def _virtual_key(key: str) -> int:
    named = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40, "Escape": 27, "Enter": 13, " ": 32,
             "Home": 36, "End": 35, "+": 187, "=": 187, "-": 189, "[": 219, "]": 221, "Tab": 9}
    return named.get(key, ord(key.upper()) if len(key) == 1 else 0)


#: Script measuring the page while it plays: frames drawn and the time each took, by the page's own clock.
#: Play starts early enough that the run's end does not stop it within the measure (a stopped page draws nothing).
_PLAY = """new Promise(done => {
  const v = window.memstreamView, ms = %d, speed = +document.getElementById("speed").value, end = v.end;
  v.draw(Math.max(0, Math.min(v.state().now, end - speed * ms / 1000 * 1.2)));
  const f0 = v.frames().frames, t0 = performance.now();
  v.play(true);
  setTimeout(() => {
    const f = v.frames(), n = f.frames - f0, seconds = (performance.now() - t0) / 1000, still = v.state().playing;
    v.play(false); done({frames: n, seconds, work: f.work.slice(-n), still}); }, ms);
})"""


def frame_rate(browser: Browser, seconds: float = 5.0) -> dict[str, float]:
    """Frames a second while the page plays, and the 50th and 95th percentile of each frame's work (ms).

    The rate counts the frames the page drew (each a requestAnimationFrame callback that moved the
    clock and redrew) over ``performance.now()``'s seconds, so it is the browser's own timing, and
    it is capped by the display's rate (60 in headless Chromium).
    """
    got = browser.eval(_PLAY % round(seconds * 1000), wait=True)
    if not got["still"]:
        raise MemstreamError("the page stopped playing during the measure (the run is too short for it at this speed)")
    work = sorted(got["work"]) or [0.0]
    return {"fps": got["frames"] / got["seconds"], "frames": got["frames"],
            "work_p50_ms": work[len(work) // 2], "work_p95_ms": work[min(len(work) - 1, int(len(work) * 0.95))]}


def main(argv: list[str] | None = None) -> None:
    """``python -m memstream.view PAGE.html[#FRAGMENT] OUT.png ...``: screenshots at 1,280 x 800
    (how the README's pictures are made: the fragment picks the time, agent and place)."""
    import sys
    from urllib.parse import quote

    args = sys.argv[1:] if argv is None else argv
    if not args or len(args) % 2:
        raise SystemExit("usage: python -m memstream.view PAGE.html[#FRAGMENT] OUT.png [PAGE OUT ...]")
    with Browser() as browser:
        for page, out in zip(args[::2], args[1::2], strict=True):
            path, _, fragment = page.partition("#")
            browser.open(Path(path).resolve().as_uri() + ("#" + quote(fragment, safe="=&:") if fragment else ""))
            print(browser.screenshot(out))

