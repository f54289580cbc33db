"""Validation as the NLP Sandbox controller did it: the tool's type serves the task, ``/`` redirects, apiVersion."""

from __future__ import annotations

import json

import pytest

from nlpbench.api.tool import create_app
from tests.platform.test_worker import run_worker, shown, submit
from tests.toolkit import DatesOnly, RegexPhi, served


class Altered:
    """A tool whose ``/`` does not redirect, whose pages answer 503 ``busy`` times first, or whose ``GET /tool``
    claims another apiVersion or other ``fields``."""

    def __init__(self, app, *, no_redirect: bool = False, api_version: str | None = None, fields=None, busy: int = 0):
        self.app, self.no_redirect, self.busy = app, no_redirect, busy
        self.fields = {**(fields or {}), **({"apiVersion": api_version} if api_version else {})}

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"] in ("/", "/api/v1/ui") and self.busy:
            self.busy -= 1
            await send({"type": "http.response.start", "status": 503, "headers": [(b"retry-after", b"0")]})
            return await send({"type": "http.response.body", "body": b""})
        if scope["type"] == "http" and scope["path"] == "/" and self.no_redirect:
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            return await send({"type": "http.response.body", "body": b"hello"})
        if scope["type"] == "http" and scope["path"] == "/api/v1/tool" and self.fields:
            return await self.app(scope, receive, self._rewritten(send))
        return await self.app(scope, receive, send)

    def _rewritten(self, send):
        async def rewrite(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [h for h in message["headers"] if h[0] != b"content-length"]}
            elif message["type"] == "http.response.body":
                body = json.loads(message["body"])
                message = {**message, "body": json.dumps({**body, **self.fields}).encode()}
            await send(message)

        return rewrite


def test_a_tool_of_a_type_that_does_not_serve_the_task_is_invalid(nb, dataset):
    with served(create_app(DatesOnly())) as url:
        submission = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", url)
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "INVALID"
    assert data["reason"].endswith("a nlpsandbox:date-annotator does not annotate person_name, location, id, contact")


def test_a_root_that_does_not_redirect_to_the_tool_is_invalid(nb, dataset):
    with served(Altered(create_app(RegexPhi()), no_redirect=True)) as url:
        submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", url)
        run_worker(nb)
    assert shown(nb, submission)["reason"] == "GET / answers HTTP 200 instead of redirecting to /api/v1/tool"


@pytest.mark.parametrize("fatal", [True, False])
def test_another_api_version_is_invalid_or_a_warning_as_the_queue_says(nb, dataset, fatal):
    setting = "--api-version-fatal" if fatal else "--api-version-warn"
    assert nb("submissions", "queue", "default", setting).exit_code == 0
    with served(Altered(create_app(RegexPhi()), api_version="1.1.0")) as url:
        submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", url)
        run_worker(nb)
    data = shown(nb, submission)
    message = "the tool implements API 1.1.0, not 1.2.0"
    if fatal:
        assert (data["status"], data["reason"]) == ("INVALID", message)
    else:
        assert data["status"] == "SCORED" and message in data["warnings"]
        assert data["results"][0]["reproducibility"]["tool"]["apiVersion"] == "1.1.0"


def test_pages_that_are_busy_at_first_are_retried_like_every_request(nb, dataset):
    assert nb("submissions", "queue", "default", "--retries", "2").exit_code == 0
    tool = Altered(create_app(RegexPhi()), busy=2)
    with served(tool) as url:
        submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", url)
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert tool.busy == 0


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("version", "v1", "`version` is not a SemVer version (MAJOR.MINOR.PATCH, as 1.2.0"),
        ("name", "Regex_PHI", "`name` is not lower-case letters and digits joined by single hyphens"),
        ("authorEmail", "nobody", "`authorEmail` is not an e-mail address"),
    ],
)
def test_a_tool_description_outside_the_schema_names_the_rule_in_words(nb, dataset, field, value, rule):
    with served(Altered(create_app(RegexPhi()), fields={field: value})) as url:
        submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", url)
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "INVALID"
    assert f"GET /tool: the response does not follow the 1.2.0 Tool schema: {rule}" in data["reason"]
    assert "\\d" not in data["reason"] and "[a-z0-9]" not in data["reason"] and len(data["reason"]) < 250
