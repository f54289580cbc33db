"""``nlpbench leaderboard serve`` as a user starts it: a real server on 127.0.0.1, then stopped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import httpx


def test_serve_prints_its_url_and_serves_the_seeded_store(seeded, tmp_path):
    store, ids = seeded
    url = store.url
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-m", "nlpbench", "leaderboard", "serve", "--db", url, "--port", "0"],
            stderr=stderr,
            env=os.environ.copy(),
        )
    try:
        deadline = time.monotonic() + 120
        while not (found := re.search(r"http://127\.0\.0\.1:(\d+)/", log.read_text())):
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        base = found.group(0)
        page = httpx.get(f"{base}submissions/{ids['alpha/date/open-notes']}", timeout=60)
        assert page.status_code == 200 and "<h1>Submission" in page.text
        assert httpx.get(f"{base}tasks/nothing", timeout=60).status_code == 404
    finally:
        server.terminate()
        server.wait(30)


def test_an_unknown_pick_is_one_line_and_exit_2(cli):
    result = cli("leaderboard", "serve", "--pick", "worst", "--db", "sqlite:///unused.db")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["nlpbench: error: unknown --pick 'worst'; known: best, latest"]
