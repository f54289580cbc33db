"""LLM de-identifiers through the queue (issue 22 §1, §2): ``nlpbench serve --annotator deidentifier --llm``
over the local OpenAI-compatible test server, and an organiser's endpoint submitted with ``nlpbench submit
--task deid --llm``, run by ``nlpbench worker``, read back with ``submissions show`` and the leaderboard —
grounding counts, tokens counted once per note, latency, cost and the token budget."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from nlpbench.platform import worker as worker_module
from nlpbench.store import open_store
from nlpbench.toolapi.cost import percentile
from nlpbench.web.app import create_app as create_site
from tests.llm.server import openai_app
from tests.platform.test_llm_submissions import PRICES, gold_mentions, llm_tool, stored_rows
from tests.platform.test_worker import assert_no_text, note_texts, run_worker, shown, submit
from tests.toolkit import served

pytest.importorskip("rapidfuzz")


def deid_row(db_url: str, team: str) -> dict:
    """The ``deid`` leaderboard's line of ``team``, as ``/tasks/deid.json`` gives it."""
    opened = open_store(db_url)
    try:
        with TestClient(create_site(opened)) as site:
            return {row["team"]: row for row in site.get("/tasks/deid.json").json()}[team]
    finally:
        opened.close()


def test_an_llm_deidentifier_shows_its_grounding_tokens_once_per_note_latency_and_cost(
    cli, nb, dataset, db_url, monkeypatch, tmp_path
):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    assert nb("submissions", "queue", "default", "--prices", prices).exit_code == 0
    texts = note_texts(db_url)
    cache = tmp_path / "answers.sqlite"
    with llm_tool(cli, monkeypatch, gold_mentions(db_url), cache, "--annotator", "deidentifier", invent=True) as (
        url,
        tokens,
    ):
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", url, "--model", "test-model")
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["tool"]["type"] == "nlpsandbox:phi-deidentifier"
    rows = stored_rows(db_url, submission)
    assert len(rows) == len(dataset)  # one account per note, no counts per type: one answer for every type
    assert all(row.unplaced == 1 and row.exact > 0 and row.by_type == {} for row in rows)
    used = data["llm"]
    tokens_in, tokens_out = (sum(tokens[text][side] for text in texts) for side in (0, 1))
    assert used["notes"] == len(dataset) and (used["tokensIn"], used["tokensOut"]) == (tokens_in, tokens_out)
    assert used["latencyMs"] == {f"p{p}": percentile([row.latency_ms for row in rows], p) for p in (50, 95, 99)}
    assert used["grounding"]["unplaced"] == len(dataset)  # the invented person of each note
    assert used["costUsd"] == pytest.approx((tokens_in * 1.5 + tokens_out * 6.0) / 1e6)
    text = nb("submissions", "show", submission).stdout
    assert f"LLM: {len(dataset)} notes" in text and "; cost $" in text
    line = deid_row(db_url, "team-a")
    assert line["tokens in"] == tokens_in and line["unplaced"] == len(dataset) and line["cost USD"] == used["costUsd"]
    assert_no_text(json.dumps(data) + text, texts)


def test_an_llm_deidentifier_past_its_token_budget_stops_failed_saying_so(
    cli, nb, dataset, db_url, monkeypatch, tmp_path
):
    cache = tmp_path / "answers.sqlite"
    with llm_tool(cli, monkeypatch, gold_mentions(db_url), cache, "--annotator", "deidentifier", invent=False) as (
        url,
        _,
    ):
        assert nb("submissions", "queue", "default", "--token-budget", 3000).exit_code == 0
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", url)
        monkeypatch.setattr(worker_module, "FLUSH_SECONDS", 0)
        run_worker(nb)
    data = shown(nb, submission)
    spent = [row.tokens_in + row.tokens_out for row in stored_rows(db_url, submission)]
    assert data["status"] == "FAILED"
    assert data["reason"] == (
        f"token budget of 3000 tokens exceeded ({sum(spent)} tokens spent) after {len(spent)} of {len(dataset)} notes"
    )
    assert 1 < len(spent) < len(dataset) and sum(spent[:-1]) <= 3000 < sum(spent)
    assert data["progress"]["done"] == len(spent) == data["llm"]["notes"]


def test_an_organisers_endpoint_is_served_as_a_deidentifier_and_reaches_the_leaderboard(
    nb, dataset, db_url, tmp_path, monkeypatch
):
    mentions = gold_mentions(db_url)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # where the served tool caches answers
    model = openai_app(lambda note: mentions.get(note, []))
    with served(model) as url:
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--llm", f"{url}/v1", "--model", "test-model")
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["kind"] == "llm" and data["tool"]["type"] == "nlpsandbox:phi-deidentifier"
    assert data["tool"]["name"] == "llm-test-model-deidentifier"
    assert data["llm"]["notes"] == len(dataset) and data["llm"]["grounding"]["unplaced"] == 0
    (result,) = data["results"]
    made = result["reproducibility"]
    assert (made["model"], made["template"]) == ("test-model", "phi-entities-v1")
    assert made["tool"]["version"].startswith("1.0.0+")  # the template's hash
    assert made["deidSteps"][0]["annotationTypeMaskConfig"] == {}  # the queue's default steps
    recall = next(r for r in result["scores"]["deid"] if r["metric"] == "hipaa_token" and "label" not in r)
    assert recall["recall"] == 1  # the model listed every gold mention: no PHI token survives
    line = deid_row(db_url, "team-a")
    assert line["notes submission"] == int(submission) and line["tokens in"] == data["llm"]["tokensIn"]
    assert_no_text(json.dumps(data), note_texts(db_url))
