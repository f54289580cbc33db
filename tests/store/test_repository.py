"""The store on both backends: migrations, resources, cascades, conflicts, import, documents, content hash."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from sqlalchemy import func, inspect, select

from nlpbench.store import (
    Conflict,
    ImportItem,
    MissingParent,
    NotFound,
    open_store,
)
from nlpbench.store import repository as repo
from nlpbench.store.engine import HEAD_REVISION, head_revision
from nlpbench.store.models import AnnotationRecord, Note, Patient

TEXT = "Seen by Dr. Chloe Price on 12/26/2020 in Seattle."
DATE = {"start": 27, "length": 10, "text": "12/26/2020", "confidence": 100, "dateFormat": "MM/DD/YYYY"}
NAME = {"start": 12, "length": 11, "text": "Chloe Price", "confidence": 100}
CITY = {"start": 41, "length": 7, "text": "Seattle", "confidence": 100, "locationType": "city"}
GOLD = {
    "textDateAnnotations": [DATE],
    "textPersonNameAnnotations": [NAME],
    "textLocationAnnotations": [CITY],
    "textIdAnnotations": [],
    "textContactAnnotations": [],
}


def _seed(session, dataset="d-one"):
    repo.create_dataset(session, dataset, version="2", description="test", visibility="public")
    repo.create_fhir_store(session, dataset, "evaluation")
    repo.create_patient(session, dataset, "evaluation", "p-1", "female")
    repo.create_note(session, dataset, "evaluation", "n-1", text=TEXT, type="loinc:LP29684-5", patient="p-1")
    repo.create_annotation_store(session, dataset, "goldstandard")
    source = f"datasets/{dataset}/fhirStores/evaluation/fhir/Note/n-1"
    repo.create_annotation(session, dataset, "goldstandard", "n-1", source=source, arrays=GOLD)


def test_open_migrates_an_empty_database_and_is_idempotent(db_url):
    store = open_store(db_url)
    try:
        assert store.revision() == head_revision()
        tables = set(inspect(store.engine).get_table_names())
        assert {"datasets", "fhir_stores", "patients", "notes", "annotation_stores", "annotations"} <= tables
        assert store.upgrade() == (head_revision(), head_revision())
    finally:
        store.close()


def test_the_revision_an_up_to_date_store_holds_is_where_alembics_scripts_end():
    assert head_revision() == HEAD_REVISION


def test_opening_an_up_to_date_store_loads_no_alembic(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(db_url).close()  # made and migrated here
    probe = "import sys; from nlpbench.store import open_store; open_store(sys.argv[1]).close(); print(*sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", probe, db_url], capture_output=True, text=True, check=True)
    assert "sqlalchemy" in loaded.stdout.split() and "alembic" not in loaded.stdout.split()


def test_open_without_upgrade_leaves_the_database_empty(db_url):
    store = open_store(db_url, upgrade=False)
    try:
        assert store.revision() is None
        assert store.upgrade() == (None, head_revision())
    finally:
        store.close()


def test_resources_round_trip(store):
    with store.session() as session:
        _seed(session)
    with store.session() as session:
        dataset = repo.get_dataset(session, "d-one")
        assert (dataset.version, dataset.description, dataset.visibility) == ("2", "test", "public")
        assert dataset.created_at is not None
        note = repo.get_note(session, "d-one", "evaluation", "n-1")
        assert (note.identifier, note.patient, note.type, note.text) == ("n-1", "p-1", "loinc:LP29684-5", TEXT)
        assert repo.get_patient(session, "d-one", "evaluation", "p-1").gender == "female"
        record = repo.get_annotation(session, "d-one", "goldstandard", "n-1")
        assert record.arrays == GOLD
        assert record.note_identifier == "n-1"


def test_errors_name_the_resource(store):
    with store.session() as session:
        _seed(session)
    with pytest.raises(Conflict, match="dataset 'd-one' already exists"), store.session() as session:
        repo.create_dataset(session, "d-one")
    with pytest.raises(MissingParent, match="dataset 'nope' does not exist"), store.session() as session:
        repo.create_fhir_store(session, "nope", "evaluation")
    with pytest.raises(MissingParent, match="patient 'p-9'"), store.session() as session:
        repo.create_note(session, "d-one", "evaluation", "n-2", text="x", type="", patient="p-9")
    with pytest.raises(NotFound, match="note 'n-9'"), store.session() as session:
        repo.get_note(session, "d-one", "evaluation", "n-9")
    with pytest.raises(Conflict, match="annotation 'n-1'"), store.session() as session:
        repo.create_annotation(session, "d-one", "goldstandard", "n-1", source="x/n-1", arrays={})


def test_failed_transaction_leaves_nothing(store):
    with pytest.raises(Conflict), store.session() as session:
        repo.create_dataset(session, "d-two")
        repo.create_dataset(session, "d-two")
    with store.session() as session:
        assert repo.list_datasets(session).total == 0


def test_cascading_deletes(store):
    with store.session() as session:
        _seed(session)
        _seed(session, "d-other")
    with store.session() as session:
        repo.delete_patient(session, "d-one", "evaluation", "p-1")
        assert repo.list_notes(session, "d-one", "evaluation").total == 0
    with store.session() as session:
        repo.delete_dataset(session, "d-one")
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(Note)) == 1
        assert session.scalar(select(func.count()).select_from(Patient)) == 1
        assert session.scalar(select(func.count()).select_from(AnnotationRecord)) == 1
        repo.delete_annotation_store(session, "d-other", "goldstandard")
        assert session.scalar(select(func.count()).select_from(AnnotationRecord)) == 0
        repo.delete_fhir_store(session, "d-other", "evaluation")
        assert session.scalar(select(func.count()).select_from(Note)) == 0


def test_paging(store):
    with store.session() as session:
        for index in range(25):
            repo.create_dataset(session, f"set-{index:02d}")
    with store.session() as session:
        page = repo.list_datasets(session, offset=20, limit=10)
        assert [d.name for d in page.items] == [f"set-{i}" for i in range(20, 25)]
        assert (page.total, page.has_next) == (25, False)
        assert repo.list_datasets(session, offset=10, limit=10).has_next


def _items(count, bad_at=None):
    for index in range(count):
        text = f"Note {index} by Dr. Chloe Price."
        name = {"start": text.index("Chloe"), "length": 11, "text": "Chloe Price", "confidence": 100}
        if index == bad_at:
            raise ValueError(f"bad span in note n-{index}")
        yield repo.ImportItem(f"n-{index}", f"p-{index % 7}", "", text, {"textPersonNameAnnotations": [name]})


def test_import_in_batches_and_read_back_as_documents(store):
    with store.session() as session:
        repo.create_dataset(session, "big")
        done = []
        summary = repo.import_notes(session, "big", _items(25), batch=10, advance=done.append)
    assert (summary.notes, summary.patients, summary.records, summary.annotations) == (25, 7, 25, 25)
    assert done == [10, 10, 5]
    with store.session() as session:
        documents = list(repo.documents(session, "big"))
        assert len(documents) == 25
        first = documents[0]
        assert first.id == "n-0" and first.metadata["patientId"] == "p-0"
        assert [(a.label, a.start, a.end) for a in first.annotations] == [("person_name", 14, 25)]
        assert first.span_problem() is None
        notes_only = next(repo.documents(session, "big", annotation_store=None))
        assert notes_only.annotations == []


def test_import_error_half_way_leaves_nothing(store):
    with store.session() as session:
        repo.create_dataset(session, "big")
    with pytest.raises(ValueError, match="n-15"), store.session() as session:
        repo.import_notes(session, "big", _items(25, bad_at=15), batch=10)
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(Note)) == 0


def test_import_refuses_a_duplicate_note(store):
    items = [ImportItem("n-1", "p", "", "a"), ImportItem("n-1", "p", "", "b")]
    with store.session() as session:
        repo.create_dataset(session, "dup")
        with pytest.raises(Conflict, match="'n-1' appears twice"):
            repo.import_notes(session, "dup", items)
    with store.session() as session:
        repo.import_notes(session, "dup", items[:1])
    with pytest.raises(Conflict, match="'n-1' in dup/evaluation already exists"), store.session() as session:
        repo.import_notes(session, "dup", items[1:])


def test_content_hash_follows_notes_and_gold(store):
    with store.session() as session:
        _seed(session)
        _seed(session, "d-twin")
    with store.session() as session:
        first = repo.content_hash(session, "d-one")
        assert len(first) == 64
        assert repo.get_dataset(session, "d-one").content_hash == first
        assert repo.content_hash(session, "d-twin") == first  # the same content under another name
    with store.session() as session:
        repo.create_annotation_store(session, "d-one", "submission-1")
        repo.create_annotation(session, "d-one", "submission-1", "n-1", source="n-1", arrays={})
        assert repo.get_dataset(session, "d-one").content_hash == first  # predictions are not content
        repo.delete_annotation(session, "d-one", "goldstandard", "n-1")
        assert repo.get_dataset(session, "d-one").content_hash is None
        changed = repo.content_hash(session, "d-one")
    assert changed != first


def test_eight_concurrent_writers_lose_nothing(store):
    """Eight threads, each with its own transactions, write notes and records into one dataset."""
    with store.session() as session:
        _seed(session)
    errors = []

    def writer(worker: int) -> None:
        try:
            for index in range(15):
                with store.session() as session:
                    note = f"w{worker}-n{index}"
                    repo.create_patient(session, "d-one", "evaluation", note)
                    repo.create_note(session, "d-one", "evaluation", note, text=TEXT, type="", patient=note)
                    source = f"datasets/d-one/fhirStores/evaluation/fhir/Note/{note}"
                    repo.create_annotation(session, "d-one", "goldstandard", note, source=source, arrays=GOLD)
        except Exception as error:  # reported below, with the worker
            errors.append((worker, error))

    threads = [threading.Thread(target=writer, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with store.session() as session:
        assert repo.list_notes(session, "d-one", "evaluation").total == 1 + 8 * 15
        assert repo.list_annotations(session, "d-one", "goldstandard").total == 1 + 8 * 15


def test_concurrent_creates_of_one_name_give_one_row_and_conflicts(store):
    outcomes = []
    barrier = threading.Barrier(8)

    def creator() -> None:
        barrier.wait()
        try:
            with store.session() as session:
                repo.create_dataset(session, "contested")
            outcomes.append("created")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=creator) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * 7 + ["created"]
