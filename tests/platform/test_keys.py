"""Platform API keys from the command line: made with a label and an expiry, listed, revoked; on both backends,
against a running API that must take each change at once (nothing cached)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from nlpbench.api.platform import create_app
from nlpbench.store import open_store
from nlpbench.store.submissions import PlatformKey

KEY = re.compile(r"nbp_([0-9a-f]{12})_\S+")


@pytest.fixture
def running(db_url, nb):
    """The platform API over the store, started before any key exists."""
    assert nb("db", "upgrade").exit_code == 0
    opened = open_store(db_url)
    with TestClient(create_app(opened)) as client:
        client.store = opened
        yield client
    opened.close()


def made(nb, *args: str) -> str:
    result = nb("submissions", "keys", "create", *args)
    assert result.exit_code == 0, result.stderr
    assert KEY.fullmatch(result.stdout.strip()), result.stdout
    return result.stdout.strip()


def status(api, key: str) -> int:
    return api.get("/api/v1/submissions", headers={"X-API-Key": key}).status_code


def listed(nb, *args: str) -> dict[str, dict]:
    result = nb("submissions", "keys", "list", "--format", "json", *args)
    assert result.exit_code == 0, result.stderr
    return {row["key"]: row for row in json.loads(result.stdout)}


def test_a_key_made_listed_and_revoked_while_the_api_runs_counts_at_once(nb, running):
    key = made(nb, "--team", "team-a", "--label", "CI of team a", "--expires", "30")
    assert status(running, key) == 200  # made after the server started: no restart, no cache
    name = "nbp_" + KEY.fullmatch(key)[1]
    row = listed(nb)[name]
    assert (row["role"], row["team"], row["label"], row["state"], row["revokedAt"]) == (
        "team",
        "team-a",
        "CI of team a",
        "active",
        None,
    )
    expires = datetime.fromisoformat(row["expiresAt"].replace("Z", "+00:00"))
    assert timedelta(days=29) < expires - datetime.now(UTC) <= timedelta(days=30)
    assert key.split("_", 2)[2] not in nb("submissions", "keys", "list").stdout  # never the secret
    revoked = nb("submissions", "keys", "revoke", name)
    assert revoked.exit_code == 0 and revoked.stdout.strip() == f"{name}: revoked"
    response = running.get("/api/v1/submissions", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 401 and response.json()["detail"] == "unknown API key"  # as an unknown key is
    assert listed(nb)[name]["state"] == "revoked"
    assert nb("submissions", "keys", "revoke", key).exit_code == 0  # the whole key names it too; again is no error


def test_an_expired_key_is_refused_as_an_unknown_one(nb, running):
    key = made(nb, "--team", "team-a", "--expires", (datetime.now(UTC) + timedelta(days=2)).date().isoformat())
    assert status(running, key) == 200
    with running.store.session() as session:  # two days later
        row = session.scalars(select(PlatformKey)).one()
        row.expires_at = datetime.now(UTC) - timedelta(seconds=1)
    assert status(running, key) == 401
    assert listed(nb, "--team", "team-a")["nbp_" + KEY.fullmatch(key)[1]]["state"] == "expired"
    assert listed(nb, "--team", "team-b") == {}


def test_the_old_key_command_still_makes_keys_and_organiser_keys_see_all(nb, running):
    result = nb("submissions", "key", "--organiser")
    assert result.exit_code == 0 and KEY.fullmatch(result.stdout.strip())
    assert status(running, result.stdout.strip()) == 200
    assert listed(nb)["nbp_" + KEY.fullmatch(result.stdout.strip())[1]]["team"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("keys", "create", "--team", "t", "--expires", "2020-01-01"), "has passed: a key must expire later"),
        (("keys", "create", "--team", "t", "--expires", "soon"), "--expires 'soon': give DAYS, or a date like"),
        (("keys", "create"), "give exactly one of --team NAME or --organiser"),
        (("keys", "revoke", "nbp_000000000000"), "no key 'nbp_000000000000'"),
        (("keys", "revoke", "whatever"), "keys are named nbp_<prefix>"),
    ],
)
def test_bad_key_commands_are_one_line_exit_2(nb, running, args, message):
    result = nb("submissions", *args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
