"""The demo's static leaderboard in headless Chromium: home → task → submission through the written files."""

import re
import shutil

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from typer.testing import CliRunner

    from nlpbench.cli import app

    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(app, ["demo", "--notes", "12", "--tools", "phi", "--out", str(out), "--no-serve"])
    assert result.exit_code == 0, result.stderr
    return out / "site" / "index.html"


@pytest.fixture(scope="module")
def page(site):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        requested = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(site.as_uri())
        yield page
        assert requested and all(url.startswith("file://") for url in requested)  # pages and stylesheet, no network
        browser.close()


def test_home_leads_to_the_pooled_task_and_a_submission_with_its_sites(page, site):
    page.locator("a", has_text="phi").first.click()
    page.wait_for_url((site.parent / "tasks" / "phi.html").as_uri())
    board = page.locator("table.board")
    assert board.is_visible() and board.locator("span.rank").first.inner_text() == "#1"
    assert re.fullmatch(r"\[[01]\.\d{3}, [01]\.\d{3}\]", board.locator("span.ci").first.inner_text())
    assert board.locator("thead th", has_text="site north").is_visible()  # a column per data site
    assert board.locator("thead th", has_text="site south").is_visible()
    assert page.locator("#forest svg").is_visible()  # the forest plot of the pooled scores
    assert page.evaluate("getComputedStyle(document.body).fontFamily")  # the local stylesheet applies
    board.locator("td.num a").first.click()
    page.wait_for_url((site.parent / "submissions" / "1.html").as_uri())
    assert page.locator("h1").inner_text() == "Submission 1"
    sites = page.locator("#sites table tbody tr")
    assert sites.count() >= 2 and sites.first.is_visible()
    assert sites.first.locator("td").first.inner_text().startswith("north")
    assert page.locator("li.context").count() == 0  # the notes stayed at their sites: no error shown in context


def test_the_static_site_sorts_and_filters_its_tables_without_a_server(page, site):
    page.goto((site.parent / "tasks" / "phi.html").as_uri())
    board = page.locator("table.board")
    rows = board.locator("tbody tr")
    assert rows.count() >= 1
    heading = board.locator("thead th", has_text="tool").first
    heading.click()  # descending
    assert page.url == (site.parent / "tasks" / "phi.html").as_uri()  # no navigation: sorted in the page
    assert heading.get_attribute("aria-sort") == "descending"
    page.goto(site.as_uri())
    tasks = page.locator("table#tasks")
    names = tasks.locator("tbody tr td:first-child")
    tasks.locator("thead th", has_text="task").click()
    down = names.all_inner_texts()
    assert down == sorted(down, reverse=True) and len(down) > 3
    tasks.locator("thead th", has_text="task").click()
    assert names.all_inner_texts() == sorted(down)
    scored = tasks.locator("thead th", has_text="scored submissions")
    scored.click()
    counts = [int(text) for text in tasks.locator("tbody tr td:nth-child(3)").all_inner_texts()]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0
    page.fill("input.filter", "PERSON_name")  # case does not matter
    shown = [row for row in tasks.locator("tbody tr").all() if row.is_visible()]
    assert [row.locator("td").first.inner_text() for row in shown] == ["person_name"]
    page.fill("input.filter", "")
    assert all(row.is_visible() for row in tasks.locator("tbody tr").all())


def test_the_static_sites_every_submission_link_works_without_a_server(page, site):
    teams = (site.parent / "tasks" / "phi.html").as_uri()
    page.goto(teams)
    assert "(every submission)" not in page.locator("#forest").inner_text()
    page.locator("#forest a", has_text="Every submission").click()
    page.wait_for_url((site.parent / "tasks" / "phi-all.html").as_uri())
    assert "(every submission)" in page.locator("#forest svg").get_attribute("aria-label")
    assert page.locator("#forest g.row").count() >= 1 and page.locator("table.board").is_visible()
    page.locator("#forest a", has_text="One row per team").click()
    page.wait_for_url(teams)


def test_the_static_sites_latest_pick_is_a_page_of_its_own_and_its_links_stay_on_it(page, site):
    tasks = site.parent / "tasks"
    page.goto((tasks / "phi.html").as_uri())
    assert "best scored submission" in page.locator("main").inner_text()
    page.locator("a", has_text="show latest").click()
    page.wait_for_url((tasks / "phi-latest.html").as_uri())
    assert "latest scored submission" in page.locator("main").inner_text()
    board = page.locator("table.board")
    assert board.locator("span.rank").first.inner_text() == "#1"
    sorting = board.locator("thead th a")
    assert sorting.count() >= 3 and set(sorting.evaluate_all("links => links.map(a => a.href)")) == {page.url}
    heading = board.locator("thead th", has_text="tool").first
    heading.click()  # sorted in the page, on the latest pick
    assert page.url == (tasks / "phi-latest.html").as_uri() and heading.get_attribute("aria-sort") == "descending"
    exports = page.locator("p.export a").evaluate_all("links => links.map(a => a.href)")
    assert exports == [(tasks / name).as_uri() for name in ("phi-latest.csv", "phi-latest.json")]
    page.locator("#forest a", has_text="Every submission").click()
    page.wait_for_url((tasks / "phi-latest-all.html").as_uri())
    assert "latest scored submission" in page.locator("main").inner_text()
    assert "(every submission)" in page.locator("#forest svg").get_attribute("aria-label")
    page.locator("#forest a", has_text="One row per team").click()
    page.wait_for_url((tasks / "phi-latest.html").as_uri())
    page.locator("a", has_text="show best").click()
    page.wait_for_url((tasks / "phi.html").as_uri())
