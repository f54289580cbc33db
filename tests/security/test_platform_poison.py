"""A team tries to stop the queue's workers, or the platform API, with one submission; on SQLite and PostgreSQL.

No submission stops a worker: every one ends INVALID or FAILED with a one-line reason and the worker goes
on (it exits 0 once the queue is idle). Names are reduced to safe base names; NUL and lone surrogates are
refused at submit (400, or one line and exit 2 from the command line); a submission whose claims killed
``max_attempts`` workers ends FAILED; ids past any submission's are 404.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from nlpbench.platform import queue as queues
from nlpbench.platform import worker
from nlpbench.platform.validation import UNREACHABLE
from tests.platform.arena import problem
from tests.platform.conftest import arena, nb, served_tool, tool  # noqa: F401
from tests.store.backends import db_url  # noqa: F401

#: predictionsName as a team gives it, and the name kept.
NAMES = {
    ".": "predictions",
    "..": "predictions",
    "/": "predictions/",
    "a/../../b.json": "b.json",
    "..\\..\\evil.json": "evil.json",
    "": "predictions",
    "  ": "predictions",
    "\t\nx.json": "__x.json",
    "x" * 250 + ".json": "x" * 95 + ".json",
}


def test_names_from_teams_are_reduced_to_safe_base_names_and_every_submission_ends(arena, tmp_path):  # noqa: F811
    predictions = json.dumps(arena.exported("open", tmp_path))
    made = {name: arena.submitted(dataset="open", predictions=predictions, predictionsName=name) for name in NAMES}
    for name, submission in made.items():
        assert arena.shown(submission)["predictions"] == NAMES[name], name
    arena.work()
    assert {arena.shown(submission)["status"] for submission in made.values()} == {"SCORED"}


def test_a_file_task_with_a_dangerous_name_is_written_inside_its_scratch_folder(arena, tmp_path):  # noqa: F811
    gold = tmp_path / "gold.conll"
    gold.write_text("-DOCSTART- O\n\nJohn B-PER\nSmith I-PER\n")
    assert arena.nb("submissions", "gold", "ner", "conll-demo", "--file", f"gold={gold}").exit_code == 0
    made = [
        arena.submitted(task="ner", dataset="conll-demo", predictions=gold.read_text(), predictionsName=name)
        for name in ("..", "../../../../tmp/owned.conll", "/etc/passwd")
    ]
    arena.work()
    assert [arena.shown(s)["status"] for s in made] == ["SCORED"] * 3
    assert [arena.shown(s)["predictions"] for s in made] == ["predictions", "owned.conll", "passwd"]


TEXT_FIELDS = ("command", "predictions", "predictionsName", "toolUrl", "dataset", "task", "queue")


@pytest.mark.parametrize("field", TEXT_FIELDS)
@pytest.mark.parametrize("character", ["\x00", "\ud800", "\udcff"])
def test_nul_and_lone_surrogates_are_refused_at_submit_never_a_500(arena, field, character):  # noqa: F811
    body = {"task": "date", "dataset": "open", "command": "python -m tool", field: f"a{character}b"}
    if field in ("predictions", "predictionsName", "toolUrl"):
        body.pop("command")
        body.setdefault("predictions", "[]")
    raw = json.dumps(body).encode()  # "\ud800" travels as the escape JSON has for it
    problem(arena.call("POST", "/submissions", content=raw, headers={"Content-Type": "application/json"}), 400)
    organiser = arena.call("POST", "/submissions", "organiser", content=raw.replace(b"{", b'{"team": "t\\u0000",', 1))
    problem(organiser, 400)
    assert arena.call("GET", "/submissions", "organiser").json()["submissions"] == []


@pytest.mark.parametrize(
    "args",
    [
        ("--command", "python -m tool \udcff"),  # what a command line's bytes that are not UTF-8 become
        ("--command", "python\x00 -m tool"),
        ("--tool", "http://127.0.0.1:9/\udcff"),
        ("--team", "te\x00am", "--tool", "http://127.0.0.1:9"),
    ],
)
def test_the_command_line_refuses_them_in_one_line_exit_2(arena, args):  # noqa: F811
    result = arena.nb("submit", "--team", "t", "--task", "date", "--dataset", "open", *args)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "NUL" in result.stderr or "surrogate" in result.stderr or "is not" in result.stderr


def test_a_prediction_file_holding_nul_is_refused_in_one_line(arena, tmp_path):  # noqa: F811
    path = tmp_path / "pred.json"
    path.write_text('[{"annotationSource": "\x00"}]')
    result = arena.nb("submit", "--team", "t", "--task", "date", "--dataset", "open", "--predictions", path)
    assert result.exit_code == 2 and "predictions: a NUL character at character 23" in result.stderr


@contextmanager
def garbage() -> Iterator[str]:
    """A server that answers every connection with bytes that are not HTTP."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                connection.sendall(b"\x00\xff garbage \r\n\r\n{{{" * 100)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()


@pytest.mark.parametrize("dataset", ["notes", "open"])
def test_a_tool_answering_500_non_json_or_garbage_never_stops_the_worker(arena, tool, dataset):  # noqa: F811
    """The crash of issue 18: on Python 3.11.0-3.11.3 a tool answering 500 or non-JSON ended `nlpbench worker`."""
    arena.queue("--tool-host", "127.0.0.1")
    made = {}
    with garbage() as url:
        made["garbage"] = arena.submitted(dataset=dataset, toolUrl=url)
        for fault in ("500", "not_json", "html", "broken"):
            made[fault] = arena.submitted(dataset=dataset, toolUrl=tool.url)
        tool.reset("500", notes=None)
        arena.work()  # validation of each fails at the probe note
        statuses = {name: arena.shown(s)["status"] for name, s in made.items()}
    assert set(statuses.values()) == {"INVALID"}, statuses
    for fault in ("not_json", "html", "broken"):  # and while annotating, past validation
        tool.reset(fault, notes={arena.note_ids(dataset)[-1]})
        made[fault] = arena.submitted(dataset=dataset, toolUrl=tool.url)
        arena.work()
        data = arena.shown(made[fault])
        assert data["status"] == "FAILED" and data["reason"] and "\n" not in data["reason"], data["reason"]
    assert arena.shown(made["garbage"])["reason"] == UNREACHABLE


def test_a_submission_that_killed_its_workers_ends_failed_and_the_next_is_run(arena, tmp_path):  # noqa: F811
    predictions = json.dumps(arena.exported("open", tmp_path))
    killer = arena.submitted(dataset="open", predictions=predictions)
    after = arena.submitted(dataset="open", predictions=predictions)
    for dead in range(3):  # three workers claimed it and died (their leases long expired)
        assert queues.claim(arena.store, "default", f"dead-{dead}", lease=-1) == killer
    arena.work()
    assert (arena.shown(killer)["status"], arena.shown(killer)["reason"]) == ("FAILED", "stopped 3 workers")
    assert arena.shown(killer)["attempts"] == 3 and arena.shown(after)["status"] == "SCORED"
    assert "at most 1 claims" in arena.queue("--max-attempts", "1")
    once = arena.submitted(dataset="open", predictions=predictions)
    assert queues.claim(arena.store, "default", "dead", lease=-1) == once
    arena.work()
    assert arena.shown(once)["reason"] == "stopped 1 worker"


def test_an_error_nobody_foresaw_fails_one_submission_and_logs_its_type_and_place_only(
    arena,  # noqa: F811
    tmp_path,
    monkeypatch,
    caplog,
):
    predictions = json.dumps(arena.exported("open", tmp_path))
    first = arena.submitted(dataset="open", predictions=predictions)
    second = arena.submitted(dataset="open", predictions=predictions)
    real, calls = worker.store_result, []

    def breaks_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the note says: Chloe Price, MRN 12345678")
        return real(*args, **kwargs)

    monkeypatch.setattr(worker, "store_result", breaks_once)
    with caplog.at_level(logging.ERROR, logger="nlpbench.platform.worker"):
        arena.work()
    assert (arena.shown(first)["status"], arena.shown(first)["reason"]) == ("FAILED", worker.INTERNAL_ERROR)
    assert arena.shown(second)["status"] == "SCORED"
    assert f"submission {first}: RuntimeError raised at test_platform_poison.py:" in caplog.text
    assert "Chloe" not in caplog.text and "Chloe" not in json.dumps(arena.logs(first))


@pytest.mark.parametrize("submission", ["99999999999999999999", "2147483648", "0", "-1"])
def test_an_id_past_any_submissions_is_404_never_a_500(arena, submission):  # noqa: F811
    for method, path in (("GET", ""), ("GET", "/documents"), ("GET", "/logs"), ("POST", "/cancel")):
        problem(arena.call(method, f"/submissions/{submission}{path}", "organiser"), 404, "no submission")
    if not submission.startswith("-"):  # the command line takes -1 for an option
        shown = arena.nb("submissions", "show", submission)
        assert shown.exit_code == 2 and "no submission" in shown.stderr


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("GET", "/submissions?queue=%00", {}),
        ("GET", "/submissions?queue=" + "q" * 100, {}),
        ("GET", "/submissions/1/documents?profile=%00", {}),
        ("GET", "/submissions?limit=99999999999999999999", {}),
        ("POST", "/submissions", {"content": b"{not json"}),
        ("POST", "/submissions", {"content": b"\xff\xfe{}", "headers": {"Content-Type": "application/json"}}),
        ("POST", "/submissions", {"json": {"task": "date", "dataset": "open", "predictions": ["a"]}}),
        ("POST", "/submissions", {"json": {"task": "date", "dataset": "open", "predictionsName": "x" * 300}}),
    ],
)
def test_bad_requests_are_rfc_7807_problems(arena, method, path, kwargs):  # noqa: F811
    problem(arena.call(method, path, **kwargs), 400)
