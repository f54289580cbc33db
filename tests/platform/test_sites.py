"""Data sites: one centre and three sites on this machine, a tool submitted once and run where the notes are.

The centre holds no note. Each site is a data site as the NLP Sandbox's were: its own store (two SQLite files,
one PostgreSQL schema), its own data node (``nlpbench datanode serve``, a process of its own for the whole test)
and its own worker and sandbox (``nlpbench site serve``, processes of their own on the same store). The site's
organiser loads its synthetic notes and gold through its data node, as NLP Sandbox sites did: patient bundles
(``nlpbench synth --format sandbox-seed``) pushed with the NLP Sandbox's own client library, call for call as
its ``push_dataset.py`` does (:func:`tests.datanode.server.push_bundles`); the dataset the node creates is
version 1, the version the challenge names. Once the run is done, the organiser reads the run's predictions
through the node and scores them against the gold there: the counts are the ones the site sent.
Every byte a site sends the centre goes through a proxy that keeps it; no note's id nor any of its text may be
in them, nor the address of a site's data node. One site is killed mid-run (once its data node serves some of
the run's predictions) and served again: it goes on. A result of a dataset whose content changed is refused in
one line.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, select

from nlpbench.api.platform import create_app
from nlpbench.formats.datanode import DataNodeClient, StoreURL, read_notes
from nlpbench.platform.scoring import ensure_intervals
from nlpbench.python_api import score
from nlpbench.store import open_store
from nlpbench.store.intervals import ResultInterval, of_result
from nlpbench.store.sites import Site, SiteRun
from nlpbench.store.submissions import Result, Submission
from nlpbench.web.app import create_app as create_web_app
from tests.datanode import server as datanode
from tests.store.backends import database_url
from tests.toolkit import served

COMMAND = f"{sys.executable} -m nlpbench serve -a date --port 8080"
SITES = {"alpha": ("sqlite", 11, 6), "beta": ("sqlite", 12, 9), "gamma": ("postgresql", 13, 40)}
CHALLENGE = """
name: sites-2026
phases:
  - name: main
    tasks: [date]
    datasets: [notes@1]
    queue: default
    opens: 2026-01-01T00:00:00Z
    closes: 2099-01-01T00:00:00Z
    kinds: [command]
"""
#: The date annotator, a quarter of a second per note: slow enough for a site to be killed mid-run.
SLOW_TOOL = """
import asyncio
import uvicorn
from nlpbench.cli.serve import build_app

app = build_app("date", max_body_bytes=2**20, cache_bytes=0)


async def slow(scope, receive, send):
    if scope["type"] == "http" and scope["path"].startswith("/api/v1/text"):
        await asyncio.sleep(0.25)
    await app(scope, receive, send)


uvicorn.run(slow, host="127.0.0.1", port=8080, log_level="warning")
"""


class Capture:
    """A TCP proxy to ``target`` on a free port of 127.0.0.1, keeping every byte its clients send."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.sent = target, bytearray()
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, kept: bool) -> None:
        try:
            while data := source.recv(65536):
                if kept:
                    with self.lock:
                        self.sent += data
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()


@contextmanager
def sites(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Each site's store URL (of the backend :data:`SITES` names), empty."""
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(database_url(backend, tmp_path / name)) for name, (backend, *_) in SITES.items()
        }


@contextmanager
def data_nodes(stores: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], dict[str, str]]]:
    """Each site's data node (``nlpbench datanode serve`` on its store), started together, stopped at the end:
    yields a function that waits until each answers and gives their API URLs (meanwhile, other work goes on)."""
    started = {name: datanode.start(url, tmp_path / f"{name}-node.log") for name, url in stores.items()}

    def answering() -> dict[str, str]:
        for name, (api, process) in started.items():
            datanode.ready(api, process, tmp_path / f"{name}-node.log")
        return {name: api for name, (api, _) in started.items()}

    try:
        yield answering
    finally:
        for _, process in started.values():
            datanode.stop(process)


def writing(tmp_path: Path) -> dict[str, tuple[Path, subprocess.Popen]]:
    """Each site's organiser writes its notes as patient bundles (``nlpbench synth --format sandbox-seed``), the
    three at once: each site's file and the process writing it."""
    started = {}
    for name, (_, seed, notes) in SITES.items():
        path = tmp_path / f"{name}.json"
        command = ["synth", "--notes", notes, "--seed", seed, "--format", "sandbox-seed", path]
        process = subprocess.Popen([sys.executable, "-m", "nlpbench", *map(str, command)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        started[name] = path, process
    return started


def loaded(api: str, bundles: Path, written: subprocess.Popen) -> None:
    """Once ``written`` has written them, a site's organiser pushes its patient bundles through its data node as
    dataset ``notes`` (and its first 3 notes as ``notes-subset``, the notes a tool's reproducibility is checked
    on)."""
    _, said = written.communicate(timeout=300)
    assert written.returncode == 0, said
    datanode.push_bundles(api, "notes", bundles)
    datanode.push_bundles(api, "notes-subset", bundles, notes=3)
    # a dataset created through the node is version 1 (its create request names none): the challenge's notes@1
    assert httpx.get(f"{api}/datasets/notes", timeout=10).json()["version"] == "1"


def predicted(api: str) -> dict[str, int]:
    """The annotation stores of dataset ``notes`` a site's data node serves, but its gold: how many records each
    holds."""
    stores = f"{api}/datasets/notes/annotationStores"
    with httpx.Client(timeout=10) as node:
        listed = node.get(stores, params={"limit": 50}).raise_for_status().json()["annotationStores"]
        names = [found["name"].rsplit("/", 1)[1] for found in listed]
        pages = {name: node.get(f"{stores}/{name}/annotations", params={"limit": 10}) for name in names}
    pages.pop("goldstandard")
    return {name: page.raise_for_status().json()["totalResults"] for name, page in pages.items()}


def nlpbench(*args: object, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nlpbench", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def texts(api: str) -> list[str]:
    """What of a site's notes must never leave it: each note's id, and every piece of 24 characters of its text
    (read through the site's data node)."""
    with DataNodeClient(api) as node:
        notes = list(read_notes(StoreURL(api, "notes", "fhirStores", "evaluation"), node))
    found = [note.id for note in notes]
    found += [note.text[i : i + 24] for note in notes if note.text for i in range(0, max(len(note.text) - 24, 1), 24)]
    return [text for text in found if len(text) >= 8]


@pytest.fixture
def centre(tmp_path):
    url = f"sqlite:///{tmp_path / 'centre.db'}"
    opened = open_store(url)
    try:
        with served(create_app(opened)) as base:
            port = int(base.rsplit(":", 1)[1])
            capture = Capture(("127.0.0.1", port))
            try:
                yield url, opened, f"http://127.0.0.1:{capture.port}", capture
            finally:
                capture.close()
    finally:
        opened.close()


def test_a_tool_submitted_once_is_run_at_every_site_and_only_counts_come_back(centre, tmp_path):
    url, opened, central, capture = centre
    tool = tmp_path / "tool"
    tool.mkdir(mode=0o755)
    (tool / "slow.py").write_text(SLOW_TOOL)
    (tool / "slow.py").chmod(0o644)
    bundles = writing(tmp_path)  # the sites write their notes and start their data nodes while the centre is set up
    with sites(tmp_path) as stores, data_nodes(stores, tmp_path) as answering:
        keys = {}
        for name in SITES:
            added = nlpbench("site", "add", name, "--dataset", "notes", "--db", url)
            assert added.returncode == 0, added.stderr
            keys[name] = added.stdout.strip()
        (tmp_path / "challenge.yaml").write_text(CHALLENGE)  # one challenge over the three sites
        for made in (nlpbench("challenge", "create", tmp_path / "challenge.yaml", "--db", url),
                     nlpbench("challenge", "team", "team-a", "--contact", "a@example.org", "--db", url)):  # fmt: skip
            assert made.returncode == 0, made.stderr
        command = f"{sys.executable} {tool / 'slow.py'}"
        submitted = nlpbench("submit", "--challenge", "sites-2026", "--phase", "main", "--team", "team-a",
                             "--task", "date", "--dataset", "notes", "--command", command, "--db", url)  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
        submission = int(submitted.stdout)
        apis = answering()
        for name, (path, written) in bundles.items():
            loaded(apis[name], path, written)
        serving = ("--until-idle", "--poll", "0.1", "--beat", "0.2", "--lease", "2", "--runtime", tool)

        def serve(name: str, *more: str) -> subprocess.CompletedProcess:
            return nlpbench("site", "serve", "--central", central, "--key", keys[name], "--db", stores[name],
                            *serving, *more)  # fmt: skip

        held = serve("alpha", "--approve")  # alpha's organiser approves each result before it leaves
        assert held.returncode == 0, held.stderr
        run = runs_of(opened, submission)["alpha"]
        assert run.status == "HELD" and run.reports is None
        assert f"run {run.id}: SCORED, held until approved (nlpbench site approve {run.id})" in held.stderr
        assert nlpbench("site", "jobs", "--db", stores["alpha"]).stdout.split()[-2:] == ["held", central]
        approved = nlpbench("site", "approve", run.id, "--db", stores["alpha"])
        assert approved.returncode == 0 and "approved; site serve sends it" in approved.stdout
        sent = serve("alpha", "--approve")
        assert sent.returncode == 0, sent.stderr
        assert f"run {run.id}: SCORED sent; the submission is ANNOTATING at the centre" in sent.stderr
        beta = serve("beta", "--totals-only")  # beta sends each type's totals, no per-document counts
        assert beta.returncode == 0, beta.stderr
        killed(["site", "serve", "--central", central, "--key", keys["gamma"], "--db", stores["gamma"], *serving],
               stores["gamma"], apis["gamma"])  # fmt: skip
        finished = serve("gamma")
        assert finished.returncode == 0, finished.stderr
        assert "SCORED sent; the submission is SCORED at the centre" in finished.stderr

        with opened.session(readonly=True) as session:
            shown = session.get_one(Submission, submission)
            result = session.scalars(select(Result).where(Result.submission_id == submission)).one()
        runs = runs_of(opened, submission)
        assert shown.status == "SCORED", shown.reason
        assert [run.status for run in runs.values()] == ["RETURNED"] * 3
        pooled_row = next(row for row in result.scores["date"] if row["metric"] == "token")
        for field in ("tp", "fp", "fn"):  # the pooled counts are the sites' counts added up
            at_sites = [
                next(r for r in run.reports["date"]["scores"] if r["metric"] == "token") for run in runs.values()
            ]
            assert pooled_row[field] == sum(row[field] for row in at_sites)
        assert result.reproducibility["sites"]["gamma"]["notes"] == SITES["gamma"][2]
        assert [made["totalsOnly"] for made in result.reproducibility["sites"].values()] == [False, True, False]
        assert runs["beta"].reports["date"]["perDocument"] == []
        shown_pages(opened, submission)
        board = nlpbench("challenge", "leaderboard", "sites-2026", "main", "--format", "json", "--db", url)
        assert board.returncode == 0 and "team-a" in board.stdout, board.stderr
        assert recomputed(opened, submission, result.id)
        rescored = nlpbench("rescore", submission, "--profile", "nlpsandbox", "--db", url)
        assert (rescored.returncode, rescored.stderr) == (2, (
            f"nlpbench: error: submission {submission} was run at data sites: this store holds their counts, not its "
            "predictions, so it cannot be scored again here\n"
        ))  # fmt: skip

        for name, api in apis.items():  # each site's organiser reads the run at its data node, scores it there
            assert predicted(api) == {"submission-1": SITES[name][2]}
            stores_url = f"{api}/datasets/notes/annotationStores"
            report = score("sandbox", f"{stores_url}/goldstandard", f"{stores_url}/submission-1",
                           annotation_type="date")  # fmt: skip
            sent = next(row for row in runs[name].reports["date"]["scores"] if row["metric"] == "token")
            assert {field: report.score("token")[field] for field in ("tp", "fp", "fn")} == {
                field: sent[field] for field in ("tp", "fp", "fn")
            }

        kept = bytes(capture.sent).decode("utf-8", "replace")
        assert kept.count("/result HTTP/1.1") == 3  # the proxy saw every site's result
        for name, api in apis.items():
            private = texts(api)
            assert len(private) > SITES[name][2]
            for text in private:
                assert text not in kept, f"a note of site {name} reached the centre"
            port = api.split(":")[2].split("/")[0]
            for address in (f"127.0.0.1:{port}", f"localhost:{port}"):  # nor where its data node is
                assert address not in kept, f"the data node of site {name} was named to the centre"


def recomputed(opened, submission: int, result_id: int) -> bool:
    """Whether a pooled result's intervals, computed again (as for a result stored without them), are the ones
    stored with it: resampled within each site again."""

    def bounds(session) -> list[tuple]:
        return [(i.annotation_type, i.metric, i.field, i.low, i.high) for i in of_result(session, result_id)]

    with opened.session() as session:
        stored = bounds(session)
        session.execute(delete(ResultInterval).where(ResultInterval.result_id == result_id))
    with opened.session() as session:
        assert ensure_intervals(session, submission_id=submission) == 1
        return bounds(session) == stored


#: One document's counts of one metric, as a site sends them.
COUNTS = {"metric": "token", "tp": 1, "fp": 0, "fn": 1}


def scored(**changed: object) -> dict:
    """A site's SCORED result for task ``date`` (one document, :data:`COUNTS`), with the fields ``changed``."""
    body = {
        "status": "SCORED",
        "contentHash": "a" * 64,
        "notes": 1,
        "nlpbench": "0",
        "reports": {"date": {"scores": [dict(COUNTS)], "perDocument": [{"document": "d1", **COUNTS}]}},
    }
    return {**body, **changed}


def runs_of(opened, submission: int) -> dict[str, SiteRun]:
    """The centre's run of ``submission`` at each site, by site name."""
    with opened.session(readonly=True) as session:
        query = (
            select(Site.name, SiteRun).join(Site, Site.id == SiteRun.site_id).where(SiteRun.submission_id == submission)
        )
        return dict(sorted((name, run) for name, run in session.execute(query)))


def shown_pages(opened, submission: int) -> None:
    """The task's leaderboard has a column per site beside the pooled score; the submission's page, a row per site."""
    with TestClient(create_web_app(opened)) as client:
        pages(client, submission)


def pages(client: TestClient, submission: int) -> None:
    board = client.get("/tasks/date").text
    for name in SITES:
        assert f"site {name}</th>" in board
    exported = client.get("/tasks/date.json").json()
    assert all(isinstance(exported[0][f"site {name}"], float) for name in SITES)
    assert exported[0]["site gamma ci_low"] <= exported[0]["site gamma"] <= exported[0]["site gamma ci_high"]
    assert exported[0]["site beta ci_low"] is None  # totals only: no interval of its own
    assert "beta sent totals only, no per-document counts" in board
    page = client.get(f"/submissions/{submission}").text
    assert '<section class="sites" id="sites">' in page and page.count("RETURNED") >= 3
    sites = client.get(f"/submissions/{submission}.json").json()["sites"]
    assert [site["site"] for site in sites] == list(SITES) and all(site["values"] for site in sites)


def killed(command: list, url: str, api: str) -> None:
    """``nlpbench COMMAND`` (a site serving) runs until the site's data node ``api`` serves some notes'
    annotations its worker stored in the site's store ``url`` meanwhile, and is killed (SIGKILL, with its tool)."""
    process = subprocess.Popen([sys.executable, "-m", "nlpbench", *map(str, command)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    opened = open_store(url)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if any(predicted(api).values()):
                break
            time.sleep(0.2)
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        with opened.session(readonly=True) as session:
            left = session.scalars(select(Submission)).one()
        assert left.status == "ANNOTATING" and 0 < left.notes_done < left.notes_total
    finally:
        opened.close()


def test_a_site_key_reaches_its_own_runs_only_and_a_changed_dataset_is_refused(centre):
    url, opened, central, _ = centre
    alpha = nlpbench("site", "add", "alpha", "--dataset", "notes", "--db", url).stdout.strip()
    beta = nlpbench("site", "add", "beta", "--dataset", "notes", "--db", url).stdout.strip()
    submitted = nlpbench("submit", "--team", "team-a", "--task", "date", "--dataset", "notes",
                         "--command", COMMAND, "--db", url)  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    refused = nlpbench("submit", "--team", "team-a", "--task", "date", "--dataset", "notes",
                       "--tool", "http://127.0.0.1:9/api/v1", "--db", url)  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith(
        "dataset notes is held by data sites, whose notes never leave them: a tool submission cannot be run "
        "there; submit a command (--command)"
    )
    with httpx.Client(base_url=f"{central}/api/v1", timeout=60) as client:
        assert client.post("/sites/lease", headers={"x-api-key": "nbs_000000000000_nope"}).status_code == 401
        job = client.post("/sites/lease", headers={"x-api-key": alpha}).json()
        assert job["kind"] == "command" and job["profile"] == "standard" and job["dataset"] == "notes"
        run = job["run"]
        assert client.post(f"/sites/runs/{run}/progress", json={"done": 1, "total": 2},
                           headers={"x-api-key": beta}).status_code == 404  # fmt: skip
        result = scored()
        quoting = scored()
        quoting["reports"]["date"]["perDocument"][0]["document"] = "note-1 of Mr Smith"
        answer = client.post(f"/sites/runs/{run}/result", json=quoting, headers={"x-api-key": alpha})
        assert answer.status_code == 400 and "Smith" not in answer.text
        answer = client.post(f"/sites/runs/{run}/result", json=result, headers={"x-api-key": alpha})
        assert answer.status_code == 200 and answer.json() == {"status": "ANNOTATING"}
    # a second submission: alpha's dataset now has another content
    again = nlpbench("submit", "--team", "team-a", "--task", "date", "--dataset", "notes",
                     "--command", COMMAND, "--db", url)  # fmt: skip
    assert again.returncode == 0
    with httpx.Client(base_url=f"{central}/api/v1", headers={"x-api-key": alpha}, timeout=60) as client:
        run = client.post("/sites/lease").json()["run"]
        result["contentHash"] = "b" * 64
        answer = client.post(f"/sites/runs/{run}/result", json=result)
    assert answer.status_code == 409
    reason = answer.json()["detail"]
    assert reason == (
        "site alpha: dataset notes has content hash bbbbbbbbbbbb…, not aaaaaaaaaaaa… as its first result had; "
        "refused until an organiser registers it again (nlpbench site add alpha --dataset notes --replace)"
    )
    with opened.session(readonly=True) as session:
        failed = session.get_one(Submission, int(again.stdout))
        assert (failed.status, failed.reason) == ("FAILED", reason)  # and nothing of it is pooled


def test_sigterm_stops_a_site_in_one_line(centre):
    url, _opened, central, _ = centre
    key = nlpbench("site", "add", "alpha", "--dataset", "notes", "--db", url).stdout.strip()
    site_db = url.replace("centre.db", "alpha.db")
    assert nlpbench("db", "upgrade", "--db", site_db).returncode == 0
    process = subprocess.Popen([sys.executable, "-m", "nlpbench", "site", "serve", "--central", central, "--key", key,
                                "--db", site_db, "--poll", "0.1"], stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the site has asked the centre for work
            if nlpbench("site", "list", "--db", url).stdout.split()[-1] != "never":
                break
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, said = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0
    assert said == "site: stopped by SIGTERM; its run goes on when it is served again\n"
