"""``nlpbench db``, ``dataset``, ``synth --into-store`` and ``datanode keys`` on both backends, in process."""

from __future__ import annotations

import json
import re

import pytest

from nlpbench.store import open_store
from nlpbench.store import repository as repo
from nlpbench.store.engine import head_revision

SECRET = "Patient Chloe Price was seen on 12/26/2020."


@pytest.fixture
def nb(cli, db_url):
    """``nlpbench ARGS… --db URL``; its ``db_url`` is the URL."""

    def run(*args):
        return cli(*args, "--db", db_url)

    run.db_url = db_url
    return run


def test_db_upgrade_and_current(nb):
    refused = nb("db", "current")  # an empty database is no store yet: only upgrade makes one
    assert refused.exit_code == 2 and "make one with `nlpbench db upgrade" in refused.stderr
    upgraded = nb("db", "upgrade")
    head = head_revision()  # the newest migration, whichever migrations are installed
    assert upgraded.exit_code == 0 and f"upgraded from an empty database to revision {head}" in upgraded.stdout
    assert f"already at revision {head}" in nb("db", "upgrade").stdout
    assert f"revision {head}, up to date" in nb("db", "current").stdout


def test_synth_into_store_then_list_show_export_reimport_delete(nb, tmp_path):
    made = nb("synth", "--notes", "12", "--seed", "3", "--into-store", "synth-a", "--subset", "4", "--public")
    assert made.exit_code == 0, made.stderr
    assert "dataset synth-a: 12 notes" in made.stdout and "dataset synth-a-subset: the first 4 notes" in made.stdout
    digest = re.search(r"content hash sha256:([0-9a-f]{64})", made.stdout).group(1)

    listed = nb("dataset", "list").stdout.splitlines()
    assert listed[0] == "name\tversion\tvisibility\tnotes\tgold\tcreated"
    assert [line.split("\t")[:5] for line in listed[1:]] == [
        ["synth-a", "1", "public", "12", "12"],
        ["synth-a-subset", "1", "public", "4", "4"],
    ]
    shown = nb("dataset", "show", "synth-a").stdout
    assert f"content hash: sha256:{digest}" in shown
    assert (
        "fhirStores/evaluation: 12 notes" in shown and "annotationStores/goldstandard: 12 annotation records" in shown
    )

    bundles = tmp_path / "synth-a.json"
    exported = nb("dataset", "export", "synth-a", bundles, "--format", "sandbox-bundles")
    assert exported.exit_code == 0 and "wrote 12 notes" in exported.stdout
    written = json.loads(bundles.read_text())
    assert sum(len(p["note_bundles"]) for p in written["patient_bundles"]) == 12

    again = nb("dataset", "import", bundles, "--format", "sandbox-bundles", "--name", "synth-b", "--version", "2")
    assert again.exit_code == 0, again.stderr
    assert f"content hash sha256:{digest}" in again.stdout  # the same notes and gold, under another name

    taken = nb("dataset", "import", bundles, "--format", "sandbox-bundles", "--name", "synth-b")
    assert taken.exit_code == 2 and taken.stderr.strip() == "nlpbench: error: dataset 'synth-b' already exists"

    assert nb("dataset", "delete", "synth-a", "--yes").stdout.strip() == "deleted dataset synth-a"
    assert nb("dataset", "show", "synth-a").exit_code == 2
    assert [line.split("\t")[0] for line in nb("dataset", "list").stdout.splitlines()[1:]] == [
        "synth-a-subset",
        "synth-b",
    ]


def _bundle(start: int, length: int) -> dict:
    date = {"start": start, "length": length, "text": "12/26/2020", "confidence": 100}
    note_bundles = [
        {
            "note": {"identifier": f"n-{i}", "text": SECRET, "type": "", "patientId": "p-1"},
            "annotation": {"textDateAnnotations": [date if i == 2 else {**date, "start": 32, "length": 10}]},
        }
        for i in range(3)
    ]
    return {"patient_bundles": [{"patient": {"identifier": "p-1"}, "note_bundles": note_bundles}]}


@pytest.mark.parametrize(("start", "length", "problem"), [(30, 10, "at 30-40"), (40, 10, "at 40-50 ends beyond")])
def test_a_bad_span_names_file_note_and_offsets_and_imports_nothing(nb, db_url, tmp_path, start, length, problem):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_bundle(start, length)))
    result = nb("dataset", "import", path, "--format", "sandbox-bundles", "--name", "bad-one", "--subset", "1")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"nlpbench: error: {path}:")
    assert "note_bundles[2]" in lines[0] and problem in lines[0]  # the reader names the note by its place
    assert "Chloe" not in lines[0] and "12/26" not in lines[0]
    store = open_store(db_url)
    try:
        with store.session() as session:
            assert repo.list_datasets(session).total == 0
    finally:
        store.close()


def test_import_refuses_ids_that_are_not_data_node_ids(nb, tmp_path):
    bundle = _bundle(32, 10)
    bundle["patient_bundles"][0]["note_bundles"][1]["note"]["identifier"] = "Note_1"
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(bundle))
    result = nb("dataset", "import", path, "--format", "sandbox-bundles", "--name", "ids")
    assert result.exit_code == 2 and "note id 'Note_1' is not a data-node id" in result.stderr
    result = nb("dataset", "import", path, "--format", "sandbox-bundles", "--name", "No")
    assert result.exit_code == 2 and "dataset name 'No' is not a data-node id" in result.stderr


def test_api_keys(nb):
    created = nb("datanode", "keys", "create", "--scope", "write", "--label", "controller")
    key = created.stdout.strip()
    assert re.fullmatch(r"nbk_[0-9a-f]{12}_\S{40,}", key)
    prefix = key.split("_")[1]
    listed = nb("datanode", "keys", "list").stdout
    moment = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert re.fullmatch(rf"{prefix}\twrite\tactive\t{moment}\t-\t-\t\*\tcontroller\n", listed), listed
    assert key not in listed
    assert nb("datanode", "keys", "create", "--scope", "admin").exit_code == 2
    revoked = nb("datanode", "keys", "revoke", prefix).stdout.strip()
    assert re.fullmatch(rf"revoked {prefix} at {moment}", revoked)
    assert nb("datanode", "keys", "revoke", prefix).stdout.strip() == revoked  # once revoked, it stays as it was
    listed = nb("datanode", "keys", "list").stdout
    assert re.fullmatch(rf"{prefix}\twrite\trevoked\t{moment}\t-\t{moment}\t\*\tcontroller\n", listed), listed
    assert "no API key with prefix 'nope'" in nb("datanode", "keys", "revoke", "nope").stderr


def test_keys_expire_and_are_scoped_to_existing_datasets(nb):
    nb("db", "upgrade")
    store = open_store(nb.db_url)
    with store.session() as session:
        for name in ("d-one", "d-two"):
            repo.create_dataset(session, name)
    store.close()
    made = nb("datanode", "keys", "create", "--expires", "30d", "--dataset", "d-two", "--dataset", "d-one")
    assert made.exit_code == 0 and "created a read key for d-one, d-two only, until 20" in made.stderr
    until = nb("datanode", "keys", "create", "--expires", "2999-01-01")
    assert until.exit_code == 0 and "until 2999-01-01T00:00:00Z" in until.stderr
    rows = [line.split("\t") for line in nb("datanode", "keys", "list").stdout.splitlines()]
    assert [(row[2], row[6]) for row in rows] == [("active", "d-one,d-two"), ("active", "*")]
    assert rows[1][4] == "2999-01-01T00:00:00Z"
    for expires, said in [
        ("soon", "--expires 'soon': neither a duration"),
        ("2001-01-01", "the expiry 2001-01-01T00:00:00+00:00 has passed"),
        ("0d", "has passed"),
    ]:
        refused = nb("datanode", "keys", "create", "--expires", expires)
        assert refused.exit_code == 2 and said in refused.stderr and len(refused.stderr.splitlines()) == 1
    missing = nb("datanode", "keys", "create", "--dataset", "d-three")
    assert missing.exit_code == 2
    assert "dataset 'd-three' not found: a key is scoped to existing datasets only" in missing.stderr
    assert len(nb("datanode", "keys", "list").stdout.splitlines()) == 2


def test_a_bad_database_url_is_one_line(cli):
    result = cli("dataset", "list", "--db", "mysql://nobody@nowhere/db")
    assert result.exit_code == 2 and result.stderr.startswith("nlpbench: error: ")
    assert "unsupported database 'mysql'" in result.stderr


def test_a_bad_span_in_a_format_without_text_is_caught_by_the_import(nb, tmp_path):
    """Annotation records carry no text: the import checks each span against ``--text-dir``."""
    texts = tmp_path / "texts"
    texts.mkdir()
    records = []
    for index in range(3):
        (texts / f"n-{index}.txt").write_text(SECRET)
        start = 30 if index == 1 else 32
        date = {"start": start, "length": 10, "text": "12/26/2020", "confidence": 100}
        records.append({"annotationSource": {"resourceSource": {"name": f"n-{index}"}}, "textDateAnnotations": [date]})
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    args = ("dataset", "import", path, "--format", "sandbox", "--name", "records", "--text-dir", texts)
    result = nb(*args)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"nlpbench: error: {path}: note n-1: annotation 0 (date) at 30-40: "
        "its text (10 characters) differs from the note's (10 characters)"
    )
    records[1]["textDateAnnotations"][0]["start"] = 32
    path.write_text(json.dumps(records))
    imported = nb(*args)
    assert imported.exit_code == 0, imported.stderr
    assert "3 notes of 3 patients" in imported.stdout and "3 gold annotations" in imported.stdout


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ("\x00", "note 'n-2' in odd/evaluation: text holds a NUL character (U+0000), which the store cannot keep"),
        ("\ud800", "malformed JSON: JSON is malformed: unexpected end of escaped utf-16 surrogate pair"),
    ],
)
def test_an_import_refuses_text_the_store_cannot_keep_in_one_line(nb, tmp_path, bad, said):
    """A NUL cannot be stored in PostgreSQL's text (so neither backend takes it), a lone surrogate in none (the
    reader refuses it first): one line, nothing written, before the database fails on it quoting the note."""
    bundle = _bundle(32, 10)
    bundle["patient_bundles"][0]["note_bundles"][2]["note"]["text"] = SECRET + bad
    path = tmp_path / "bundles.json"
    path.write_text(json.dumps(bundle))
    result = nb("dataset", "import", path, "--format", "sandbox-bundles", "--name", "odd")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1 and said in result.stderr
    assert "Chloe" not in result.stderr
    assert "odd" not in nb("dataset", "list").stdout
