"""LLM tools through the queue (issue 22 §1): ``nlpbench serve --llm`` over the local OpenAI-compatible test
server, submitted with ``nlpbench submit``, run by ``nlpbench worker``, read back with ``submissions show``,
the platform API and the leaderboard — grounding counts, unplaced mentions as false positives, tokens,
latency, cost and the token budget."""

from __future__ import annotations

import csv
import io
import json
from contextlib import ExitStack, contextmanager

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from nlpbench.platform import worker as worker_module
from nlpbench.store import open_store, repository
from nlpbench.store.submissions import NoteAccount, Result, ResultDocument
from nlpbench.toolapi.cost import percentile
from nlpbench.web.app import create_app as create_site
from tests.llm.server import openai_app
from tests.llm.test_llm_tool import serve_llm
from tests.platform.test_worker import assert_no_text, note_texts, run_worker, shown, submit
from tests.toolkit import served

pytest.importorskip("rapidfuzz")

#: A person the notes never name: the dishonest model adds it to every note's answer.
INVENTED = "Zebediah Quux"
PRICES = {"models": {"test-model": {"input": 1.5, "output": 6.0}}}


def gold_mentions(db_url: str) -> dict[str, list[dict[str, str]]]:
    """Each note's text → its gold mentions as the model lists them (text and type, each once)."""
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            texts = {note.id: note.text for note in repository.documents(session, "notes", None)}
            found = {}
            for document in repository.documents(session, "notes", repository.GOLDSTANDARD):
                listed = [{"text": a.text, "type": a.label} for a in document.annotations]
                found[texts[document.id]] = [dict(t) for t in dict.fromkeys(tuple(m.items()) for m in listed)]
            return found
    finally:
        opened.close()


@contextmanager
def llm_tool(cli, monkeypatch, mentions: dict[str, list[dict[str, str]]], cache, *args: str, invent: bool):
    """An LLM tool's URL: ``serve --llm ARGS…`` over a test model that lists the gold mentions (and, with
    ``invent``, one person the note never names), its answers cached in ``cache``; and, once it is closed,
    the tokens in and out of each note as the model counted them."""

    def answer(note: str) -> list[dict[str, str]]:
        return mentions.get(note, []) + ([{"text": INVENTED, "type": "person_name"}] if invent else [])

    model = openai_app(answer)
    tokens: dict[str, tuple[int, int]] = {}
    with ExitStack() as stack:
        url = stack.enter_context(served(model))
        tool = serve_llm(cli, monkeypatch, f"{url}/v1", "--llm-cache", cache, *args)
        yield stack.enter_context(served(tool.app)), tokens
    for call in model.state.calls:  # the test server's usage: characters // 4
        note = next(m["content"] for m in call["messages"] if m["role"] == "user")
        content = json.dumps({"entities": answer(note)})
        tokens[note] = (sum(len(m["content"]) for m in call["messages"]) // 4, len(content) // 4)


def stored_rows(db_url: str, submission: str) -> list[NoteAccount]:
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            query = select(NoteAccount).where(NoteAccount.submission_id == int(submission))
            return list(session.scalars(query.order_by(NoteAccount.note_identifier)))
    finally:
        opened.close()


def fp_by_document(db_url: str, submission: str, annotation_type: str) -> dict[tuple[str, str], int]:
    """The false positives of each (note, metric) of ``annotation_type`` in the submission's stored result."""
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            query = (
                select(ResultDocument)
                .join(Result, Result.id == ResultDocument.result_id)
                .where(Result.submission_id == int(submission), ResultDocument.annotation_type == annotation_type)
            )
            return {(row.document, row.metric): row.counts["fp"] for row in session.scalars(query)}
    finally:
        opened.close()


def priced(nb, tmp_path) -> None:
    """The default queue with the price table :data:`PRICES`."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    configured = nb("submissions", "queue", "default", "--prices", prices)
    assert configured.exit_code == 0 and "prices for 1 models" in configured.stdout


def test_an_llm_tool_reaches_the_leaderboard_with_grounding_tokens_latency_cost_and_invented_mentions_as_fps(
    cli, nb, dataset, db_url, monkeypatch, tmp_path
):
    priced(nb, tmp_path)
    mentions = gold_mentions(db_url)
    texts = note_texts(db_url)
    with (
        llm_tool(cli, monkeypatch, mentions, tmp_path / "honest.sqlite", invent=False) as (honest_url, tokens),
        llm_tool(cli, monkeypatch, mentions, tmp_path / "inventing.sqlite", invent=True) as (inventing_url, _),
    ):
        honest_id = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", honest_url, "--model", "test-model")
        inventing_id = nb("submit", "--team", "team-b", "--task", "phi", "--dataset", "notes",
                          "--tool", inventing_url, "--model", "unpriced-model").stdout.strip()  # fmt: skip
        run_worker(nb)
    honest_data, inventing_data = shown(nb, honest_id), shown(nb, inventing_id)
    assert honest_data["status"] == inventing_data["status"] == "SCORED", inventing_data["reason"]

    # one account row per note, as the tool's headers said
    rows = stored_rows(db_url, inventing_id)
    assert len(rows) == len(dataset)
    for row in rows:
        assert row.unplaced == 1 and row.by_type["person_name"]["unplaced"] == 1, row.by_type
        assert row.exact == sum(counts["exact"] for counts in row.by_type.values()) > 0
    # every invented mention is one false positive of person_name in every metric of its note, nothing else moves
    honest_fp, inventing_fp = (fp_by_document(db_url, s, "person_name") for s in (honest_id, inventing_id))
    assert honest_fp.keys() == inventing_fp.keys() and len(honest_fp) == len(dataset) * 3
    assert all(inventing_fp[key] == honest_fp[key] + 1 for key in honest_fp)
    assert fp_by_document(db_url, honest_id, "date") == fp_by_document(db_url, inventing_id, "date")
    (honest_result,), (inventing_result,) = honest_data["results"], inventing_data["results"]
    overall = {
        r["metric"]: r for r in inventing_result["scores"]["person_name"] if "label" not in r and "average" not in r
    }
    before = {r["metric"]: r for r in honest_result["scores"]["person_name"] if "label" not in r and "average" not in r}
    assert overall["token"]["fp"] == before["token"]["fp"] + len(dataset)
    assert overall["token"]["precision"] == overall["token"]["tp"] / (overall["token"]["tp"] + overall["token"]["fp"])
    assert f"{len(dataset)} person_name mentions the tool could not place" in " ".join(inventing_result["warnings"])
    ranked = [i for i in inventing_result["intervals"] if i["type"] == "person_name" and i["ranked"]]
    assert ranked[0]["value"] == overall["token"]["f1"] < 1.0  # the interval and rank are of the charged counts

    # usage: grounding totals, tokens, latency percentiles per note, cost from the queue's price table
    used = honest_data["llm"]
    tokens_in, tokens_out = (sum(tokens[text][side] for text in texts) for side in (0, 1))
    latencies = [row.latency_ms for row in stored_rows(db_url, honest_id)]
    assert used["notes"] == len(dataset) and used["tokensIn"] == tokens_in and used["tokensOut"] == tokens_out
    assert used["latencyMs"] == {f"p{p}": percentile(latencies, p) for p in (50, 95, 99)}
    assert used["grounding"]["unplaced"] == 0 and inventing_data["llm"]["grounding"]["unplaced"] == len(dataset)
    assert used["costUsd"] == pytest.approx((tokens_in * 1.5 + tokens_out * 6.0) / 1e6)
    assert inventing_data["llm"]["costUsd"] is None and inventing_data["llm"]["model"] == "unpriced-model"
    text = nb("submissions", "show", honest_id).stdout
    assert f"LLM: {len(dataset)} notes (0 cached); mentions placed exact" in text and "; cost $" in text
    assert_no_text(json.dumps(inventing_data) + text, texts)

    # the leaderboard: each line's grounding counts, tokens, latency and cost
    opened = open_store(db_url)
    with TestClient(create_site(opened)) as site:
        board = {row["team"]: row for row in site.get("/tasks/phi.json").json()}
        assert board["team-a"]["tokens in"] == tokens_in and board["team-a"]["cost USD"] == used["costUsd"]
        assert board["team-b"]["unplaced"] == len(dataset) and board["team-b"]["cost USD"] is None
        assert board["team-a"]["latency p95 ms"] == used["latencyMs"]["p95"]
        header = site.get("/tasks/phi.csv").text.splitlines()[0].split(",")
        assert "exact" in header and "tokens out" in header and header[-1] == "submitted"
        page = site.get("/tasks/phi").text
        assert "<th>unplaced</th>" in page and "<th>cost USD</th>" in page
        # the accuracy-against-cost plot, inline (priced tools only: team-b's model has no price)
        assert '<figure class="plot" id="accuracy-cost"><svg' in page and "cost (US dollars" in page
        submission_page = site.get(f"/submissions/{honest_id}").text
        assert f"{tokens_in} in, {tokens_out} out" in submission_page
        assert site.get(f"/submissions/{honest_id}.json").json()["llm"]["tokensIn"] == tokens_in
        exported = list(csv.DictReader(io.StringIO(site.get("/tasks/phi.csv").text)))
        assert {row["team"]: row["unplaced"] for row in exported} == {"team-a": "0", "team-b": str(len(dataset))}
    opened.close()


def rewriting_headers(app, rewrite):
    """``app`` with each ``X-Nlpbench-Account`` header it sends replaced by ``rewrite(path, value)``."""

    async def wrapped(scope, receive, send):
        async def sending(message):
            if message["type"] == "http.response.start":
                headers = [
                    (name, rewrite(scope["path"], value.decode()).encode() if name == b"x-nlpbench-account" else value)
                    for name, value in message["headers"]
                ]
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, sending)

    return wrapped


@pytest.mark.parametrize(
    ("rewrite", "said"),
    [
        (lambda _path, value: value.replace("tokens-in=", "tokens-in=SECRET"), "tokens-in is not a count"),
        (lambda _path, value: value.replace("tokens-out=", "tokens-out=4444444444444"), "more than the 12 digits"),
        (lambda _path, value: value.replace("cached=0", "cached=7"), "cached is 0 or 1"),
        (lambda _path, value: value + "; SECRET=1", "has a field that is not one of"),
        (lambda _path, value: value + "; " + "x" * 400, "over the 400 an account takes"),
        (lambda path, value: value.replace("tokens-in=", "tokens-in=1") if "Date" in path else value,
         "give different tokens, latency or caching"),
    ],
)  # fmt: skip
def test_a_bad_account_header_fails_the_submission_in_one_line_quoting_no_value(
    cli, nb, dataset, db_url, monkeypatch, tmp_path, rewrite, said
):
    model = openai_app(lambda _note: [{"text": INVENTED, "type": "person_name"}])
    with served(model) as url:
        tool = serve_llm(cli, monkeypatch, f"{url}/v1", "--llm-cache", tmp_path / "answers.sqlite")
        with served(rewriting_headers(tool.app, rewrite)) as tool_url:
            submission = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", tool_url)
            run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] in ("INVALID", "FAILED") and said in data["reason"]
    # the value's digits, more of them than any port number the message names
    assert "\n" not in data["reason"] and "SECRET" not in data["reason"] and "4444444" not in data["reason"]
    assert stored_rows(db_url, submission) == []


#: The tasks an LLM tool runs, each with what ``nlpbench serve --llm`` is told to serve it as.
SERVED_AS = {"phi": (), "deid": ("--annotator", "deidentifier")}


@pytest.mark.parametrize("task", sorted(SERVED_AS))
def test_a_run_past_its_token_budget_stops_failed_saying_so(cli, nb, dataset, db_url, monkeypatch, tmp_path, task):
    mentions = gold_mentions(db_url)
    cache = tmp_path / "answers.sqlite"
    with llm_tool(cli, monkeypatch, mentions, cache, *SERVED_AS[task], invent=False) as (url, _):
        configured = nb("submissions", "queue", "default", "--token-budget", 3000)
        assert configured.exit_code == 0 and "token budget 3000" in configured.stdout
        submission = submit(nb, "--task", task, "--dataset", "notes", "--tool", url)
        # a batch written after every note, as a slow store's flush deadline makes it: a note's tokens still
        # count (they were once counted only when the note's batch had not been written yet)
        monkeypatch.setattr(worker_module, "FLUSH_SECONDS", 0)
        run_worker(nb)
    data = shown(nb, submission)
    spent = [row.tokens_in + row.tokens_out for row in stored_rows(db_url, submission)]
    assert data["status"] == "FAILED"
    assert data["reason"] == (
        f"token budget of 3000 tokens exceeded ({sum(spent)} tokens spent) after {len(spent)} of {len(dataset)} notes"
    )
    assert 1 < len(spent) < len(dataset)  # notes were answered, then the run stopped mid-way
    assert sum(spent[:-1]) <= 3000 < sum(spent)  # at the note that crossed the budget
    assert data["progress"]["done"] == len(spent) and data["llm"]["notes"] == len(spent)
    unlimited = nb("submissions", "queue", "default", "--token-budget", 0)
    assert "token budget none" in unlimited.stdout


@pytest.mark.parametrize(
    ("task", "name", "kind"),
    [("phi", "llm-test-model", "nlpsandbox:phi-annotator"),
     ("deid", "llm-test-model-deidentifier", "nlpsandbox:phi-deidentifier")],
)  # fmt: skip
def test_an_organisers_endpoint_is_served_by_the_worker_and_scored(
    nb, dataset, db_url, tmp_path, monkeypatch, task, name, kind
):
    mentions = gold_mentions(db_url)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # where the served tool caches answers
    model = openai_app(lambda note: [*mentions.get(note, []), {"text": INVENTED, "type": "person_name"}])
    with served(model) as url:
        submission = submit(nb, "--task", task, "--dataset", "notes", "--llm", f"{url}/v1", "--model", "test-model")
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["kind"] == "llm" and (data["tool"]["name"], data["tool"]["type"]) == (name, kind)
    assert data["llm"]["notes"] == len(dataset) and data["llm"]["grounding"]["unplaced"] == len(dataset)
    (result,) = data["results"]
    assert result["reproducibility"]["model"] == "test-model"
    assert result["reproducibility"]["template"] == "phi-entities-v1"
    assert result["reproducibility"]["tool"]["version"].startswith("1.0.0+")  # the template's hash
    assert len(model.state.calls) >= len(dataset)
    opened = open_store(db_url)  # from submission to the task's leaderboard row, with the model's tokens
    with TestClient(create_site(opened)) as site:
        (line,) = site.get(f"/tasks/{task}.json").json()
    opened.close()
    assert line["tokens in"] == data["llm"]["tokensIn"] and line["unplaced"] == len(dataset)
    assert submission in {str(value) for key, value in line.items() if key.endswith(" submission")}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--llm", "http://127.0.0.1:9/v1"), "an LLM endpoint's submission names its model"),
        (("--llm", "http://127.0.0.1:9/v1", "--model", "m", "--template", "nope"), "no prompt template 'nope'"),
        (("--tool", "http://127.0.0.1:9", "--template", "phi-entities-v1"), "a prompt template goes with an LLM"),
        (("--llm", "ftp://x/v1", "--model", "m"), "--llm"),
        (("--tool", "http://127.0.0.1:9", "--model", "m\x07"), "a model's name is 1 to 120 printable characters"),
    ],
)
def test_an_llm_submission_that_cannot_be_run_is_refused_in_one_line(nb, dataset, args, said):
    refused = nb("submit", "--team", "team-a", "--task", "phi", "--dataset", "notes", *args)
    assert refused.exit_code == 2 and said in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
