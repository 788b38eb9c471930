"""memstream view: the page of a run, loaded in a real browser (headless Chromium, Debian's package).

The browser is driven from the address's fragment: ``#t=TIME`` shows that time, ``#click=NAME``
dispatches a click on that agent's marker (the handler a person's click runs), and the DOM is read
back with ``--dump-dom`` after the page's script has run; ``--screenshot`` takes a picture.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from html import unescape
from pathlib import Path
from urllib.parse import quote

import pytest
from matplotlib import image

from memstream.cli import main
from memstream.sim import RunConfig, start_run
from memstream.sim.events import read_events

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium here (.ci/run installs Debian's chromium)")
TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=3000"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("view")
    start_run(RunConfig(agents=6, start=START, hours=3, embedder="hash"), root / "run", progress=False)
    assert main(["view", str(root / "run"), "-o", str(root / "page.html"), "--fact", "Valentine's Day party"]) == 0
    return root / "run", root / "page.html"


def dom(path: Path, fragment: str) -> str:
    url = path.as_uri() + "#" + quote(fragment, safe="=&")
    done = subprocess.run([BROWSER, *FLAGS, "--dump-dom", url], capture_output=True, text=True, timeout=60)
    assert 'data-ready="1"' in done.stdout, done.stderr[-500:]
    return done.stdout


def where_at(run: Path, t: datetime) -> dict[str, str]:
    """Each agent's place at ``t`` by the event log (the last event at or before it)."""
    places: dict[str, str] = {}
    for e in read_events(run / "events.jsonl"):
        if e["agent"] and "utterance" not in e and datetime.fromisoformat(e["time"]) <= t:
            places[e["agent"]] = e["location"]
    return places


@needs_browser
def test_the_agents_are_where_the_event_log_puts_them(page: tuple[Path, Path]) -> None:
    run, html = page
    t = START + timedelta(hours=2, minutes=5)
    shown = dom(html, f"t={t:%Y-%m-%d %H:%M}")
    markers = dict(re.findall(r'<g class="agent[^"]*" data-name="([^"]+)"[^>]*data-place="([^"]+)"', shown))
    assert len(markers) == 6
    expected = where_at(run, t)
    assert {n: p for n, p in markers.items() if n in expected} == expected
    assert f'id="clock">{t:%Y-%m-%d %H:%M}<' in shown


@needs_browser
def test_an_utterance_is_in_its_bubble_at_its_time_and_not_before(page: tuple[Path, Path]) -> None:
    run, html = page
    said = next(e for e in read_events(run / "events.jsonl") if "utterance" in e)
    at = datetime.fromisoformat(said["time"])
    bubbles = dom(html, f"t={at.isoformat()}").split('class="bubble"')[1:]
    assert any(said["utterance"][:40] in unescape(b.split("</g>", 1)[0]) for b in bubbles)
    assert 'class="bubble"' not in dom(html, f"t={(at - timedelta(minutes=1)).isoformat()}")


@needs_browser
def test_clicking_an_agent_shows_its_memories(page: tuple[Path, Path]) -> None:
    run, html = page
    shown = dom(html, "t=2023-02-13 08:30&click=Isabella Rodriguez")
    panel = shown.split('id="panel"', 1)[1]
    assert "Isabella Rodriguez" in panel and "recent memories" in panel
    assert re.search(r'class="block">plan block 08:00–09:00: [^<]+ \(Hobbs Cafe\)<', panel)  # her routine's hour
    assert re.search(r"#\d+ · (observation|plan|identity|dialogue|thought) · importance \d+", panel)
    assert re.search(r'<g class="agent[^"]*\bselected\b[^"]*" data-name="Isabella Rodriguez"', shown)


@needs_browser
def test_a_screenshot_is_not_blank(page: tuple[Path, Path], tmp_path: Path) -> None:
    _, html = page
    shot = tmp_path / "shot.png"
    subprocess.run([BROWSER, *FLAGS, "--window-size=1200,800", f"--screenshot={shot}",
                    html.as_uri() + "#t=2023-02-13%2008:00&click=Isabella%20Rodriguez"],
                   capture_output=True, timeout=60, check=True)
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (800, 1200) and pixels[..., :3].std() > 0.05


def test_the_page_is_self_contained_and_asks_for_nothing(page: tuple[Path, Path]) -> None:
    _, html = page
    text = html.read_text(encoding="utf-8")
    assert "default-src 'none'" in text  # the browser itself refuses any request the page might make
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?(https?:|//)""", text)
    data = json.loads(text.split('type="application/json">', 1)[1].split("</script>", 1)[0])
    assert len(data["agents"]) == 6 and data["fact"] == "Valentine's Day party"


@needs_browser
def test_an_unknown_agent_or_time_in_the_address_is_one_line_on_the_page(page: tuple[Path, Path]) -> None:
    _, html = page
    assert re.search(r'id="error"[^>]*>no agent Nobody in this run<', dom(html, "agent=Nobody"))
    assert re.search(r'id="error"[^>]*>no time 2031-01-01 00:00 in this run', dom(html, "t=2031-01-01 00:00"))


@pytest.mark.parametrize(("argv", "problem"), [
    (["view", "{tmp}", "-o", "{tmp}/p.html"], "not a run directory"),
    (["view", "{run}", "-o", "{tmp}/no/such/p.html"], "existing folder"),
    (["view", "{run}", "-o", "{tmp}/p.png"], "must end in .html"),
])
def test_bad_view_input_is_one_line_and_writes_nothing(page: tuple[Path, Path], tmp_path: Path, capsys,
                                                       argv: list[str], problem: str) -> None:
    run, _ = page
    assert main([a.format(tmp=tmp_path, run=run) for a in argv]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1 and not list(tmp_path.glob("p.*"))


@pytest.fixture(scope="module")
def served(page: tuple[Path, Path]) -> str:
    """The run's page served with search on a free port of 127.0.0.1 (a daemon thread; ends with the tests)."""
    import socket
    import threading
    import time

    from memstream.view.serve import serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    threading.Thread(target=serve, args=(page[0],), kwargs={"port": port}, daemon=True).start()
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return f"http://127.0.0.1:{port}"
        time.sleep(0.1)
    raise AssertionError("the server did not start")


def test_the_server_answers_retrieval_with_the_papers_score(served: str) -> None:
    from urllib.error import HTTPError
    from urllib.request import urlopen

    rows = json.loads(urlopen(f"{served}/recall?agent=Isabella%20Rodriguez&q=coffee&t=7200").read())
    assert 0 < len(rows) <= 10
    assert all(abs(r["score"] - (r["recency"] + r["importance"] + r["relevance"])) < 1e-3 for r in rows)
    assert rows == sorted(rows, key=lambda r: -r["score"])
    with pytest.raises(HTTPError) as bad:
        urlopen(f"{served}/recall?agent=Nobody&q=coffee&t=0")
    assert bad.value.code == 400 and "no agent" in json.loads(bad.value.read())["error"]
    for t in ("nan", "inf", "-inf", "1e300", "-5", "x"):  # refused, not clamped or passed on
        with pytest.raises(HTTPError) as bad:
            urlopen(f"{served}/recall?agent=Isabella%20Rodriguez&q=coffee&t={t}")
        assert bad.value.code == 400, t


@needs_browser
def test_the_search_box_ranks_memories_in_the_browser(served: str) -> None:
    url = served + "/#" + quote("t=2023-02-13 08:30&click=Isabella Rodriguez&q=coffee", safe="=&")
    done = subprocess.run([BROWSER, *FLAGS, "--dump-dom", url], capture_output=True, text=True, timeout=60)
    results = done.stdout.split('id="results"', 1)[1].split("</aside>", 1)[0]
    assert re.search(r"score [\d.]+ = recency [\d.]+ \+ importance [\d.]+ \+ relevance [\d.]+", results)
    assert results.count('class="rec"') == results.count('class="rel"') >= 1  # a stacked bar per memory
