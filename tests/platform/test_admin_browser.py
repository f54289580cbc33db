"""The organisers' queue page in headless Chromium over the platform API served on 127.0.0.1: its workers, their
leases, a stuck submission, and the re-queue button taking the submission from its worker."""

from __future__ import annotations

import json

import pytest

from nlpbench.platform import queue as queues
from tests.platform.test_admin import STUCK, stuck

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
from tests.browser.test_demo_report import CHROMIUM, FLAGS  # noqa: E402 - after the skip when playwright is absent
from tests.web.test_browser import served  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
BUSY = "busy-worker"


def test_the_queue_page_shows_workers_leases_and_a_stuck_submission_and_requeues_it(arena, tmp_path):
    arena.queue("--time-budget", "120")
    late = stuck(arena, tmp_path)  # five hours in: past twice its two hours
    text = json.dumps(arena.exported("open", tmp_path))
    held = arena.submitted(dataset="open", predictions=text, predictionsName="p.json")
    assert queues.claim(arena.store, "default", BUSY, 3600) == held  # just claimed: held, not stuck
    with served(arena.api.app) as url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            context = browser.new_context(
                extra_http_headers={"X-API-Key": arena.keys["organiser"]}, java_script_enabled=False
            )
            page = context.new_page()
            answer = page.goto(f"{url}/api/v1/admin/queue.html")
            assert answer.status == 200 and page.locator("h1").inner_text() == "Queue administration"
            stuck_rows = page.locator("tr[id^=stuck-]")
            assert stuck_rows.count() == 1 and page.locator(f"#stuck-{late}").is_visible()
            assert STUCK in page.locator(f"#stuck-{late}").inner_text()
            leases = [
                row.split("\t") for row in page.locator("h2:has-text('Workers') + table tbody tr").all_inner_texts()
            ]
            assert sorted((row[0], row[1], row[-1]) for row in leases) == [
                (BUSY, str(held), "held"),
                (STUCK, str(late), "held"),
            ]

            with page.expect_navigation():
                page.locator(f"#stuck-{late} button", has_text="Re-queue").click()
            assert page.url == f"{url}/api/v1/admin/queue.html"  # sent back to the page, which now reads
            assert page.locator("tr[id^=stuck-]").count() == 0
            assert page.locator("h2:has-text('Stuck') + p").inner_text() == "None."
            leases = [
                row.split("\t") for row in page.locator("h2:has-text('Workers') + table tbody tr").all_inner_texts()
            ]
            assert [(row[0], row[1]) for row in leases] == [(BUSY, str(held))]  # the other worker's lease is untouched
            assert page.locator("h2:has-text('Waiting') + ul li").inner_text() == "default: 1"
            context.close()

            outsider = browser.new_context(extra_http_headers={"X-API-Key": arena.keys["team"]})
            denied = outsider.new_page().goto(f"{url}/api/v1/admin/queue.html")
            assert denied.status == 403
            outsider.close()
        finally:
            browser.close()
    shown = arena.shown(late, "organiser")
    assert (shown["status"], shown["reason"]) == (
        "RECEIVED",
        f"re-queued by organiser, taken from {STUCK}: it costs no quota",
    )
    assert not queues.renew(arena.store, late, STUCK, 60)  # the stuck worker has lost it
    assert queues.renew(arena.store, held, BUSY, 60)
