"""``nlpbench serve`` and ``nlpbench annotate`` through the command line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from nlpbench import formats
from nlpbench.annotators import REGISTRY
from nlpbench.api.tool import create_app
from nlpbench.model import Annotation, Document, Span
from nlpbench.tasks.sandbox import score_sandbox
from tests.toolkit import AsgiClient, RegexPhi, local_cluster, served

TEXTS = [
    "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle.",
    "Mary Williamson (SSN 123-45-6789) came back on March 3, 2021.",
    "Call (206) 555-0101 or write to mary@example.org before 1/2/2021.",
]


@pytest.fixture
def registered(monkeypatch):
    """The test annotator, registered as ``regex`` for the duration of a test."""
    monkeypatch.setitem(REGISTRY._items, "regex", RegexPhi)
    return "regex"


@pytest.fixture
def bundles(tmp_path):
    """Three notes with gold dates (the first one misses a date on purpose) as patient bundles."""
    documents = []
    for i, text in enumerate(TEXTS):
        gold = [a for a in RegexPhi().annotate(Document(f"note-{i}", text)) if a.label == "date"]
        documents.append(Document(f"note-{i}", text, gold[i == 0 :], metadata={"patientId": "p-1"}))
    path = tmp_path / "notes.json"
    formats.get("sandbox-bundles").write(documents, path)
    return path


def _capture_uvicorn(monkeypatch) -> dict:
    """Replace uvicorn's serving loop: record the app and the sockets it would serve."""
    calls = {}

    def run(server, sockets):
        calls.update(app=server.config.app, address=sockets[0].getsockname()[:2])

    monkeypatch.setattr("uvicorn.Server.run", run)
    return calls


def test_serve_builds_the_app_and_runs_uvicorn(cli, registered, monkeypatch):
    calls = _capture_uvicorn(monkeypatch)
    result = cli("serve", "--annotator", registered, "--port", "0")
    assert result.exit_code == 0
    host, port = calls["address"]
    assert host == "127.0.0.1" and port > 0  # bound before the banner: port 0 is shown as the one given
    assert AsgiClient(calls["app"]).get("/api/v1/tool").json()["name"] == "regex-phi"
    assert "serving regex" in result.stderr and f"http://127.0.0.1:{port}/api/v1" in result.stderr


def test_serve_on_a_port_in_use_is_one_line_and_no_banner(cli, registered, monkeypatch):
    calls = _capture_uvicorn(monkeypatch)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = cli("serve", "--annotator", registered, "--port", port)
    assert result.exit_code == 2 and not calls
    assert result.stderr.splitlines() == [f"nlpbench: error: cannot listen on 127.0.0.1:{port}: Address already in use"]
    unknown = cli("serve", "--annotator", registered, "--host", "no-such-host.invalid", "--port", "0")
    assert unknown.exit_code == 2 and len(unknown.stderr.splitlines()) == 1
    assert unknown.stderr.startswith("nlpbench: error: cannot listen on no-such-host.invalid:0: ")


def test_serve_passes_its_limits_to_the_app(cli, registered, monkeypatch):
    calls = _capture_uvicorn(monkeypatch)
    args = ("--max-body-bytes", "2000", "--cache-bytes", "5000", "--port", "0")
    assert cli("serve", "--annotator", registered, *args).exit_code == 0
    client = AsgiClient(calls["app"])
    assert calls["app"].state.note_cache.max_bytes == 5000
    note = {"identifier": "n-1", "text": "x" * 3000, "type": "t", "patientId": "p-1"}
    response = client.post("/api/v1/textDateAnnotations", json={"note": note})
    assert response.status_code == 413 and response.json()["detail"] == (
        "the request body is over the 2000 bytes this service accepts"
    )


def test_serve_the_deidentifier_on_a_phi_annotator(cli, registered, monkeypatch):
    calls = _capture_uvicorn(monkeypatch)
    assert cli("serve", "--annotator", "deidentifier", "--phi-annotator", registered, "--port", "0").exit_code == 0
    client = AsgiClient(calls["app"])
    assert client.get("/api/v1/tool").json()["type"] == "nlpsandbox:phi-deidentifier"
    body = {
        "note": {"identifier": "n-1", "text": TEXTS[0], "type": "t", "patientId": "p-1"},
        "deidentificationSteps": [{"redactConfig": {}, "annotationTypes": ["text_person_name"]}],
    }
    text = client.post("/api/v1/deidentifiedNotes", json=body).json()["deidentifiedNote"]["text"]
    assert text == "On 12/26/2020, Ms.  met with Dr.  in Seattle."


def test_serve_lists_and_refuses_unknown_names(cli, registered):
    listed = cli("serve", "--list").stdout.split()
    assert "regex" in listed and listed[-1] == "deidentifier"
    result = cli("serve", "--annotator", "nope")
    assert result.exit_code == 2
    assert result.stderr.startswith("nlpbench: error: unknown annotator 'nope'; known: ")


def test_serve_runs_a_real_server(tmp_path):
    pytest.importorskip("philter_lite")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "nlpbench", "serve", "--annotator", "philter", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                tool = httpx.get(f"{url}/", follow_redirects=True).json()
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read()
                assert time.monotonic() < deadline, "the server did not start within 60 s"
                time.sleep(0.2)
        assert tool["name"] == "philter-lite"
        note = {"identifier": "n-1", "text": TEXTS[0], "type": "t", "patientId": "p-1"}
        dates = httpx.post(f"{url}/api/v1/textDateAnnotations", json={"note": note}).json()
        assert dates["textDateAnnotations"][0]["text"] == "12/26/2020"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)


def test_annotate_writes_records_that_score_sandbox_reads(cli, bundles, tmp_path):
    out = tmp_path / "pred.json"
    with served(create_app(RegexPhi())) as url:
        result = cli("annotate", "--tool", url, "--notes", bundles, "--out", out, "--concurrency", "2")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{out}: wrote 3 notes, 11 annotations\n"
    assert "regex-phi 1.0.0 (nlpsandbox:phi-annotator): 3 notes, 11 annotations" in result.stderr
    assert not (tmp_path / "pred.json.checkpoint.jsonl").exists()
    records = json.loads(out.read_text())
    assert [r["name"] for r in records] == ["note-0", "note-1", "note-2"]
    assert records[0]["textDateAnnotations"] == [
        {"start": 3, "length": 10, "text": "12/26/2020", "confidence": 90.0, "dateFormat": "MM/DD/YYYY"}
    ]
    report = score_sandbox(bundles, out, "date", gold_format="sandbox-bundles").as_dict()
    strict = next(row for row in report["scores"] if row["metric"] == "instance_strict" and "label" not in row)
    assert (strict["tp"], strict["fp"], strict["fn"]) == (2, 1, 0)


def test_annotate_resumes_and_asks_only_for_the_types_given(cli, bundles, tmp_path):
    out = tmp_path / "pred.json"
    checkpoint = tmp_path / "cp.jsonl"
    with served(create_app(RegexPhi())) as url:
        first = cli("annotate", "--tool", url, "--notes", bundles, "--out", out, "--types", "id,contact")
        assert first.exit_code == 0
        # a checkpoint that already holds note-1 (with an annotation the tool would not give)
        from nlpbench.runner.checkpoint import _annotation_json, header, text_hash

        planted = Annotation("note-1", Span(0, 4), "id", "Mary", {"idType": "other"}, 1.0)
        identity = header(f"{url}/api/v1", "regex-phi", "1.0.0", "nlpsandbox:phi-annotator", ("id", "contact"))
        note_1 = Document("note-1", TEXTS[1])
        lines = [identity, {"id": "note-1", "sha256": text_hash(note_1), "annotations": [_annotation_json(planted)]}]
        checkpoint.write_text("".join(json.dumps(line) + "\n" for line in lines))
        args = ("annotate", "--tool", url, "--notes", bundles, "--out", out, "--types", "id,contact")
        second = cli(*args, "--checkpoint", checkpoint)
    assert second.exit_code == 0, second.stderr
    assert "1 from the checkpoint" in second.stderr
    records = {r["name"]: r for r in json.loads(out.read_text())}
    assert records["note-1"]["textIdAnnotations"] == [
        {"start": 0, "length": 4, "text": "Mary", "confidence": 1.0, "idType": "other"}
    ]
    assert records["note-2"]["textContactAnnotations"][0]["contactType"] == "phone"
    assert all(r["textDateAnnotations"] == [] for r in records.values())


def test_annotate_errors_are_one_line(cli, bundles, tmp_path):
    result = cli("annotate", "--tool", "http://127.0.0.1:9", "--notes", bundles, "--out", tmp_path / "o.json",
                 "--retries", "0")  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "GET /healthCheck: cannot reach the tool" in result.stderr
    assert "run again to resume" not in result.stderr  # no checkpoint was started
    bad_types = cli(
        "annotate", "--tool", "http://x", "--notes", bundles, "--out", tmp_path / "o.json", "--types", "dates"
    )
    assert bad_types.exit_code == 2 and "--types: dates; choose from date, person_name" in bad_types.stderr


def test_annotate_needs_note_texts(cli, tmp_path):
    records = tmp_path / "records.json"
    formats.get("sandbox").write([Document("note-1", None, [])], records)
    with served(create_app(RegexPhi())) as url:
        result = cli(
            "annotate", "--tool", url, "--notes", records, "--notes-format", "sandbox", "--out", tmp_path / "o"
        )
    assert result.exit_code == 2
    assert "note-1: this note has no text to send" in result.stderr


def test_python_m_nlpbench_is_the_cli():
    result = subprocess.run([sys.executable, "-m", "nlpbench", "serve", "--list"], capture_output=True, text=True,
                            env={**os.environ}, timeout=120)  # fmt: skip
    assert result.returncode == 0 and result.stdout.split()[-1] == "deidentifier"


def test_annotate_on_a_dask_cluster(cli, bundles, tmp_path):
    pytest.importorskip("distributed")
    local, on_dask = tmp_path / "local.json", tmp_path / "dask.json"
    cluster = local_cluster(n_workers=1, threads_per_worker=2, processes=False)
    with cluster, served(create_app(RegexPhi())) as url:
        assert cli("annotate", "--tool", url, "--notes", bundles, "--out", local).exit_code == 0
        args = ("--executor", "dask", "--scheduler", cluster.scheduler_address, "--batch-size", "2")
        result = cli("annotate", "--tool", url, "--notes", bundles, "--out", on_dask, *args)
    assert result.exit_code == 0, result.stderr
    assert on_dask.read_text() == local.read_text()
    alone = cli("annotate", "--tool", url, "--notes", bundles, "--out", on_dask, "--executor", "dask")
    assert alone.exit_code == 2 and "--executor dask and --scheduler ADDRESS go together" in alone.stderr
