"""``nlpbench leaderboard serve`` as a user starts it: a real server on 127.0.0.1, then stopped."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

import httpx
from sqlalchemy import delete, select

from nlpbench.store import open_store
from nlpbench.store.ranks import RankGroups


def test_serve_prints_its_url_and_serves_the_seeded_store(seeded, tmp_path):
    store, ids = seeded
    url = store.url
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nlpbench",
                "leaderboard",
                "serve",
                "--db",
                url,
                "--port",
                "0",
                "--baseline",
                "delta",
            ],
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
        forest = httpx.get(f"{base}tasks/date?sort=closed-notes", timeout=60).text
        baselines = re.findall(r'<g class="row baseline"[^>]*><title>([^<]*)', forest)
        assert len(baselines) == 1 and " · delta (baseline)" in baselines[0]
    finally:
        server.terminate()
        server.wait(30)


def test_serve_stores_the_rank_groups_of_new_results_in_the_background(seeded, tmp_path):
    """Pages never rank: a column whose results were never ranked shows no rank until the server's own
    refresh has stored its groups."""
    shared, _ = seeded
    copy = tmp_path / "leaderboard.db"  # a copy: the package's other tests read the shared store's rank groups
    with (
        closing(sqlite3.connect(shared.url.removeprefix("sqlite:///"))) as source,
        closing(sqlite3.connect(copy)) as target,
    ):
        source.backup(target)
    store = open_store(f"sqlite:///{copy}")
    with store.session() as session:
        session.execute(delete(RankGroups))
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "nlpbench", "leaderboard", "serve", "--db", store.url, "--port", "0"]
    with log.open("w") as stderr:
        server = subprocess.Popen([*command, "--refresh", "0.5"], stderr=stderr, env=os.environ.copy())
    try:
        deadline = time.monotonic() + 120
        while not (found := re.search(r"http://127\.0\.0\.1:(\d+)/", log.read_text())):
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        while True:
            rows = httpx.get(f"{found.group(0)}tasks/date.json", timeout=60).json()
            if all(row["open-notes rank"] for row in rows if row["open-notes"] is not None):
                break
            assert time.monotonic() < deadline, rows
            time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(30)
    with store.session(readonly=True) as session:
        assert session.scalars(select(RankGroups)).first() is not None
    store.close()


def test_an_unknown_pick_is_one_line_and_exit_2(cli):
    result = cli("leaderboard", "serve", "--pick", "worst", "--db", "sqlite:///unused.db")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["nlpbench: error: unknown --pick 'worst'; known: best, latest"]
