"""The tool's API docs page in headless Chromium: it renders, and no request leaves the tool's own address."""

import shutil

import pytest

from nlpbench.api.tool import create_app
from tests.toolkit import RegexPhi, served

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # fmt: skip


def test_the_docs_page_works_offline():
    with served(create_app(RegexPhi())) as url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page()
            requested: list[str] = []
            page.on("request", lambda request: requested.append(request.url))
            failed: list[str] = []
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.goto(f"{url}/ui")
            page.locator(".swagger-ui .info .title").wait_for(timeout=20_000)
            assert "regex-phi" in page.locator(".swagger-ui .info .title").inner_text()
            page.locator("#operations-TextDateAnnotation-createTextDateAnnotations").wait_for(timeout=20_000)
            page.wait_for_load_state("networkidle")
        finally:
            browser.close()
    assert f"{url}/api/v1/openapi.json" in requested and f"{url}/api/v1/ui/assets/swagger-ui-bundle.js" in requested
    assert [u for u in requested if not u.startswith(f"{url}/")] == [] and failed == []
