"""Take the leaderboard guide's screenshot (docs/images/leaderboard-task.png) in headless Chromium.

    PYTHONPATH=src:. python scripts/leaderboard_screenshot.py [docs/images/leaderboard-task.png]

The store is the one the web tests seed (tests/web/seeding.py: three teams' prediction files for ``date`` and
``phi`` on a public and a private dataset, scored by a worker); the page is the ``phi`` task's, whose table has
an overall column and a column per type for each dataset, in a 1,400-pixel window (Debian's chromium, driven by
Playwright; no browser is downloaded). The shot is the page's top: title, forest plot and table.
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path

from playwright.sync_api import sync_playwright
from tests.browser.test_demo_report import CHROMIUM, FLAGS
from tests.web.seeding import seed
from tests.web.test_browser import serving

from nlpbench.store import open_store

WIDTH = 1400


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        store = open_store(f"sqlite:///{scratch}/leaderboard.db")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the synthetic notes' age and profession have no NLP Sandbox array
            seed(store, Path(scratch))
        with serving(store) as url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(f"{url}/tasks/phi")
            assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH, "the table overflows the window"
            bottom = page.locator("#board").bounding_box()
            assert bottom is not None, "the leaderboard table is not shown"
            height = int(bottom["y"] + bottom["height"]) + 16
            page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": WIDTH, "height": height})
            browser.close()
        store.close()
    print(f"{out}: {WIDTH} × {height}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images/leaderboard-task.png"))
