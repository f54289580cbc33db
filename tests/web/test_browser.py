"""The leaderboard in headless Chromium over a real server on 127.0.0.1: navigate, sort, see intervals and plots."""

from __future__ import annotations

import contextlib
import threading
import time
from urllib.parse import urlsplit

import pytest

from nlpbench.cli.serve import listen
from nlpbench.web.app import create_app
from tests.web.seeding import CANARY, PRIVATE, PUBLIC

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
from tests.browser.test_demo_report import CHROMIUM, FLAGS  # noqa: E402 - after the skip when playwright is absent

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


@contextlib.contextmanager
def serving(store):
    """The site over ``store`` served on 127.0.0.1 in a thread: its base URL."""
    with served(create_app(store)) as url:
        yield url


@contextlib.contextmanager
def served(app):
    """``app`` served on 127.0.0.1 in a thread: its base URL."""
    import uvicorn

    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(10)
    sock.close()


@pytest.fixture(scope="module")
def site(seeded):
    store, _ = seeded
    with serving(store) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    page.requested = []
    page.on("request", lambda request: page.requested.append(request.url))
    yield page
    context.close()


def _no_canary(page) -> None:
    assert CANARY.split()[0] not in page.content(), page.url


def test_home_to_task_to_submission_with_intervals_plots_and_sorting(page, site, seeded):
    page.goto(site + "/")
    _no_canary(page)
    page.click('a[href="/tasks/date"]')
    assert page.url == site + "/tasks/date"
    _no_canary(page)
    assert page.locator("#board .ci").first.inner_text().startswith("[0.")
    assert page.locator("#board .rank").first.inner_text() == "#1"
    assert page.locator("#best-over-time svg").is_visible()
    page.click(f'#board th a:text-is("{PUBLIC}")')  # sort by the public dataset: best first
    page.click(f'#board th a:text-is("{PUBLIC}")')  # again: worst first
    assert "order=asc" in page.url
    teams = page.locator("#board tbody tr td:first-child").all_inner_texts()
    assert teams[:3] == ["gamma", "beta", "alpha"]
    assert page.locator(f'#board th[aria-sort="ascending"] a:text-is("{PUBLIC}")').count() == 1
    page.locator("#board tbody tr", has_text="alpha").locator("td.num a").nth(1).click()  # alpha's public cell
    _, ids = seeded
    assert page.url == f"{site}/submissions/{ids[f'alpha/date/{PUBLIC}']}"
    _no_canary(page)
    assert page.locator("figure.plot svg").first.is_visible()
    token = page.locator("table.scores tr", has_text="token").first.inner_text()
    assert "[0." in token
    assert page.locator("li.context mark").first.inner_text().strip()  # public: errors in context
    assert {urlsplit(url).hostname for url in page.requested} == {"127.0.0.1"}


def test_private_pages_show_counts_never_note_text(page, site, seeded):
    _, ids = seeded
    for key, submission in ids.items():
        page.goto(f"{site}/submissions/{submission}")
        _no_canary(page)
        if key.endswith(PRIVATE):
            assert page.locator(".private").first.is_visible()
            assert page.locator("li.context").count() == 0
    page.goto(f"{site}/teams/delta")
    _no_canary(page)
    page.goto(f"{site}/submissions/424242")
    assert page.locator("h1").inner_text() == "Not found"
    assert {urlsplit(url).hostname for url in page.requested} == {"127.0.0.1"}


def test_the_pages_render_and_sort_under_their_content_security_policy(browser, site, seeded):
    """The policy forbids inline scripts and styles: the stylesheet and the plots (SVG presentation attributes,
    not styles) must still apply, with no violation reported, JavaScript on or off."""
    _, ids = seeded
    for scripts in (False, True):
        context = browser.new_context(viewport={"width": 1400, "height": 900}, java_script_enabled=scripts)
        page = context.new_page()
        reported: list[str] = []
        page.on("console", lambda message, reported=reported: reported.append(message.text))
        for path in ("/", "/tasks/date", f"/submissions/{ids[f'alpha/phi/{PUBLIC}']}", "/teams/alpha", "/nowhere"):
            answer = page.goto(site + path)
            assert "frame-ancestors 'none'" in answer.headers["content-security-policy"], path
            assert page.locator("header a.brand").is_visible()
        page.goto(site + "/tasks/date")
        page.click(f'#board th a:text-is("{PUBLIC}")')
        page.click(f'#board th a:text-is("{PUBLIC}")')
        assert page.locator("#board tbody tr td:first-child").all_inner_texts()[:3] == ["gamma", "beta", "alpha"]
        if scripts:  # computed styles are read by a script of the test, not of the page
            header = page.locator("header").evaluate("element => getComputedStyle(element).backgroundColor")
            assert header == "rgb(31, 78, 121)"  # site.css applied
            plot = page.locator("#best-over-time svg")
            assert plot.bounding_box()["height"] > 100
            fills = plot.locator("path").evaluate_all("paths => paths.map(p => getComputedStyle(p).fill)")
            assert "rgb(255, 255, 255)" in fills  # the plot's background, from a presentation attribute
        violations = [text for text in reported if "Content Security Policy" in text]
        assert violations == [], violations
        context.close()


LONG_TEAM = "t" * 60  # the longest team name the store takes
LONG_TOOL = "a-tool-whose-prediction-file-has-a-name-far-longer-than-any-column-should-be-wide.json"


@pytest.fixture(scope="module")
def long_site(tmp_path_factory):
    """A site over a store seeded as the others, plus a PHI submission (a column per type) by a team and
    tool with the longest names."""
    import warnings

    from nlpbench.platform import queue
    from nlpbench.platform.worker import Worker
    from nlpbench.store import open_store
    from tests.web.seeding import seed

    scratch = tmp_path_factory.mktemp("long")
    store = open_store(f"sqlite:///{scratch}/long.db")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed(store, scratch)
        predictions = (scratch / "predictions.json").read_text(encoding="utf-8")
        request = queue.Request(team=LONG_TEAM, task="phi", dataset=PRIVATE, predictions=predictions,
                                predictions_name=LONG_TOOL)  # fmt: skip
        queue.submit(store, request)
        Worker(store, poll=0.05, lease=30).run(until_idle=True)
    with serving(store) as url:
        yield url
    store.close()


@pytest.mark.parametrize("path", ["/", "/tasks/phi", "/tasks/phi?rows=all", "/tasks/date"])
def test_pages_fit_a_1400_pixel_window_with_the_longest_names(page, long_site, path):
    page.goto(long_site + path)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    if path.startswith("/tasks/phi"):
        assert page.locator("#board td.name", has_text=LONG_TOOL[:20]).is_visible()
        forest = page.locator("#forest svg")
        assert forest.is_visible() and forest.locator("circle.estimate").count() >= 4
        assert forest.bounding_box()["width"] <= 1400
