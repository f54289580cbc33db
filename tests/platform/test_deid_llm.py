"""LLM de-identifiers through the queue (issue 22 §1, §2): ``nlpbench serve --annotator deidentifier --llm``
over the local OpenAI-compatible test server, run by ``nlpbench worker``, read back with ``submissions show``
and the leaderboard — grounding counts, tokens counted once per note, latency and cost; a rerun's steps. The
token budget and
an organiser's endpoint (``submit --task deid --llm``) are tested with the annotator's, in
:mod:`tests.platform.test_llm_submissions`."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from nlpbench.store import open_store
from nlpbench.toolapi.cost import percentile
from nlpbench.toolapi.deidentify import DEFAULT_STEPS
from nlpbench.web.app import create_app as create_site
from tests.platform.test_deid_steps import STEPS
from tests.platform.test_llm_submissions import SERVED_AS, gold_mentions, llm_tool, priced, stored_rows
from tests.platform.test_worker import assert_no_text, note_texts, run_worker, shown, submit

pytest.importorskip("rapidfuzz")


def deid_board(db_url: str) -> tuple[dict[str, dict], str]:
    """The ``deid`` leaderboard's lines by team, as ``/tasks/deid.json`` gives them, and its page."""
    opened = open_store(db_url)
    try:
        with TestClient(create_site(opened)) as site:
            return {row["team"]: row for row in site.get("/tasks/deid.json").json()}, site.get("/tasks/deid").text
    finally:
        opened.close()


def test_an_llm_deidentifier_shows_its_grounding_tokens_once_per_note_latency_and_cost(
    cli, nb, dataset, db_url, monkeypatch, tmp_path
):
    priced(nb, tmp_path)
    texts = note_texts(db_url)
    cache = tmp_path / "answers.sqlite"
    with llm_tool(cli, monkeypatch, gold_mentions(db_url), cache, *SERVED_AS["deid"], invent=True) as (url, tokens):
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
    lines, page = deid_board(db_url)
    line = lines["team-a"]
    assert line["tokens in"] == tokens_in and line["unplaced"] == len(dataset) and line["cost USD"] == used["costUsd"]
    assert "<th>tokens in</th>" in page and "<th>cost USD</th>" in page  # the LLM columns, and the cost plot
    assert '<figure class="plot" id="accuracy-cost"><svg' in page and "LLM tool's HIPAA-token recall" in page
    assert_no_text(json.dumps(data) + text, texts)


def test_a_rerun_takes_the_queues_steps_again(cli, nb, dataset, db_url, monkeypatch, tmp_path):
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps(STEPS))
    assert nb("submissions", "queue", "default", "--deid-steps", steps, "--token-budget", 1).exit_code == 0
    cache = tmp_path / "answers.sqlite"
    with llm_tool(cli, monkeypatch, gold_mentions(db_url), cache, *SERVED_AS["deid"], invent=False) as (url, _):
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", url)
        run_worker(nb)
        failed = shown(nb, submission)
        assert failed["status"] == "FAILED" and failed["reason"].startswith("token budget of 1 tokens exceeded")
        assert nb("submissions", "queue", "default", "--default-deid-steps", "--token-budget", 0).exit_code == 0
        assert nb("submissions", "rerun", submission).exit_code == 0
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    (result,) = data["results"]
    assert result["reproducibility"]["deidSteps"] == list(DEFAULT_STEPS)  # a new run: the queue's steps now
    assert data["llm"]["notes"] == len(dataset)  # the failed run's accounts went with it (once an IntegrityError)
