"""A team's tool tries to carry text out through its own ``GET /tool`` answer, which pages and reasons show;
on SQLite and PostgreSQL.

Every field is bounded and printable: a tool breaking a bound is INVALID with a reason naming the field and
the bound, never quoting the value; what is stored of a valid answer is the schema's fields only.
"""

from __future__ import annotations

import json

import pytest

from nlpbench.api.tool import create_app
from tests.platform.arena import host_of
from tests.platform.conftest import arena, nb  # noqa: F401
from tests.store.backends import db_url  # noqa: F401
from tests.toolkit import RegexPhi, served

SMUGGLED = "Chloe Price, MRN 12345678, seen on 12/26/2020 "
FIELDS = ("name", "version", "license", "repository", "description", "author", "authorEmail", "url", "type")


class Describing:
    """A real tool whose ``GET /api/v1/tool`` answer has ``fields`` changed (or added)."""

    def __init__(self, **fields):
        self.app, self.fields = create_app(RegexPhi()), fields

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/api/v1/tool":
            return await self.app(scope, receive, send)
        chunks: list[bytes] = []

        async def keep(message):
            if message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, keep)
        body = json.dumps({**json.loads(b"".join(chunks)), **self.fields}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("author", SMUGGLED * 25_000, "author: String should have at most 200 characters"),
        ("repository", SMUGGLED * 30, "repository: String should have at most 1000 characters"),
        ("description", SMUGGLED * 7, "description: String should have at most 280 characters"),
        ("url", "https://x.example/" + SMUGGLED.replace(" ", "-") * 30, "url: String should have at most 1000"),
        ("url", "javascript:alert(document.cookie)", "`url` is not an http:// or https:// URL"),
        ("version", "1.0.0-" + "a" * 200, "version: String should have at most 100 characters"),
        ("apiVersion", "1.2.0+" + "b" * 200, "apiVersion: String should have at most 100 characters"),
        ("name", "chloe-price-" * 10, "name: String should have at most 60 characters"),
        ("author", "Team\nChloe Price", "author: Value error, control characters"),
        ("authorEmail", "a@b\u0000Chloe", "authorEmail: Value error, control characters"),
        ("author", "Chloe \ud800 Price", "author: Input should be a valid string"),
        ("author", ["Chloe", "Price"], "author: Input should be a valid string"),
    ],
)
def test_a_tool_description_breaking_a_bound_is_invalid_naming_the_field_and_the_bound(arena, field, value, said):  # noqa: F811
    with served(Describing(**{field: value})) as url:
        arena.queue("--tool-host", host_of(url))
        submission = arena.submitted(dataset="open", toolUrl=url)
        arena.work()
    response = arena.call("GET", f"/submissions/{submission}")
    data = response.json()
    assert data["status"] == "INVALID" and said in data["reason"], data["reason"]
    assert data["tool"] is None and "Chloe" not in response.text and len(response.content) < 4000


def test_what_is_kept_of_a_tool_description_is_its_bounded_fields_only(arena):  # noqa: F811
    with served(Describing(notes=SMUGGLED * 1000, author="A team")) as url:
        arena.queue("--tool-host", host_of(url))
        submission = arena.submitted(dataset="open", toolUrl=url)
        arena.work()
    data = arena.shown(submission)
    assert data["status"] == "SCORED", data["reason"]
    assert sorted(data["tool"]) == sorted((*FIELDS, "apiVersion")) and data["tool"]["author"] == "A team"
    assert "Chloe" not in json.dumps(data) and "Chloe" not in json.dumps(arena.shown(submission, "organiser"))
