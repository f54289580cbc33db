"""One error hierarchy: every kind's exit code and HTTP status, one CLI handler, one API handler for every service.

Every error nlpbench raises on purpose is an :class:`~nlpbench.errors.NlpbenchError`; its kind decides what the
command line exits with and what a service answers. The command line is driven as users drive it (``nlpbench
formats``, whose listing is made to raise); each service (tool, data node, platform API, leaderboard) gets a route
that raises, put in front of its own, so that the handlers its ``create_app`` installed answer it. Last, no
``except`` or ``suppress`` in the source lets an exception go without a comment saying why.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

import nlpbench
from nlpbench.api import datanode, platform, tool
from nlpbench.api.problems import PROBLEM_MEDIA_TYPE, AnnotatorError, BodyTooLarge
from nlpbench.errors import InputError, Kind, NlpbenchError
from nlpbench.files import LineTooLong
from nlpbench.formats.datanode import DataNodeError
from nlpbench.metrics.timex import TimexError
from nlpbench.model import UnknownArgument
from nlpbench.platform import errors as platform_errors
from nlpbench.platform.keys import UnknownKey
from nlpbench.platform.network import REFUSED, Refused
from nlpbench.platform.validation import Verdict
from nlpbench.registry import UnknownName
from nlpbench.runner.client import ToolError, Unanswered
from nlpbench.runner.isolation import SandboxError, SandboxUnavailable
from nlpbench.store import open_store
from nlpbench.store import repository as store_errors
from nlpbench.store.artifacts import TooLarge
from nlpbench.toolapi.dateshift import DateOutOfRange
from nlpbench.toolapi.deidentify import StepError
from nlpbench.web import app as web
from tests.cli.errors import PREFIX
from tests.toolkit import RegexPhi

#: What each kind is, written out: (exit code, HTTP status, title).
TABLE = {
    Kind.input: (2, 400, "Bad Request"),
    Kind.not_found: (2, 404, "Not Found"),
    Kind.conflict: (2, 409, "Conflict"),
    Kind.forbidden: (2, 403, "Forbidden"),
    Kind.quota: (2, 429, "Too Many Requests"),
    Kind.too_large: (2, 413, "Content Too Large"),
    Kind.unavailable: (2, 503, "Service Unavailable"),
    Kind.tool: (2, 502, "Bad Gateway"),
    Kind.internal: (1, 500, "Internal error"),
}
CANARY = "Patient Zanzibar Quillfeather (MRN CANARY7Q3X)"


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_has_its_exit_code_status_and_title(kind):
    assert (kind.exit_code, kind.status, kind.title) == TABLE[kind]


def test_every_kind_is_in_the_table_and_no_two_share_a_status():
    assert set(TABLE) == set(Kind)
    assert len({kind.status for kind in Kind}) == len(Kind)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (InputError, Kind.input),
        (DataNodeError, Kind.input),
        (UnknownKey, Kind.input),
        (UnknownName, Kind.input),
        (UnknownArgument, Kind.input),
        (TimexError, Kind.input),
        (StepError, Kind.input),
        (DateOutOfRange, Kind.input),
        (LineTooLong, Kind.input),
        (platform_errors.PlatformError, Kind.input),
        (platform_errors.NotFound, Kind.not_found),
        (platform_errors.QuotaExceeded, Kind.quota),
        (platform_errors.Forbidden, Kind.forbidden),
        (platform_errors.Conflict, Kind.conflict),
        (platform_errors.Lost, Kind.conflict),
        (Refused, Kind.forbidden),
        (Verdict, Kind.tool),
        (store_errors.StoreError, Kind.input),
        (store_errors.NotFound, Kind.not_found),
        (store_errors.Conflict, Kind.conflict),
        (store_errors.MissingParent, Kind.input),
        (TooLarge, Kind.too_large),
        (ToolError, Kind.tool),
        (Unanswered, Kind.tool),
        (SandboxError, Kind.tool),
        (SandboxUnavailable, Kind.unavailable),
        (BodyTooLarge, Kind.too_large),
        (AnnotatorError, Kind.internal),
    ],
)
def test_the_project_errors_are_nlpbench_errors_of_their_kind(error, kind):
    assert issubclass(error, NlpbenchError)
    assert error.kind is kind


def test_errors_that_were_builtin_lookups_and_value_errors_still_are():
    """Callers that catch ``LookupError`` or ``ValueError`` keep catching them."""
    assert issubclass(UnknownName, LookupError) and issubclass(UnknownArgument, LookupError)
    assert issubclass(TimexError, ValueError) and issubclass(StepError, ValueError)


def test_messages_are_as_they_were():
    assert str(InputError("bad\nvalue", "gold.txt", "line 3")) == "gold.txt: line 3: bad value"
    assert str(Refused()) == REFUSED
    assert str(BodyTooLarge(10)) == "the request body is over the 10 bytes this service accepts"
    assert str(LineTooLong(4, 1000)) == "a line longer than 1,000 bytes"


def raising(error: BaseException):
    def listing() -> list[str]:
        raise error

    return listing


@pytest.mark.parametrize("kind", list(Kind))
def test_a_command_raising_an_error_of_each_kind_prints_one_line_and_exits_with_its_code(cli, monkeypatch, kind):
    error = NlpbenchError("the formats cannot be listed")
    error.kind = kind
    monkeypatch.setattr("nlpbench.formats.names", raising(error))
    result = cli("formats")
    assert result.exit_code == kind.exit_code
    assert result.stderr == f"{PREFIX}the formats cannot be listed\n"
    assert result.stdout == ""


def test_a_command_raising_a_subclass_prints_its_own_message(cli, monkeypatch):
    monkeypatch.setattr("nlpbench.formats.names", raising(store_errors.NotFound("no dataset 'x'")))
    result = cli("formats")
    assert (result.exit_code, result.stderr) == (2, f"{PREFIX}no dataset 'x'\n")


def test_an_unexpected_exception_is_no_one_line_error(cli, monkeypatch):
    """A bug is not dressed as a refusal: it leaves the handler as it is (a traceback, exit status 1)."""
    monkeypatch.setattr("nlpbench.formats.names", raising(ValueError("a bug")))
    with pytest.raises(ValueError, match="a bug"):
        cli("formats")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    opened = open_store(f"sqlite:///{tmp_path_factory.mktemp('errors')}/store.db")
    yield opened
    opened.close()


SERVICES = ("tool", "datanode", "platform", "leaderboard")


def service(name: str, store) -> FastAPI:
    """The service as its command builds it, with a first route ``GET /raise`` that raises what
    ``app.state.raised`` holds."""
    factory = {
        "tool": lambda: tool.create_app(RegexPhi()),
        "datanode": lambda: datanode.create_app(store),
        "platform": lambda: platform.create_app(store),
        "leaderboard": lambda: web.create_app(store),
    }
    app = factory[name]()

    def raise_it() -> None:
        raise app.state.raised

    app.router.routes.insert(0, APIRoute("/raise", raise_it, methods=["GET"]))
    return app


@pytest.mark.parametrize("name", SERVICES)
@pytest.mark.parametrize("kind", list(Kind))
def test_every_service_answers_an_error_of_each_kind_with_its_problem(store, name, kind):
    app = service(name, store)
    app.state.raised = NlpbenchError("what went wrong, in one line")
    app.state.raised.kind = kind
    answer = TestClient(app).get("/raise")
    assert answer.status_code == kind.status
    assert answer.headers["content-type"] == PROBLEM_MEDIA_TYPE
    assert answer.json() == {
        "type": "about:blank",
        "title": kind.title,
        "status": kind.status,
        "detail": "what went wrong, in one line",
    }


@pytest.mark.parametrize("name", SERVICES)
def test_every_service_answers_an_unexpected_exception_with_a_500_that_quotes_nothing(store, name, caplog):
    app = service(name, store)
    app.state.raised = ValueError(f"cannot parse {CANARY}")
    with caplog.at_level(logging.DEBUG):
        answer = TestClient(app).get("/raise")
    assert answer.status_code == 500
    assert "Zanzibar" not in answer.text and "CANARY7Q3X" not in answer.text
    assert "ValueError" in answer.text
    logged = caplog.text  # every record, with its traceback if it has one
    assert "Zanzibar" not in logged and "CANARY7Q3X" not in logged
    assert "GET /raise failed: ValueError raised at test_errors.py" in logged
    if name != "leaderboard":  # the site answers a page; every API a problem
        assert answer.headers["content-type"] == PROBLEM_MEDIA_TYPE
        assert answer.json()["detail"] == "ValueError (see the server log)"


SOURCE = Path(nlpbench.__file__).parent
#: An ``except`` whose body is only ``pass``, ``continue``, ``break`` or a ``return``: it lets the exception go.
_HANDLER = re.compile(r"^\s*except\b[^#]*:\s*(?P<comment>#.*)?$")
_LETS_GO = re.compile(r"^\s*(pass|continue|break|return\b.*)$")
_SUPPRESS = re.compile(r"^\s*with\b.*\bsuppress\(")


def unexplained(path: Path, root: Path = SOURCE) -> list[str]:
    """The places in ``path`` that let an exception go without a comment saying why (on the line, the line
    that lets it go, or the line above)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for number, line in enumerate(lines):
        above = lines[number - 1].strip() if number else ""
        commented = "#" in line or above.startswith("#")
        handler = _HANDLER.match(line)
        if handler and number + 1 < len(lines):
            following = lines[number + 1]
            if _LETS_GO.match(following.split("#")[0].rstrip()) and not (commented or "#" in following):
                found.append(f"{path.relative_to(root)}:{number + 1}")
        elif _SUPPRESS.match(line) and not commented:
            found.append(f"{path.relative_to(root)}:{number + 1}")
    return found


def test_no_exception_is_let_go_without_a_comment_saying_why():
    assert [place for path in sorted(SOURCE.rglob("*.py")) for place in unexplained(path)] == []


def test_the_check_of_let_go_exceptions_finds_one(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text(
        "try:\n    x = 1\nexcept ValueError:\n    pass\nwith suppress(OSError):\n    y = 2\n"
        "try:\n    x = 1\nexcept ValueError:  # x stays unset\n    pass\n"
    )
    assert unexplained(module, tmp_path) == ["probe.py:3", "probe.py:5"]
