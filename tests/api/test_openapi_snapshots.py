"""Each service's OpenAPI document and routes are what they were before the services became routers.

The snapshots in ``tests/api/openapi/`` were written from main before issue 21 §4's restructuring
(tool, date tool, de-identifier, data node, platform API and the leaderboard, which publishes no
document but whose routes are compared all the same); a change to a path, an operation, a parameter or
a schema shows here as a difference. Routes outside the document (redirects, docs, static files) are
compared by path, methods and name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi import FastAPI

from nlpbench.api import datanode, platform, tool
from nlpbench.store import open_store
from nlpbench.web import app as web
from tests.toolkit import DatesOnly, RegexPhi

SNAPSHOTS = Path(__file__).parent / "openapi"
SERVICES = ("tool", "date-tool", "deidentifier", "datanode", "platform", "leaderboard")


def build(service: str, store) -> FastAPI:
    """The service's app as its command serves it, with default settings."""
    if service == "tool":
        return tool.create_app(RegexPhi())
    if service == "date-tool":
        return tool.create_app(DatesOnly())
    if service == "deidentifier":
        return tool.create_deidentifier_app(RegexPhi())
    factory = {"datanode": datanode.create_app, "platform": platform.create_app, "leaderboard": web.create_app}
    return factory[service](store)


def flat(routes) -> list[list]:
    """``[path, methods, name]`` of each route, those of included routers too (FastAPI 0.165 includes a router
    as one route whose effective routes it builds on demand)."""
    found = []
    for route in routes:
        if hasattr(route, "effective_candidates"):
            found += flat(route.effective_candidates())
            continue
        original = getattr(route, "original_route", route)
        found.append([route.path, sorted(getattr(original, "methods", None) or ()), original.name])
    return found


def described(app: FastAPI) -> dict:
    """The app's OpenAPI document and every route it serves, by path, methods and name."""
    return {"openapi": app.openapi(), "routes": sorted(flat(app.router.routes))}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    opened = open_store(f"sqlite:///{tmp_path_factory.mktemp('openapi')}/store.db")
    yield opened
    opened.close()


@pytest.mark.parametrize("service", SERVICES)
def test_the_openapi_document_and_routes_are_unchanged(service, store):
    expected = json.loads((SNAPSHOTS / f"{service}.json").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(described(build(service, store)))) == expected
