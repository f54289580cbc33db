"""The demo's HTML report in headless Chromium: every leaderboard number leads to its breakdown."""

import shutil

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from typer.testing import CliRunner

    from nlpbench.cli import app

    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(app, ["demo", "--notes", "20", "--tools", "phi", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    return out / "report.html"


@pytest.fixture(scope="module")
def page(report):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        page.goto(report.as_uri())
        yield page
        browser.close()


def test_a_leaderboard_f1_links_to_its_breakdown(page):
    link = page.locator("table.board").first.locator('a[href="#phi-location"]')
    shown = link.inner_text()
    link.click()
    assert page.evaluate("location.hash") == "#phi-location"
    heading = page.locator("#phi-location")
    assert heading.is_visible() and heading.inner_text() == "phi · location"
    token_row = page.locator("#phi-location + table tr", has_text="token")
    assert f"{float(shown):.3f}" in token_row.inner_text()  # the same F1, from the breakdown table


def test_subtypes_open_and_errors_show_their_context(page):
    details = page.locator("#phi-location ~ details").first
    assert not details.locator("table").is_visible()
    details.locator("summary").click()
    assert details.locator("table").is_visible()
    assert details.locator("tr", has_text="city").count() >= 2  # strict, relaxed and token rows for city
    marked = page.locator("li.context mark").first
    assert marked.is_visible() and marked.inner_text().strip()
