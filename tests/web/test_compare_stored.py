"""``nlpbench compare submission:A submission:B``: two stored results compared from their per-document counts."""

from __future__ import annotations

import json

import pytest

from tests.cli.errors import one_line_error
from tests.web.seeding import PRIVATE, PUBLIC


@pytest.fixture
def db(seeded):
    store, _ = seeded
    return str(store.engine.url)


def test_two_stored_submissions_of_one_type(cli, seeded, db):
    _, ids = seeded
    a, b = ids[f"alpha/date/{PUBLIC}"], ids[f"gamma/date/{PUBLIC}"]
    result = cli("compare", f"submission:{a}", f"submission:{b}", "--db", db, "-m", "token", "-f", "json")
    assert result.exit_code == 0, result.stderr
    rows = {row["score"]: row for row in json.loads(result.stdout)["scores"]}
    assert set(rows) == {"precision", "recall", "f1"}
    # alpha drops one annotation in 7, gamma one in 2: alpha's recall is higher
    assert rows["recall"]["a"] > rows["recall"]["b"] and rows["recall"]["difference"] > 0
    assert all(row["documents"] == 6 for row in rows.values())


def test_phi_submissions_compare_every_type(cli, seeded, db):
    _, ids = seeded
    a, b = ids[f"alpha/phi/{PUBLIC}"], ids[f"beta/phi/{PUBLIC}"]
    result = cli("compare", f"submission:{a}", f"submission:{b}", "--db", db, "-m", "token", "-f", "json")
    assert result.exit_code == 0, result.stderr
    types = {row["annotation_type"] for row in json.loads(result.stdout)["scores"]}
    assert {"date", "person_name", "location"} <= types


def test_what_cannot_be_compared_is_one_line(cli, seeded, db):
    _, ids = seeded
    public, private = ids[f"alpha/date/{PUBLIC}"], ids[f"alpha/date/{PRIVATE}"]
    message = one_line_error(cli("compare", f"submission:{public}", f"submission:{private}", "--db", db))
    assert message.startswith("the submissions were scored on different datasets")
    assert "no submission 9999" in one_line_error(cli("compare", f"submission:{public}", "submission:9999", "--db", db))
    assert "not one of each" in one_line_error(cli("compare", f"submission:{public}", "pred.json", "--db", db))
    assert "give --task and --gold" in one_line_error(cli("compare", "a.json", "b.json"))
    assert "submission:ID" in one_line_error(cli("compare", "submission:x", f"submission:{public}", "--db", db))
