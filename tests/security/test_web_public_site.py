"""The public leaderboard, read by an attacking team: it shows scored submissions' scores and nothing else.

A store seeded and scored through the platform (:mod:`tests.web.seeding`),
then given what an attacker and a busy platform leave in it: submissions of
every other status, a command line, tool URLs with credentials, a worker's
host name, events, and ``/tool`` metadata and file names written to break a
page (markup, formulas, bidirectional overrides, megabytes of text). Every
page and export of the site is crawled; none may show a secret, an unbounded
or unescaped string, a formula a spreadsheet would run, or a submission that
is not SCORED — and every answer carries the security headers.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import warnings
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, event, select, update
from typer.testing import CliRunner

from nlpbench.cli import app
from nlpbench.platform import ranks
from nlpbench.store import open_store
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.ranks import RankGroups
from nlpbench.store.submissions import FINAL, SCORED, STATUSES, Result, Submission, SubmissionEvent, TaskGold
from nlpbench.web import board
from nlpbench.web.app import MAX_ID, SECURITY_HEADERS, create_app
from tests.web.seeding import CANARY, PRIVATE, PUBLIC, seed

SECRETS = ("SECRET-PASSWORD", "SECRET-QUERY", "SECRET-COMMAND", "SECRET-WORKER", "SECRET-EVENT", "SECRET-META")
HOSTILE_NAME = "<script>alert('name')</script>" * 2000
HOSTILE_VERSION = '"><img src=x onerror=alert(1)>'
FORMULA = '=HYPERLINK("http://evil.example","x")'
BIDI = "\u202eevil\u202c"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Iterator[tuple]:
    """``(store, ids, hostile)``: the seeded store; submission ids by ``team/task/dataset``; the ids of
    submissions changed below by what they now hold."""
    scratch = tmp_path_factory.mktemp("hostile")
    store = open_store(f"sqlite:///{scratch}/site.db")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ids = seed(store, scratch)
    hostile = {
        "credentials": ids[f"alpha/date/{PUBLIC}"],
        "metadata": ids[f"beta/date/{PUBLIC}"],
        "command": ids[f"gamma/date/{PUBLIC}"],
    }
    with store.session() as session:
        session.execute(
            update(Submission)
            .where(Submission.id == hostile["credentials"])
            .values(
                kind="tool",
                tool_url="http://team:SECRET-PASSWORD@10.1.2.3:8080/api?token=SECRET-QUERY#SECRET-QUERY",
                worker="SECRET-WORKER.internal",
                tool_meta={"name": "cred-tool", "url": "https://u:SECRET-META@tool.example/x?k=SECRET-META"},
            )
        )
        made = session.scalars(select(Result).where(Result.submission_id == hostile["credentials"])).one()
        made.reproducibility = {
            **made.reproducibility,
            "toolUrl": "http://team:SECRET-PASSWORD@10.1.2.3:8080/api?token=SECRET-QUERY",
            "tool": {"name": "cred-tool", "url": "https://u:SECRET-META@tool.example/x"},
        }
        session.execute(
            update(Submission)
            .where(Submission.id == hostile["metadata"])
            .values(
                tool_meta={
                    "name": HOSTILE_NAME,
                    "version": HOSTILE_VERSION,
                    "license": FORMULA,
                    "apiVersion": BIDI,
                    "url": "javascript:alert(1)//" + "x" * 10_000,
                    "type": {"not": "a string"},
                    "author": "SECRET-META " * 1000,
                },
                predictions_name='"><svg onload=alert(1)>.json',
            )
        )
        session.execute(
            update(Submission)
            .where(Submission.id == hostile["command"])
            .values(kind="command", command="python tool.py --token SECRET-COMMAND", worker="SECRET-WORKER")
        )
        for submission_id in hostile.values():
            session.add(SubmissionEvent(submission_id=submission_id, status=SCORED, reason="SECRET-EVENT"))
        # a submission of every other status, with a result (as a rescore or a crash half-way leaves one)
        scored_result = session.scalars(select(Result).where(Result.submission_id == hostile["command"])).first()
        for status in (s for s in STATUSES if s != SCORED):
            submission = Submission(
                queue="default", team=f"team-{status.lower()}", task="date", dataset=PUBLIC, kind="predictions",
                predictions="[]", predictions_name=f"{status}-SECRET-COMMAND.json", status=status,
                reason="SECRET-EVENT", worker="SECRET-WORKER",
            )  # fmt: skip
            session.add(submission)
            session.flush()
            session.add(
                Result(
                    submission_id=submission.id, profile="standard", scores=scored_result.scores,
                    reproducibility={"toolUrl": "http://x:SECRET-PASSWORD@y"}, warnings=["SECRET-EVENT"],
                )
            )  # fmt: skip
            hostile[status] = submission.id
    ranks.refresh(store)  # the hostile rows were stored by hand, not by a worker
    yield store, ids, hostile
    store.close()


@pytest.fixture(scope="module")
def client(seeded):
    store, _, _ = seeded
    with TestClient(create_app(store)) as client:
        yield client


def crawl(client) -> dict[str, object]:
    """Every page and export the home page leads to, by URL."""
    seen: dict[str, object] = {}
    waiting = ["/"]
    while waiting:
        url = waiting.pop()
        if url in seen:
            continue
        answer = client.get(url)
        seen[url] = answer
        assert answer.status_code == 200, url
        if answer.headers["content-type"].startswith("text/html"):
            links = re.findall(r'href="(/[^"#]*)"', answer.text)
            waiting += [link.replace("&amp;", "&") for link in links if not link.startswith("/static/")]
    return seen


def test_the_site_shows_scored_submissions_only(client, seeded):
    _, _, hostile = seeded
    for status in (s for s in STATUSES if s != SCORED):
        submission = hostile[status]
        for url in (f"/submissions/{submission}", f"/submissions/{submission}.json", f"/submissions/{submission}.csv"):
            answer = client.get(url)
            assert answer.status_code == 404 and "<h1>Not found</h1>" in answer.text, url
            assert f"no submission {submission}" in answer.text  # as if it did not exist: no status told
        (result,) = _results(seeded, submission)
        for url in (f"/results/{result}", f"/results/{result}.json", f"/results/{result}.csv"):
            assert client.get(url).status_code == 404, url
        team = f"team-{status.lower()}"
        for url in (f"/teams/{team}", f"/teams/{team}.json", f"/teams/{team}.csv"):
            assert client.get(url).status_code == 404, url
    pages = crawl(client)
    for url, answer in pages.items():
        for status in (*FINAL, "RECEIVED", "VALIDATING", "ANNOTATING", "SCORING"):
            if status != SCORED:
                assert f"team-{status.lower()}" not in answer.text, (url, status)
    rows = {row["task"]: row for row in client.get("/tasks.json").json()}
    assert rows["date"]["scored"] == 6  # the seed's three teams twice; none of the others
    assert all(row["status"] == SCORED for row in client.get("/teams/alpha.json").json())


def _results(seeded, submission_id: int) -> list[int]:
    store, _, _ = seeded
    with store.session(readonly=True) as session:
        return list(session.scalars(select(Result.id).where(Result.submission_id == submission_id)))


def test_no_page_or_export_shows_a_command_credentials_a_worker_or_events(client, seeded):
    _, _, hostile = seeded
    pages = crawl(client)
    assert f"/submissions/{hostile['credentials']}.json" in pages and "/tasks/date.csv" in "".join(pages)
    for url, answer in pages.items():
        for secret in SECRETS:
            assert secret not in answer.text, (url, secret)
        assert CANARY.split()[0] not in answer.text, url
    shown = client.get(f"/submissions/{hostile['credentials']}.json").json()
    assert shown["toolUrl"] == "http://10.1.2.3:8080/api"  # scheme, host, port, path: no userinfo, query, fragment
    assert shown["tool"]["url"] == "https://tool.example/x"
    assert shown["results"][0]["reproducibility"]["toolUrl"] == "http://10.1.2.3:8080/api"
    assert not {"command", "worker", "events", "reason", "attempts", "progress"} & shown.keys()
    row = next(r for r in client.get("/tasks/date.json").json() if r["tool"] == "cred-tool")
    assert row["url"] == "https://tool.example/x"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw@host/p", "http://host/p"),
        ("https://user@host:8443/p?token=1#f", "https://host:8443/p"),
        ("user:pw@host:80", "user:host:80"),  # no ``//``: what follows the ``@`` only
        ("http://[::1", None),  # does not parse: nothing shown
        (None, None),
    ],
)
def test_a_shown_url_keeps_no_credentials(url, shown):
    assert board.shown_url(url) == shown


def test_what_a_tool_controls_is_escaped_and_bounded(client, seeded):
    _, _, hostile = seeded
    submission = client.get(f"/submissions/{hostile['metadata']}")
    task = client.get("/tasks/date")
    team = client.get("/teams/beta")
    for page in (submission, task, team):
        assert "<script>alert" not in page.text and "<img src=x" not in page.text and "<svg onload" not in page.text
        assert "\u202e" not in page.text
        assert len(page.text) < 300_000  # megabytes of metadata do not reach the page
    assert "&lt;script&gt;alert(&#39;name&#39;)" in task.text
    data = client.get(f"/submissions/{hostile['metadata']}.json").json()
    assert len(data["tool"]["name"]) == board.SHORT and data["tool"]["name"].endswith("…")
    assert len(data["tool"]["url"]) <= board.LONG and data["tool"]["apiVersion"] == "\ufffdevil\ufffd"
    assert "author" not in data["tool"]
    assert data["predictions"] == '"><svg onload=alert(1)>.json'  # JSON is data: escaped by whoever shows it


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(client, seeded):
    rows = list(csv.DictReader(io.StringIO(client.get("/tasks/date.csv").text)))
    licences = {row["license"] for row in rows}
    assert f"'{FORMULA}" in licences and FORMULA not in licences
    for row in rows:
        for value in row.values():
            assert not value or (value[0] not in "=+@\t\r" and not (value[0] == "-" and not _number(value))), row


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1+cmd", "@SUM(A1)", "\tx", "\rx", "-text"])
def test_neutralised_strings(cell):
    from nlpbench.web.app import neutralised

    assert neutralised(cell) == "'" + cell
    assert neutralised(-0.5) == -0.5 and neutralised("plain") == "plain" and neutralised(None) is None


def test_every_answer_carries_the_security_headers(client, seeded):
    _, ids, _ = seeded
    urls = ["/", "/tasks/date", "/tasks/date.csv", "/tasks.json", f"/submissions/{ids[f'alpha/phi/{PUBLIC}']}",
            "/teams/alpha.csv", "/static/site.css", "/submissions/0", "/nowhere", "/tasks/nothing"]  # fmt: skip
    for url in urls:
        answer = client.get(url)
        for name, value in SECURITY_HEADERS.items():
            assert answer.headers.get(name) == value, (url, name)
    policy = SECURITY_HEADERS["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy and "script-src" not in policy
    for page in (client.get("/tasks/date"), client.get(f"/submissions/{ids[f'alpha/phi/{PUBLIC}']}")):
        assert "<script" not in page.text and " style=" not in page.text and "<style" not in page.text


@pytest.mark.parametrize("value", ["99999999999999999999", str(MAX_ID + 1), "-1", "0", "abc", "1e3", "1.5", "０"])
def test_an_id_out_of_range_or_malformed_is_a_404_page(client, value):
    for url in (f"/submissions/{value}", f"/submissions/{value}.json", f"/results/{value}", f"/results/{value}.csv"):
        answer = client.get(url)
        assert answer.status_code == 404 and "<h1>Not found</h1>" in answer.text, url
        assert answer.headers["content-security-policy"] == SECURITY_HEADERS["content-security-policy"]


def test_a_private_dataset_shows_no_note_property(client, seeded):
    store, ids, _ = seeded
    with store.session() as session:  # a warning naming offsets, as a scorer may give
        session.execute(update(Result).values(warnings=["span 12-40 of note n-3 past its end (37 characters)"]))
    try:
        private = client.get(f"/submissions/{ids[f'alpha/phi/{PRIVATE}']}.json").json()["results"][0]
        public = client.get(f"/submissions/{ids[f'alpha/phi/{PUBLIC}']}.json").json()["results"][0]
        assert private["warnings"] == [] and private["warningsWithheld"] == 1 and private["errors"] == []
        assert public["warnings"] and public["errors"]
        page = client.get(f"/submissions/{ids[f'alpha/phi/{PRIVATE}']}").text
        assert "37 characters" not in page and "1 warnings of the scoring, shown for public datasets only" in page
    finally:
        with store.session() as session:
            session.execute(update(Result).values(warnings=[]))


def test_a_file_task_gold_is_public_only_when_marked_so(client, seeded):
    store, ids, _ = seeded
    url = f"/submissions/{ids['alpha/ner/conll-demo']}"
    assert "private: counts only" in client.get(url).text
    with store.session() as session:
        session.execute(update(TaskGold).where(TaskGold.task == "ner").values(visibility="public"))
    try:
        page = client.get(url).text
        assert "(public)" in page and "private: counts only" not in page
    finally:
        with store.session() as session:
            session.execute(update(TaskGold).where(TaskGold.task == "ner").values(visibility="private"))


def test_get_pages_never_write_and_refresh_stores_what_they_read(client, seeded):
    """A result stored without intervals (by an older version) and a new result without rank groups: the
    pages show them without interval or rank, writing nothing, until ``leaderboard refresh`` stores both."""
    store, ids, _ = seeded
    older = ids[f"beta/phi/{PUBLIC}"]
    with store.session() as session:
        (result,) = session.scalars(select(Result.id).where(Result.submission_id == older))
        session.execute(delete(ResultInterval).where(ResultInterval.result_id == result))
        session.execute(delete(RankGroups))
    written: list[str] = []

    def record(_connection, _cursor, statement, *_args) -> None:
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "BEGIN IMMEDIATE")):
            written.append(statement.split()[0])

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        pages = crawl(client)
        rows = client.get("/tasks/phi.json").json()
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert len(pages) > 20 and written == []
    assert 'title="rank group not computed yet"' in pages["/tasks/phi"].text
    assert all(value is None for row in rows for key, value in row.items() if key.endswith(" rank"))
    assert f"{PUBLIC}/date" in rows[0] and "beta" not in {row["team"] for row in rows if row[f"{PUBLIC}/date"]}
    refreshed = CliRunner().invoke(app, ["leaderboard", "refresh", "--db", store.url])
    assert refreshed.exit_code == 0 and "intervals of 1 results computed and stored" in refreshed.stdout
    rows = client.get("/tasks/phi.json").json()
    beta = next(row for row in rows if row["team"] == "beta" and row[f"{PUBLIC}/date"] is not None)
    assert beta[f"{PUBLIC}/date ci_low"] <= beta[f"{PUBLIC}/date"] and beta[f"{PUBLIC}/date rank"] >= 1
    again = CliRunner().invoke(app, ["leaderboard", "refresh", "--db", store.url])
    assert "rank groups of 0 columns and intervals of 0 results" in again.stdout  # nothing changed: nothing done


def test_a_500_page_names_the_failure_type_and_logs_its_place_only(seeded, monkeypatch, caplog):
    store, _, _ = seeded

    def failing(*_args, **_kwargs):
        raise ValueError(f"cannot draw {CANARY}")

    monkeypatch.setattr(board, "task_table", failing)
    with TestClient(create_app(store), raise_server_exceptions=False) as client, caplog.at_level(logging.DEBUG):
        answer = client.get("/tasks/date")
    assert answer.status_code == 500 and "<h1>Error 500</h1>" in answer.text and "ValueError" in answer.text
    assert answer.headers["x-frame-options"] == "DENY"
    logged = "\n".join(record.getMessage() + str(record.exc_info) for record in caplog.records)
    assert "GET /tasks/date failed: ValueError raised at test_web_public_site.py:" in logged
    assert CANARY.split()[0] not in logged and CANARY.split()[0] not in answer.text
