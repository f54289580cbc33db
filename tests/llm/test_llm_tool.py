"""An LLM endpoint as an NLP Sandbox tool (issue 22 §1), against the local OpenAI-compatible server of
:mod:`tests.llm.server`: through ``nlpbench serve --llm`` and HTTP, then ``nlpbench annotate`` and ``score``."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import pytest

from nlpbench import formats
from nlpbench.annotators.llm import LLMAnnotator, prompts
from nlpbench.annotators.llm.cache import AnswerCache
from nlpbench.annotators.llm.client import ChatClient
from nlpbench.api.tool import create_app
from nlpbench.model import Annotation, Document, Span
from nlpbench.toolapi.account import HEADER, Account
from tests.llm.server import openai_app, regex_entities
from tests.toolkit import AsgiClient, served

pytest.importorskip("rapidfuzz")

NOTE = "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle. Prescott called back on 12/27/2020."
INVENTED = "Max Caulfield"


def note_body(text: str = NOTE, identifier: str = "n-1") -> dict:
    return {"note": {"identifier": identifier, "text": text, "type": "t", "patientId": "p-1"}}


def _capture_uvicorn(monkeypatch) -> dict:
    calls = {}

    def run(server, sockets):
        calls.update(app=server.config.app)

    monkeypatch.setattr("uvicorn.Server.run", run)
    return calls


def serve_llm(cli, monkeypatch, url: str, *args) -> AsgiClient:
    """``nlpbench serve --llm URL --model test-model ARGS…`` as the command builds it, as a client of its app."""
    calls = _capture_uvicorn(monkeypatch)
    result = cli("serve", "--llm", url, "--model", "test-model", "--port", "0", *args)
    assert result.exit_code == 0, result.stderr
    assert f"model test-model at {url} (" in result.stderr
    monkeypatch.undo()  # uvicorn serves again (the test may serve the app)
    return AsgiClient(calls["app"])


def test_templates_are_listed_by_name_with_the_hash_of_their_files(cli):
    result = cli("llm", "templates")
    assert result.exit_code == 0
    folder = resources.files("nlpbench.annotators.llm") / "templates"
    data = (folder / "phi-entities-v1.json").read_bytes() + b"\0" + (folder / "phi-entities-v1.txt").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert result.stdout == f"phi-entities-v1\t1.0.0\tsha256:{digest}\tdate,person_name,location,id,contact\n"


def test_serve_llm_answers_every_occurrence_with_the_account_header(cli, monkeypatch, endpoint, tmp_path):
    app, url = endpoint
    client = serve_llm(cli, monkeypatch, url, "--llm-cache", tmp_path / "answers.sqlite")
    tool = client.get("/api/v1/tool").json()
    template = prompts.load("phi-entities-v1")
    assert tool["type"] == "nlpsandbox:phi-annotator" and tool["name"] == "llm-test-model"
    assert tool["version"] == f"1.0.0+{template.sha256[:12]}" and template.sha256 in tool["description"]
    names = client.post("/api/v1/textPersonNameAnnotations", json=note_body())
    dates = client.post("/api/v1/textDateAnnotations", json=note_body())
    assert [(a["start"], a["text"]) for a in names.json()["textPersonNameAnnotations"]] == [
        (19, "Chloe Price"),
        (44, "Prescott"),
        (65, "Prescott"),  # listed once by the model, placed at both occurrences
    ]
    assert [a["text"] for a in dates.json()["textDateAnnotations"]] == ["12/26/2020", "12/27/2020"]
    assert len(app.state.calls) == 1  # one model call serves the note's five endpoints
    sent = app.state.calls[0]
    assert sent["model"] == "test-model" and sent["temperature"] == 0
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["messages"] == [{"role": "system", "content": template.system}, {"role": "user", "content": NOTE}]
    person, date = Account.parse(names.headers[HEADER]), Account.parse(dates.headers[HEADER])
    assert (person.exact, person.normalised, person.fuzzy, person.unplaced) == (2, 0, 0, 0)
    assert (date.exact, date.unplaced) == (2, 0)
    usage = json.dumps({"entities": regex_entities(NOTE)})
    assert person.tokens_in == (len(template.system) + len(NOTE)) // 4 and person.tokens_out == len(usage) // 4
    assert person.tokens_in == date.tokens_in and person.cached == 0


def test_grounding_counts_normalised_fuzzy_and_invented_mentions():
    entities = [
        {"text": "12/26/2020", "type": "date"},
        {"text": "12/26/2020", "type": "date"},  # listed twice: placed and counted once
        {"text": "CHLOE  price", "type": "person_name"},
        {"text": "Prescot", "type": "person_name"},
        {"text": INVENTED, "type": "person_name"},
        {"text": "Arcadia Bay", "type": "location"},
        {"text": "Ann", "type": "person_name"},  # not in "Annual": words are not split
        {"text": "42 years", "type": "age"},  # a type the template does not ask for: ignored
    ]
    text = "Annual visit. " + NOTE
    with served(openai_app(lambda _note: entities)) as url:
        annotator = LLMAnnotator(ChatClient(f"{url}/v1", "m"), prompts.load("phi-entities-v1"))
        found, accounts = annotator.annotate_accounted(Document("n-1", text))
    placed = [(a.label, a.text, a.confidence) for a in found]
    assert placed == [
        ("date", "12/26/2020", 95.0),
        ("person_name", "Chloe Price", 85.0),
        ("person_name", "Prescott", 70.0),
        ("person_name", "Prescott", 70.0),
    ]
    person = accounts["person_name"]
    assert (person.exact, person.normalised, person.fuzzy, person.unplaced) == (0, 1, 1, 2)
    assert (accounts["location"].unplaced, accounts["date"].exact, accounts["id"]) == (1, 1, Account(
        tokens_in=person.tokens_in, tokens_out=person.tokens_out, latency_ms=person.latency_ms))  # fmt: skip


def test_a_rate_limited_endpoint_is_waited_for_then_refused_with_retry_after(endpoint):
    app, url = endpoint
    app.state.rate_limits = 1
    annotator = LLMAnnotator(ChatClient(url, "m", retries=1), prompts.load("phi-entities-v1"))
    client = AsgiClient(create_app(annotator))
    answered = client.post("/api/v1/textDateAnnotations", json=note_body())
    assert answered.status_code == 200 and annotator.client.rate_limited == 1 and len(app.state.calls) == 2
    app.state.rate_limits = 5
    refused = client.post("/api/v1/textDateAnnotations", json=note_body(NOTE + " "))
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert refused.json()["detail"] == "model m: the endpoint is rate-limited (HTTP 429, 2 attempts)"


def test_a_malformed_answer_is_a_502_naming_the_model_and_its_size_never_its_text(endpoint, tmp_path):
    app, url = endpoint
    app.state.malformed = True
    cache = AnswerCache(tmp_path / "answers.sqlite")
    client = AsgiClient(create_app(LLMAnnotator(ChatClient(url, "m"), prompts.load("phi-entities-v1"), cache)))
    response = client.post("/api/v1/textPersonNameAnnotations", json=note_body())
    assert response.status_code == 502 and response.headers["content-type"] == "application/problem+json"
    content = json.dumps({"entities": regex_entities(NOTE)})
    size = len(content[: len(content) // 2])
    assert response.json()["detail"] == f"model m: its answer ({size} bytes) is not JSON"
    assert "Chloe" not in response.text and len(cache) == 0  # never cached: asked again next time
    app.state.malformed = False
    assert client.post("/api/v1/textPersonNameAnnotations", json=note_body()).status_code == 200
    assert len(app.state.calls) == 2 and len(cache) == 1


def test_an_endpoint_without_json_schema_output_is_asked_without_it_and_fenced_json_is_read(endpoint):
    app, url = endpoint
    app.state.reject_schema = True
    app.state.fenced = True
    client = AsgiClient(create_app(LLMAnnotator(ChatClient(url, "m"), prompts.load("phi-entities-v1"))))
    first = client.post("/api/v1/textDateAnnotations", json=note_body())
    second = client.post("/api/v1/textDateAnnotations", json=note_body(NOTE + " "))
    assert first.status_code == second.status_code == 200
    assert len(first.json()["textDateAnnotations"]) == 2
    assert ["response_format" in call for call in app.state.calls] == [True, False, False]


def test_a_rerun_costs_nothing_its_answers_come_from_the_cache(endpoint, tmp_path):
    app, url = endpoint
    template = prompts.load("phi-entities-v1")

    def ask():
        cache = AnswerCache(tmp_path / "answers.sqlite")
        client = AsgiClient(create_app(LLMAnnotator(ChatClient(url, "m"), template, cache)))
        return client.post("/api/v1/textDateAnnotations", json=note_body())

    first, second = ask(), ask()
    assert len(app.state.calls) == 1 and first.json() == second.json()
    cold, warm = Account.parse(first.headers[HEADER]), Account.parse(second.headers[HEADER])
    assert (cold.cached, warm.cached) == (0, 1) and (cold.tokens_in, cold.latency_ms) == (
        warm.tokens_in,
        warm.latency_ms,
    )
    other_model = LLMAnnotator(ChatClient(url, "m2"), template, AnswerCache(tmp_path / "answers.sqlite"))
    AsgiClient(create_app(other_model)).post("/api/v1/textDateAnnotations", json=note_body())
    assert len(app.state.calls) == 2  # the model is part of the key


def test_serve_llm_bad_options_are_one_line(cli, tmp_path):
    cases = {
        ("--llm", "http://127.0.0.1:9/v1"): "--llm URL needs --model NAME: the model the endpoint serves",
        ("--llm", "ftp://x/v1", "--model", "m"): "--llm: 'ftp://x/v1' is a ftp:// URL; a tool is reached at",
        ("--llm", "http://x/v1", "--model", "m", "--template", "nope"): "--template: unknown prompt template 'nope'",
        ("--llm", "http://x/v1", "--model", "m", "--types", "dates"): "--types: dates; choose from date, person_name",
        ("--llm", "http://x/v1", "--model", "m", "--annotator", "date"): "give --annotator NAME",
    }
    for args, message in cases.items():
        result = cli("serve", *args, "--port", "0", "--llm-cache", tmp_path / "c.sqlite")
        assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, args
        assert result.stderr.startswith(f"nlpbench: error: {message}"), (args, result.stderr)


def test_serve_llm_for_one_type_is_a_date_annotator(cli, monkeypatch, endpoint, tmp_path):
    _, url = endpoint
    client = serve_llm(cli, monkeypatch, url, "--types", "date", "--no-llm-cache")
    assert client.get("/api/v1/tool").json()["type"] == "nlpsandbox:date-annotator"
    assert client.post("/api/v1/textPersonNameAnnotations", json=note_body()).status_code == 404


def test_serve_llm_then_annotate_and_score_through_the_command_line(cli, monkeypatch, endpoint, tmp_path):
    _, url = endpoint
    texts = [NOTE, "Dr. Prescott wrote on 1/2/2021 to Ms. Rachel Amber."]
    gold = [
        Document("note-0", texts[0], [Annotation("note-0", Span(3, 13), "date", "12/26/2020")],
                 metadata={"patientId": "p-1"}),
        Document("note-1", texts[1], [Annotation("note-1", Span(22, 30), "date", "1/2/2021")],
                 metadata={"patientId": "p-1"}),
    ]  # fmt: skip
    bundles = tmp_path / "notes.json"
    formats.get("sandbox-bundles").write(gold, bundles)
    tool = serve_llm(cli, monkeypatch, url, "--llm-cache", tmp_path / "answers.sqlite")
    out = tmp_path / "pred.json"
    with served(tool.app) as tool_url:
        result = cli("annotate", "--tool", tool_url, "--notes", bundles, "--output", out, "--types", "date")
    assert result.exit_code == 0, result.stderr
    scored = cli("score", "sandbox", "--gold", bundles, "--gold-format", "sandbox-bundles", "--pred", out,
                 "--annotation-type", "date", "--format", "json")  # fmt: skip
    assert scored.exit_code == 0, scored.stderr
    strict = next(row for row in json.loads(scored.stdout)["scores"] if row["metric"] == "instance_strict")
    assert (strict["tp"], strict["fp"], strict["fn"]) == (2, 1, 0)  # 12/27/2020 is not in this gold


def test_annotate_sums_an_llm_tools_accounts_into_tokens_latency_and_cost(cli, monkeypatch, tmp_path):
    entities = lambda note: [*regex_entities(note), {"text": INVENTED, "type": "person_name"}]  # noqa: E731
    app_answers = openai_app(entities)
    bundles = tmp_path / "notes.json"
    docs = [Document(f"note-{i}", text, metadata={"patientId": "p-1"}) for i, text in enumerate([NOTE, NOTE + "!"])]
    formats.get("sandbox-bundles").write(docs, bundles)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"test-model": {"input": 1.0, "output": 2.0}}}))
    with served(app_answers) as answers_url:
        tool = serve_llm(cli, monkeypatch, f"{answers_url}/v1", "--no-llm-cache")
        with served(tool.app) as tool_url:
            result = cli("annotate", "--tool", tool_url, "--notes", bundles, "--output", tmp_path / "pred.json",
                         "--prices", prices, "--model", "test-model")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    template = prompts.load("phi-entities-v1")
    tokens_in = sum((len(template.system) + len(text)) // 4 for text in (NOTE, NOTE + "!"))
    tokens_out = 2 * (len(json.dumps({"entities": entities(NOTE)})) // 4)
    line = next(line for line in result.stderr.splitlines() if line.startswith("LLM: "))
    assert line.startswith(
        f"LLM: 2 notes (0 cached): mentions placed exactly 8, normalised 0, fuzzily 0, unplaced 2; "
        f"tokens {tokens_in} in, {tokens_out} out; latency per note p50 "
    )
    assert line.endswith(f" ms; cost ${(tokens_in * 1.0 + tokens_out * 2.0) / 1e6:.4f}")
    assert INVENTED not in result.stderr
    bad = cli("annotate", "--tool", "http://x", "--notes", bundles, "--output", tmp_path / "o.json",
              "--prices", prices)  # fmt: skip
    assert bad.exit_code == 2 and "--prices needs --model NAME" in bad.stderr
