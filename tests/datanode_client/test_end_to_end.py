"""annotate, run and score sandbox against a real ``nlpbench datanode serve`` on 127.0.0.1.

The data node is seeded the way the NLP Sandbox seeded its own: nlpbench's
patient bundles (``sandbox-seed``) pushed with the official client library (nlpsandbox-client
4.3.1) through the calls of its ``examples/push_dataset.py``, which also shows
that the bundles carry what that script needs (``noteId``, a confidence, no
``identifier`` or ``name`` its create requests refuse).
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from nlpbench import annotators, formats, synth
from nlpbench.api.tool import create_app
from nlpbench.formats import datanode
from nlpbench.model import PHI_TYPES
from tests.datanode.server import push_bundles
from tests.toolkit import DatesOnly, served

NOTES = 12
DATASET = "synth-12"
PHI = ("date", "person_name", "location", "id", "contact")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> Path:
    """The first notes of the embedded synthetic set with their PHI gold, as nlpbench writes patient bundles."""
    dataset = synth.embedded()[:NOTES]
    for note in dataset:
        note.annotations = [a for a in note.annotations if a.label in PHI]
        for annotation in note.annotations:  # the 1.2.0 schema has no subtype of person names: no data node keeps it
            annotation.attributes.pop("personType", None)
    path = tmp_path_factory.mktemp("bundles") / "notes.json"
    formats.get("sandbox-seed").write(dataset, path)  # the official client wants a confidence on every annotation
    return path


@contextmanager
def serving(db: str) -> Iterator[str]:
    """``nlpbench datanode serve --db DB`` on a free port of 127.0.0.1; yields its API URL."""
    port = free_port()
    command = [sys.executable, "-m", "nlpbench", "datanode", "serve", "--db", db, "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{api}/healthCheck").raise_for_status()
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read()
                assert time.monotonic() < deadline, "the data node did not start within 60 s"
                time.sleep(0.2)
        yield api
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def node(tmp_path_factory, bundles):
    """``nlpbench datanode serve`` on a SQLite file, seeded from the bundles; yields (API URL, database URL)."""
    pytest.importorskip("nlpsandboxclient")
    db = f"sqlite:///{tmp_path_factory.mktemp('node') / 'node.db'}"
    with serving(db) as api:
        push_bundles(api, DATASET, bundles)
        yield api, db


@pytest.fixture(scope="module")
def tool():
    """nlpbench's baseline PHI annotator as an NLP Sandbox tool."""
    annotators.load_all()
    with served(create_app(annotators.REGISTRY.get("phi")())) as url:
        yield url


def store(api: str, kind: str, name: str) -> str:
    return f"{api}/datasets/{DATASET}/{kind}/{name}"


def note_texts(bundles: Path) -> list[str]:
    return [note.text for note in formats.get("sandbox-bundles").read(bundles)]


def test_annotate_from_a_data_node_into_an_annotation_store(cli, node, tool, bundles, tmp_path, monkeypatch):
    api, _ = node
    monkeypatch.chdir(tmp_path)  # where the data node's default checkpoint goes
    notes, out = store(api, "fhirStores", "evaluation"), store(api, "annotationStores", "submission-1")
    result = cli("annotate", "--tool", tool, "--notes", notes, "--out", f"datanode:{out}")
    assert result.exit_code == 0, result.stderr
    from_file = cli("annotate", "--tool", tool, "--notes", bundles, "--out", tmp_path / "pred.json")
    assert from_file.exit_code == 0, from_file.stderr
    count = from_file.stdout.split(": wrote ")[1]
    assert result.stdout == f"{out}: wrote {count}"
    assert not list(tmp_path.glob("*.checkpoint.jsonl"))

    # read back over HTTP: one record per note, named by the note's resource name, equal to the file's records
    page = httpx.get(f"{out}/annotations", params={"limit": 100}).json()
    assert page["totalResults"] == NOTES
    first = page["annotations"][0]
    assert first["annotationSource"]["resourceSource"]["name"] == (
        f"datasets/{DATASET}/fhirStores/evaluation/fhir/Note/{first['name'].rsplit('/', 1)[-1]}"
    )
    stored = {d.id: d.annotations for d in formats.get("sandbox").read(write(tmp_path / "stored.json", page))}
    written = {d.id: d.annotations for d in formats.get("sandbox").read(tmp_path / "pred.json")}
    assert stored == written

    again = cli("annotate", "--tool", tool, "--notes", notes, "--out", f"datanode:{out}")
    assert again.exit_code == 0, again.stderr
    assert again.stdout == f"{out} ({NOTES} already stored): wrote {count}"
    with served(create_app(DatesOnly())) as other:
        different = cli("annotate", "--tool", other, "--notes", notes, "--out", f"datanode:{out}")
    assert different.exit_code == 2
    assert different.stderr.startswith(f"nlpbench: error: {out}: note synth-20260-00000: the store already holds")
    assert different.stderr.count("\n") == 1
    # the run the failed write stopped was closed there, not left to the garbage collector: its clean-up runs
    # its own event loop, which fails inside another (as in a later command that reads a data node)
    del different  # the result holds the error's traceback, and with it what the command left open
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    asyncio.run(collect_garbage())
    assert [type(u.exc_value).__name__ for u in unraisable] == []


async def collect_garbage() -> None:
    gc.collect()


def content(document) -> tuple:
    """What scoring sees of a document: its annotations' spans, texts and 1.2.0 subtypes, in one order (a data
    node keeps a record's annotations by type, a file in text order; the schema has no other attributes)."""
    kept = [
        (a.label, a.span, a.text, a.attributes.get(PHI_TYPES[a.label].type_attribute)) for a in document.annotations
    ]
    return document.id, sorted(kept, key=lambda a: a[:2])


def write(path: Path, page: dict) -> Path:
    path.write_text(json.dumps(page))
    return path


def test_score_sandbox_reads_a_data_node_and_the_store_as_it_reads_files(
    cli, node, tool, bundles, tmp_path, monkeypatch
):
    api, db = node
    monkeypatch.chdir(tmp_path)
    out = store(api, "annotationStores", "submission-2")  # the notes from a file, the annotations to a data node
    assert cli("annotate", "--tool", tool, "--notes", bundles, "--out", f"datanode:{out}").exit_code == 0
    pred = tmp_path / "pred.json"
    assert cli("annotate", "--tool", tool, "--notes", bundles, "--out", pred).exit_code == 0
    gold = store(api, "annotationStores", "goldstandard")
    for name in ("goldstandard", "submission-2"):
        exported = cli("dataset", "export", DATASET, tmp_path / f"{name}.json", "--format", "sandbox",
                       "--annotation-store", name, "--db", db)  # fmt: skip
        assert exported.exit_code == 0, exported.stderr
    sources = {
        "files": (bundles, pred, "--gold-format", "sandbox-bundles"),
        "exported": (tmp_path / "goldstandard.json", tmp_path / "submission-2.json"),
        "data node": (gold, out),
        "store": (
            f"store:{DATASET}/annotationStores/goldstandard",
            f"store:{DATASET}/annotationStores/submission-2",
            "--db",
            db,
        ),
    }
    for label in ("date", "location"):
        scored = {}
        for name, (gold_source, pred_source, *more) in sources.items():
            args = ("score", "sandbox", "--gold", gold_source, "--pred", pred_source, "-t", label, "--format", "json")
            result = cli(*args, *more)
            assert result.exit_code == 0, result.stderr
            report = json.loads(result.stdout)
            scored[name] = (report["scores"], report["per_document"], report["warnings"])
        assert scored["data node"] == scored["files"] == scored["store"] == scored["exported"]
        assert scored["files"][0][0]["tp"] > 0


def test_run_from_a_data_node_scores_as_from_the_bundles(cli, node, tool, bundles, tmp_path, monkeypatch):
    api, _ = node
    monkeypatch.chdir(tmp_path)
    from_node = cli("run", "--notes", store(api, "fhirStores", "evaluation"), "--tool", f"regex={tool}",
                    "--out", tmp_path / "node")  # fmt: skip
    assert from_node.exit_code == 0, from_node.stderr
    from_file = cli("run", "--notes", bundles, "--tool", f"regex={tool}", "--out", tmp_path / "file")
    assert from_file.exit_code == 0, from_file.stderr
    # the same notes were sent in the same order and got the same answers; the gold is the bundles'
    sandbox = formats.get("sandbox")
    pairs = {"regex.json": tmp_path / "file" / "regex.json", "gold.json": bundles}
    for name, expected in pairs.items():
        assert [content(d) for d in sandbox.read(tmp_path / "node" / name)] == [
            content(d) for d in sandbox.read(expected)
        ], name
    assert "instance_strict F1 (standard)" in from_node.stdout
    assert table(from_node.stdout) == table(from_file.stdout)


def table(stdout: str) -> list[list[str]]:
    """The leaderboards' rows without the speed column (the second), which differs from run to run."""
    rows = [line.split() for line in stdout.splitlines() if line.startswith("  regex")]
    return [row[:1] + row[2:] for row in rows]


def test_bad_urls_are_one_line_with_status_and_no_note_text(cli, node, tool, bundles, tmp_path, monkeypatch):
    api, _ = node
    monkeypatch.chdir(tmp_path)
    texts = note_texts(bundles)
    port = free_port()
    html = tmp_path / "www" / "api" / "v1" / "datasets" / DATASET / "fhirStores" / "evaluation" / "fhir"
    html.mkdir(parents=True)
    (html / "Note").write_text(f"<html><body>{texts[0]}</body></html>")
    static = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=tmp_path / "www", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        html_notes = f"http://127.0.0.1:{port}/api/v1/datasets/{DATASET}/fhirStores/evaluation"
        missing = store(api, "fhirStores", "evaluation").replace(DATASET, "no-such-set")
        cases = {
            ("annotate", "--notes", f"{api}/datasets/{DATASET}"): "not a data-node store URL",
            ("annotate", "--notes", store(api, "annotationStores", "goldstandard")): "names an annotationStore",
            ("annotate", "--notes", missing): "GET: HTTP 404 Not Found (",
            ("annotate", "--notes", html_notes): "the response is not JSON (",
            ("annotate", "--notes", f"http://127.0.0.1:{free_port()}/api/v1/datasets/abc/fhirStores/evaluation"):
                "cannot reach the data node (ConnectError)",
            ("run", "--notes", missing): "GET: HTTP 404 Not Found (",
            ("score", "--gold", store(api, "annotationStores", "nope")): "GET: HTTP 404 Not Found (",
            ("score", "--gold", f"store:{DATASET}/annotationStores/nope"): "not found",
        }  # fmt: skip
        for (command, option, value), expected in cases.items():
            if command == "annotate":
                args = ("annotate", "--tool", tool, option, value, "--out", tmp_path / "o.json", "--retries", "0")
            elif command == "run":
                args = ("run", option, value, "--tool", f"regex={tool}", "--out", tmp_path / "run")
            else:
                args = ("score", "sandbox", option, value, "--pred", bundles, "--db", node[1])
            result = cli(*args)
            assert result.exit_code == 2, (args, result.stderr)
            assert result.stderr.startswith("nlpbench: error: ") and result.stderr.count("\n") == 1, result.stderr
            assert expected in result.stderr, (expected, result.stderr)
            assert not any(text[:40] in result.stderr for text in texts)
    finally:
        static.terminate()
        static.wait(timeout=10)


def test_a_data_node_that_requires_keys_gets_the_one_in_the_environment(cli, tool, bundles, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'keyed.db'}"
    imported = cli("dataset", "import", bundles, "--format", "sandbox-bundles", "--name", DATASET, "--db", db)
    assert imported.exit_code == 0, imported.stderr
    keys = {scope: cli("datanode", "keys", "create", "--scope", scope, "--db", db).stdout.strip()
            for scope in ("read", "write")}  # fmt: skip
    with serving(db) as api:
        notes, out = store(api, "fhirStores", "evaluation"), store(api, "annotationStores", "submission-1")
        args = ("annotate", "--tool", tool, "--notes", notes, "--out", f"datanode:{out}", "--retries", "0")
        monkeypatch.delenv(datanode.KEY_VARIABLE, raising=False)
        refused = cli(*args)
        assert refused.exit_code == 2 and "GET: HTTP 401 Unauthorized (" in refused.stderr, refused.stderr
        assert "wants an API key: set $NLPBENCH_DATANODE_KEY" in refused.stderr
        monkeypatch.setenv(datanode.KEY_VARIABLE, keys["read"])
        read_only = cli(*args)
        assert read_only.exit_code == 2 and "POST: HTTP 403 Forbidden (" in read_only.stderr, read_only.stderr
        assert keys["read"] not in read_only.stderr
        monkeypatch.setenv(datanode.KEY_VARIABLE, keys["write"])
        assert cli(*args).exit_code == 0
        monkeypatch.setenv(datanode.KEY_VARIABLE, keys["read"])
        scored = cli("score", "sandbox", "--gold", store(api, "annotationStores", "goldstandard"), "--pred", out)
        assert scored.exit_code == 0, scored.stderr


def test_a_note_split_over_records_of_a_data_node_is_merged_as_in_a_file(cli, node, bundles, tmp_path):
    """The data node's ids are annotation ids: several records may name one note, as in a file's list."""
    api, _ = node
    split = store(api, "annotationStores", "split")
    httpx.post(f"{api}/datasets/{DATASET}/annotationStores", params={"annotationStoreId": "split"}, json={})
    documents = list(formats.get("sandbox-bundles").read(bundles, labels={"date"}))
    first, second = documents[0], documents[1]
    name = f"datasets/{DATASET}/fhirStores/evaluation/fhir/Note/{first.id}"
    records = []
    for part, found in enumerate((first.annotations[:2], first.annotations[2:] + second.annotations[:1])):
        record = {
            "annotationSource": {"resourceSource": {"name": name}},
            "textDateAnnotations": [
                {"start": a.start, "length": a.span.length, "text": a.text, "confidence": 50.0, **a.attributes}
                for a in found
            ],
        }
        records.append(record)
        created = httpx.post(f"{split}/annotations", params={"annotationId": f"part-{part}"}, json=record)
        assert created.status_code == 201, created.text
    (tmp_path / "split.json").write_text(json.dumps(records))
    reports = {}
    for side, pred in (("node", split), ("file", tmp_path / "split.json")):
        result = cli("score", "sandbox", "--gold", bundles, "--gold-format", "sandbox-bundles", "--pred", pred,
                     "-t", "date", "--format", "json")  # fmt: skip
        assert result.exit_code == 0, result.stderr
        reports[side] = json.loads(result.stdout)
    assert reports["node"]["scores"] == reports["file"]["scores"]
    assert reports["node"]["per_document"] == reports["file"]["per_document"]
    for side, source in (("node", split), ("file", tmp_path / "split.json")):
        assert f"{source}: 1 notes split over several annotation records" in " ".join(reports[side]["warnings"])
    strict = reports["node"]["scores"][0]
    assert strict["fp"] == 1 and strict["tp"] == len(first.annotations)
