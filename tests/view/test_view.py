"""memstream view: the page of a run, loaded and used in a real browser (headless Chromium, Debian's package).

The browser is driven over the DevTools protocol (:mod:`memstream.view.browser`): real mouse,
wheel, touch and key events go to the page, and what it drew is read back from the page itself
(the rendered boxes of its labels, its view, each agent's marker) or as a screenshot.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from matplotlib import image

from memstream.cli import main
from memstream.sim import RunConfig, start_run
from memstream.sim.events import read_events
from memstream.view.browser import Browser, find_browser, frame_rate
from memstream.view.page import CLASSES, activity_class
from tests.helpers import ROOT

NO_CHROMIUM = find_browser() is None


def needs_browser(test: Callable) -> Callable:
    """Marks a test that drives a real Chromium (``browser``), skipped where there is none."""
    skip = pytest.mark.skipif(NO_CHROMIUM, reason="no Chromium here (.ci/run installs Debian's chromium)")
    return pytest.mark.browser(skip(test))


TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
#: The large page's town, and the frame rate it must keep while playing (the issue's figure).
LARGE_AGENTS, LEAST_FPS = 1000, 30


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The default town (all its residents) for three hours, and its page with a fact."""
    root = tmp_path_factory.mktemp("view")
    start_run(RunConfig(start=START, hours=3, embedder="hash"), root / "run", progress=False)
    assert main(["view", str(root / "run"), "-o", str(root / "page.html"), "--fact", "Valentine's Day party"]) == 0
    return root / "run", root / "page.html"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if find_browser() is None:
        pytest.skip("no Chromium here")
    with Browser() as b:
        yield b


def show(browser: Browser, html: Path, fragment: str = "") -> None:
    browser.open(html.as_uri() + ("#" + quote(fragment, safe="=&") if fragment else ""))


def settle(browser: Browser) -> None:
    """Wait for the page to draw: input is handled at once, but labels and bubbles follow in the next frame."""
    browser.eval("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))", wait=True)


def state(browser: Browser) -> dict[str, Any]:
    return browser.eval("memstreamView.state()")


def data(html: Path) -> dict[str, Any]:
    return json.loads(html.read_text(encoding="utf-8").split('type="application/json">', 1)[1].split("</script>", 1)[0])


def where_at(run: Path, t: datetime) -> dict[str, str]:
    """Each agent's place at ``t`` by the event log (the last event at or before it)."""
    places: dict[str, str] = {}
    for e in read_events(run / "events.jsonl"):
        if e["agent"] and "utterance" not in e and datetime.fromisoformat(e["time"]) <= t:
            places[e["agent"]] = e["location"]
    return places


@needs_browser
def test_the_agents_are_where_the_event_log_puts_them(page: tuple[Path, Path], browser: Browser) -> None:
    run, html = page
    t = START + timedelta(hours=2, minutes=5)
    show(browser, html, f"t={t:%Y-%m-%d %H:%M}")
    shown = {a["name"]: a["place"] for a in browser.eval("memstreamView.agents()")}
    expected = where_at(run, t)
    assert len(shown) == 25 and len(expected) > 10
    assert {n: p for n, p in shown.items() if n in expected} == expected
    assert browser.eval("document.getElementById('clock').textContent") == f"{t:%Y-%m-%d %H:%M}"


@needs_browser
def test_agents_in_one_building_are_spread_out_not_stacked(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    show(browser, html, "t=2023-02-13 06:00")  # everyone at home: several to a house
    markers = [a for a in browser.eval("memstreamView.agents()") if a["x"] is not None]
    assert len(markers) == 25
    for i, a in enumerate(markers):
        for b in markers[i + 1:]:
            assert (a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2 >= (a["r"] + b["r"]) ** 2 - 1, (a, b)


@needs_browser
def test_an_utterance_is_in_its_bubble_at_its_time_and_not_before(page: tuple[Path, Path], browser: Browser) -> None:
    run, html = page
    said = next(e for e in read_events(run / "events.jsonl") if "utterance" in e)
    at = datetime.fromisoformat(said["time"])
    bubbles = "return [...document.querySelectorAll('.bubble')].map(b => [b.dataset.speaker, b.textContent])"
    show(browser, html, f"t={at.isoformat()}")
    assert [said["agent"], said["utterance"][:40]] in [[s, text[:40]] for s, text in browser.eval(f"(() => {{{bubbles}}})()")]
    show(browser, html, f"t={(at - timedelta(minutes=1)).isoformat()}")
    assert browser.eval(f"(() => {{{bubbles}}})()") == []


@needs_browser
def test_clicking_an_agent_shows_its_memories_and_day_plan(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    show(browser, html, "t=2023-02-13 08:30")
    names = [a["name"] for a in browser.eval("memstreamView.agents()")]
    isabella = browser.eval(f"memstreamView.agent({names.index('Isabella Rodriguez')})")
    browser.click(isabella["x"], isabella["y"])  # a real click on her marker
    settle(browser)
    panel = browser.eval("document.getElementById('panel').innerText")
    assert panel.startswith("Isabella Rodriguez") and "RECENT MEMORIES" in panel.upper()
    assert re.search(r"plan block 08:00–09:00: [^\n]+ \(Hobbs Cafe\)", panel)  # her routine's hour
    assert re.search(r"#\d+ · (observation|plan|identity|dialogue|thought) · importance \d+", panel)
    current = browser.eval("document.querySelector('.dayplan li.current').textContent")
    assert current.startswith("08:00–") and "Hobbs Cafe" in current  # the day plan of the time shown
    assert state(browser)["selected"] == names.index("Isabella Rodriguez")
    assert "Isabella Rodriguez" in [label["text"] for label in browser.eval("memstreamView.labels()")]


@needs_browser
def test_hovering_shows_an_agents_name_and_an_objects_state(page: tuple[Path, Path], browser: Browser) -> None:
    run, html = page
    t = START + timedelta(hours=1, minutes=30)
    show(browser, html, f"t={t:%Y-%m-%d %H:%M}&place=Hobbs Cafe")
    tip = "document.getElementById('tip').textContent"
    things = browser.eval("memstreamView.things()")
    machine = next(o for o in things if o["name"] == "coffee machine" and o["building"] == "Hobbs Cafe")
    browser.mouse("mouseMoved", machine["x"], machine["y"])
    states = [e["action"] for e in read_events(run / "events.jsonl")
              if not e["agent"] and e["location"] == "Hobbs Cafe" and e["action"].startswith("the coffee machine is ")
              and datetime.fromisoformat(e["time"]) <= t]
    assert states and browser.eval(tip) == f"coffee machine in the cafe counter: {states[-1].rsplit(' is ', 1)[1]}"
    here = next(a for a in browser.eval("memstreamView.agents()") if a["place"] == "Hobbs Cafe" and a["x"] is not None)
    browser.mouse("mouseMoved", here["x"], here["y"])
    assert browser.eval(tip).startswith(f"{here['name']}: ") and browser.eval(tip).endswith("(Hobbs Cafe)")


@needs_browser
def test_an_agent_is_found_and_followed_from_the_keyboard(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    show(browser, html, "t=2023-02-13 08:30")
    names = [a["name"] for a in browser.eval("memstreamView.agents()")]
    browser.eval("document.getElementById('find').focus()")
    browser.send("Input.insertText", {"text": "Klaus Mueller"})
    browser.key("Enter")
    browser.eval("document.getElementById('find').blur()")
    s = state(browser)
    assert s["selected"] == names.index("Klaus Mueller") and s["following"]


@needs_browser
def test_no_two_visible_labels_overlap_at_the_default_zoom(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    for fragment in ("", "t=2023-02-13 08:30&agent=Isabella Rodriguez"):
        show(browser, html, fragment)
        labels, stage = browser.eval("memstreamView.labels()"), browser.eval("memstreamView.stage()")
        texts = [label["text"] for label in labels]
        assert {"Oak Hill", "Town Square"} <= set(texts) and (fragment or "Hobbs Cafe" in texts), texts  # areas, the busiest building
        assert len(labels) >= 6 and len(texts) == len(set(texts))
        for i, a in enumerate(labels):
            assert a["font"] >= 11 and a["w"] > 0  # readable
            assert stage["x"] <= a["x"] and a["x"] + a["w"] <= stage["x"] + stage["w"] + 0.5  # inside the map
            assert stage["y"] <= a["y"] and a["y"] + a["h"] <= stage["y"] + stage["h"] + 0.5
            for b in labels[i + 1:]:
                apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"] or
                         a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])
                assert apart, (a, b)


@needs_browser
def test_zoom_and_pan_change_the_view_and_fit_returns_it(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    show(browser, html)
    fitted, stage = state(browser), browser.eval("memstreamView.stage()")
    assert not fitted["mini"]  # the whole town is in view: no minimap
    x, y = round(stage["x"] + stage["w"] * 0.3), round(stage["y"] + stage["h"] * 0.4)  # events land on whole pixels
    under = browser.eval(f"[({x} - {stage['x']} - memstreamView.state().W / 2) / memstreamView.state().scale + memstreamView.state().cx]")
    browser.wheel(x, y, -500)  # zoom in about the pointer
    zoomed = state(browser)
    assert zoomed["scale"] > fitted["scale"] * 1.5 and zoomed["mini"]
    kept = (x - stage["x"] - zoomed["W"] / 2) / zoomed["scale"] + zoomed["cx"]
    assert abs(kept - under[0]) < 0.5 / zoomed["scale"]  # the point under the pointer stays under it (to half a pixel)
    settle(browser)
    mini = browser.eval("(() => { const r = document.getElementById('mini').getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()")
    assert mini[2] > 0  # the minimap is shown: a click on its middle centres the view on the town's middle
    browser.click(mini[0] + mini[2] / 2, mini[1] + mini[3] / 2)
    centred = state(browser)
    assert centred["scale"] == zoomed["scale"] and abs(centred["cx"] - fitted["cx"]) < 0.6 and abs(centred["cy"] - fitted["cy"]) < 0.6
    zoomed = centred
    browser.drag(x, y, 120, -60)
    dragged = state(browser)
    assert dragged["cx"] == pytest.approx(zoomed["cx"] - 120 / zoomed["scale"], abs=1e-6)
    assert dragged["cy"] == pytest.approx(zoomed["cy"] + 60 / zoomed["scale"], abs=1e-6)
    browser.pinch(x, y, 2.0)  # two fingers apart
    assert state(browser)["scale"] > dragged["scale"] * 1.5
    browser.eval("document.getElementById('stage').focus()")
    before = state(browser)
    browser.key("-")
    browser.key("ArrowLeft", "ArrowLeft")
    keyed = state(browser)
    assert keyed["scale"] < before["scale"] and keyed["cx"] < before["cx"]
    fit = browser.eval("(() => { const r = document.getElementById('fit').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
    browser.click(*fit)
    back = state(browser)
    assert (back["scale"], back["cx"], back["cy"]) == pytest.approx((fitted["scale"], fitted["cx"], fitted["cy"]))
    browser.key("0")  # and from the keyboard: zoom in, then fit
    browser.key("+")
    assert state(browser)["scale"] > fitted["scale"]
    browser.key("0")
    assert state(browser)["scale"] == pytest.approx(fitted["scale"])


@needs_browser
def test_follow_keeps_the_agent_in_view_while_playing(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    d = data(html)
    # the agent whose walk in the run is longest: following it must move the view
    i, trip = max(((i, t) for i, trips in enumerate(d["trips"]) for t in trips), key=lambda it: it[1][1] - it[1][0])
    at = START + timedelta(seconds=trip[0] - 60)
    show(browser, html, f"t={at.isoformat()}&agent={d['agents'][i]['name']}")
    browser.eval("document.getElementById('stage').focus()")
    for _ in range(6):
        browser.key("+")  # close in: the agent would leave the view
    browser.key("f")
    browser.eval("document.getElementById('speed').value = '600'")
    seen, centres = [], set()
    browser.eval("memstreamView.play(true)")
    for _ in range(12):
        time.sleep(0.25)
        s, a, stage = state(browser), browser.eval(f"memstreamView.agent({i})"), browser.eval("memstreamView.stage()")
        assert s["following"] and a["x"] is not None
        seen.append(a["place"])
        centres.add((round(s["cx"], 3), round(s["cy"], 3)))
        assert stage["x"] <= a["x"] <= stage["x"] + stage["w"] and stage["y"] <= a["y"] <= stage["y"] + stage["h"]
    browser.eval("memstreamView.play(false)")
    assert any(p.startswith("on the way") for p in seen) and len(centres) > 3  # it walked, and the view went with it
    browser.drag(400, 300, 50, 0)  # a person's pan takes the view back
    assert not state(browser)["following"]


@needs_browser
def test_the_timeline_jumps_to_a_conversation_and_to_a_time(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    d = data(html)
    assert d["conversations"]
    show(browser, html)
    y = browser.eval("memstreamView.timelineY")
    talk = d["conversations"][len(d["conversations"]) // 2]
    browser.click(browser.eval(f"memstreamView.timelineX({talk[0]})") + 1, y + 22)  # on its mark
    assert state(browser)["now"] == talk[0]
    assert browser.eval("+document.getElementById('slider').value") == talk[0]
    half = d["end"] / 2
    browser.click(browser.eval(f"memstreamView.timelineX({half})"), y + 56)  # below the marks: that time
    there = state(browser)["now"]
    assert abs(there - half) <= d["end"] / 400
    browser.eval("document.getElementById('timeline').focus()")
    browser.key("]")  # the next conversation, from the keyboard
    assert state(browser)["now"] == min(c[0] for c in d["conversations"] if c[0] > there + 0.5)


@needs_browser
def test_a_screenshot_is_not_blank(page: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    _, html = page
    show(browser, html, "t=2023-02-13 08:00&click=Isabella Rodriguez")
    pixels = image.imread(browser.screenshot(tmp_path / "shot.png"))
    assert pixels.shape[:2] == (800, 1280) and pixels[..., :3].std() > 0.05


@needs_browser
def test_no_request_leaves_the_page(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    browser.send("Network.enable")
    try:
        show(browser, html, "t=2023-02-13 08:00&agent=Isabella Rodriguez")
        browser.wheel(500, 400, -300)
        browser.eval("new Promise(done => { memstreamView.play(true); setTimeout(() => { memstreamView.play(false); done(); }, 500); })", wait=True)
        asked = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    finally:
        browser.send("Network.disable")
    assert asked and all(u.startswith(("file:", "data:", "about:")) for u in asked), asked


@pytest.mark.slow
def test_the_page_is_self_contained_and_asks_for_nothing(page: tuple[Path, Path]) -> None:
    _, html = page
    text = html.read_text(encoding="utf-8")
    assert "default-src 'none'" in text  # the browser itself refuses any request the page might make
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?(https?:|//)""", text)
    d = data(html)
    assert len(d["agents"]) == 25 and d["fact"] == "Valentine's Day party"
    assert d["classes"] == list(CLASSES)


def test_the_page_names_no_place_or_resident_of_the_bundled_town() -> None:
    """The page's script must work for any town: everything it names comes from the data."""
    template = (ROOT / "memstream" / "view" / "template.html").read_text(encoding="utf-8")
    script = template.split('<script id="data"', 1)[1]
    for name in ("Smallville", "Hobbs", "Isabella", "Oak Hill", "Johnson Park", "Town Square", "Klaus"):
        assert name not in script


@pytest.mark.parametrize(("action", "location", "workplace", "expected"), [
    ("sleeping", "Lin family's house", None, "asleep"),
    ("talking with John Lin", "Hobbs Cafe", "Hobbs Cafe", "talking"),
    ("work as shopkeeper: in progress", "on the way to Harvey Oak Supply Store", None, "on the way"),
    ("have lunch: in progress", "Hobbs Cafe", "Hobbs Cafe", "eating"),
    ("serve customers at the cafe counter", "Hobbs Cafe", "Hobbs Cafe", "working"),
    ("open the pub and tend the bar", "The Rose and Crown Pub", "The Rose and Crown Pub", "working"),
    ("go to the Valentine's Day party", "Hobbs Cafe", "Hobbs Cafe", "other"),
    ("take a walk in the park", "Johnson Park", None, "other"),
    ("see a great play at the theater", "Johnson Park", None, "other"),  # "eat" only as a word's start
])
def test_activities_are_classed_for_their_colour(action: str, location: str, workplace: str | None, expected: str) -> None:
    assert CLASSES[activity_class(action, location, workplace)] == expected


@needs_browser
def test_an_unknown_agent_or_time_in_the_address_is_one_line_on_the_page(page: tuple[Path, Path], browser: Browser) -> None:
    _, html = page
    show(browser, html, "agent=Nobody")
    assert browser.eval("document.getElementById('error').textContent") == "no agent Nobody in this run"
    show(browser, html, "t=2031-01-01 00:00")
    assert browser.eval("document.getElementById('error').textContent").startswith("no time 2031-01-01 00:00 in this run")


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated town of LARGE_AGENTS for an hour after 06:00 (people waking and walking to work), and its page."""
    root = tmp_path_factory.mktemp("large")
    start_run(RunConfig(agents=LARGE_AGENTS, start=START, hours=1, embedder="hash"), root / "run", progress=False)
    assert main(["view", str(root / "run"), "-o", str(root / "page.html")]) == 0
    return root / "page.html"


@needs_browser
def test_a_large_page_plays_at_thirty_frames_a_second(large: Path, browser: Browser) -> None:
    """Measured by the page's own clock while it plays, fitted to the town and zoomed into its middle."""
    show(browser, large, "t=2023-02-13 06:40")
    assert len(browser.eval("memstreamView.agents()")) == LARGE_AGENTS and state(browser)["mini"] is False
    fitted = frame_rate(browser, 3)
    browser.eval("document.getElementById('stage').focus()")
    for _ in range(8):
        browser.key("+")
    assert state(browser)["mini"]  # a town larger than the view gets its minimap
    zoomed = frame_rate(browser, 3)
    assert fitted["fps"] >= LEAST_FPS and zoomed["fps"] >= LEAST_FPS, (fitted, zoomed)


@pytest.mark.slow
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
    """The run's page served with search (see :func:`serve_in_thread`)."""
    return serve_in_thread(page[0])


@pytest.mark.slow
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


def serve_in_thread(run: Path) -> str:
    """``run`` served on a free port of 127.0.0.1 (a daemon thread; ends with the tests), once it listens."""
    import socket
    import threading

    from memstream.view.serve import serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    threading.Thread(target=serve, args=(run,), kwargs={"port": port}, daemon=True).start()
    for _ in range(300):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return f"http://127.0.0.1:{port}"
        time.sleep(0.1)
    raise AssertionError("the server did not start")


def timed_get(url: str) -> tuple[float, bytes]:
    from urllib.request import urlopen

    started = time.perf_counter()
    body = urlopen(url).read()
    return time.perf_counter() - started, body


@pytest.mark.slow
def test_the_server_takes_an_iso_time_and_refuses_a_bad_one_in_one_400(served: str) -> None:
    from urllib.error import HTTPError

    base = f"{served}/recall?agent=Isabella%20Rodriguez&q=coffee&t="
    by_seconds = json.loads(timed_get(base + "7200")[1])
    two_hours_in = START + timedelta(hours=2)
    assert json.loads(timed_get(base + quote(two_hours_in.isoformat()))[1]) == by_seconds
    assert json.loads(timed_get(base + two_hours_in.isoformat())[1]) == by_seconds  # its "+" or "-" as typed
    utc = two_hours_in.astimezone(UTC).isoformat()
    assert json.loads(timed_get(base + utc)[1]) == by_seconds  # "+00:00" arrives as " 00:00": read back
    assert json.loads(timed_get(base + utc.replace("+00:00", "Z"))[1]) == by_seconds
    for t in ("2023-02-13T08:00:00", "2023-02-13T25:00:00-08:00", "tomorrow", "2023-02-20T08:00:00-08:00"):
        with pytest.raises(HTTPError) as bad:
            timed_get(base + quote(t))
        error = json.loads(bad.value.read())["error"]
        assert bad.value.code == 400 and len(error.splitlines()) == 1 and "float" not in error, (t, error)


@pytest.fixture(scope="module")
def small_minilm_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two agents for an hour with the run's default embedder (MiniLM, which loads a model: the slow part)."""
    run = tmp_path_factory.mktemp("minilm") / "run"
    start_run(RunConfig(start=START, hours=1, agents=2), run, progress=False)
    return run


@pytest.mark.slow
def test_a_search_is_fast_from_the_first_request(small_minilm_run: Path) -> None:
    """The model is loaded before the server listens, not on the first search (which took seconds)."""
    served = serve_in_thread(small_minilm_run)
    from memstream.sim import RunDir

    with RunDir.open(small_minilm_run) as run:
        agent = next(a for a in run.agents if run.stream.has(a))
    base = f"{served}/recall?agent={quote(agent)}&t=1800&q="
    times = [timed_get(base + quote(q))[0] for q in ("coffee", "the morning", "plans for today", "a walk")]
    assert times[0] < 0.5 and max(times) < 0.5, times
    assert times[0] < 0.1 + 3 * sorted(times[1:])[1], times  # the first no slower than the others


@needs_browser
def test_the_search_box_ranks_memories_in_the_browser(served: str, browser: Browser) -> None:
    browser.open(served + "/#" + quote("t=2023-02-13 08:30&click=Isabella Rodriguez&q=coffee", safe="=&"))
    results = ""
    for _ in range(50):
        results = browser.eval("(document.getElementById('results') || {}).innerText || ''")
        if "score" in results:
            break
        time.sleep(0.1)
    assert re.search(r"score [\d.]+ = recency [\d.]+ \+ importance [\d.]+ \+ relevance [\d.]+", results)
    bars = browser.eval("[document.querySelectorAll('#results .rec').length, document.querySelectorAll('#results .rel').length]")
    assert bars[0] == bars[1] >= 1  # a stacked bar per memory
