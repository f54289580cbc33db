"""Reading and writing the store: datasets, FHIR stores, patients, notes, annotation stores and records.

Every function takes the :class:`~sqlalchemy.orm.Session` of one transaction
(:meth:`nlpbench.store.Store.session`), so that writes that belong together
commit together. Resources are named by the ids of the data-node API: a note is
``(dataset, fhir_store, note)``. Errors are values the API and the command line
turn into a status or a line: :class:`NotFound` (404), :class:`Conflict` (409),
:class:`MissingParent` (400: a resource named in the request does not exist).
No message quotes a note's text. Text the store cannot keep is refused with a
:class:`StoreError` naming the resource and the field: a NUL character
(PostgreSQL's text holds none; SQLite would, so both refuse it and a store
moves between them) and a lone surrogate (not Unicode: no backend encodes it).

A session may be limited to some datasets (a data-node key scoped to them):
``session.info[REACH]`` names them, and every other dataset is absent to it —
the same error, at the same point, as a dataset that does not exist.

:func:`import_notes` writes a whole dataset in batches inside the caller's
transaction; :func:`documents` reads notes and one annotation store back as
:class:`~nlpbench.model.Document` objects; :func:`content_hash` names exactly
what a dataset holds.

One module per resource — :mod:`~nlpbench.store.repository.datasets`,
:mod:`~nlpbench.store.repository.fhir` (FHIR stores, patients, notes),
:mod:`~nlpbench.store.repository.annotations`,
:mod:`~nlpbench.store.repository.documents`,
:mod:`~nlpbench.store.repository.imports` — on
:mod:`~nlpbench.store.repository.common`; this package names them all, as
callers have always imported them.
"""

from __future__ import annotations

from nlpbench.store.repository.annotations import (
    create_annotation,
    create_annotation_store,
    delete_annotation,
    delete_annotation_store,
    get_annotation,
    get_annotation_store,
    iter_records,
    list_annotation_stores,
    list_annotations,
)
from nlpbench.store.repository.common import (
    EVALUATION,
    GOLDSTANDARD,
    REACH,
    Conflict,
    MissingParent,
    NotFound,
    Page,
    StoreError,
    check_reach,
    gone,
    unstorable,
)
from nlpbench.store.repository.datasets import (
    DatasetOverview,
    create_dataset,
    dataset_overview,
    delete_dataset,
    get_dataset,
    list_datasets,
    store_counts,
)
from nlpbench.store.repository.documents import annotations_of, content_hash, documents, records_json
from nlpbench.store.repository.fhir import (
    NoteRow,
    create_fhir_store,
    create_note,
    create_patient,
    delete_fhir_store,
    delete_note,
    delete_patient,
    get_fhir_store,
    get_note,
    get_patient,
    iter_notes,
    list_fhir_stores,
    list_notes,
    list_patients,
)
from nlpbench.store.repository.imports import IMPORT_BATCH, ImportItem, ImportSummary, import_notes

__all__ = [
    "EVALUATION",
    "GOLDSTANDARD",
    "IMPORT_BATCH",
    "REACH",
    "Conflict",
    "DatasetOverview",
    "ImportItem",
    "ImportSummary",
    "MissingParent",
    "NotFound",
    "NoteRow",
    "Page",
    "StoreError",
    "annotations_of",
    "check_reach",
    "content_hash",
    "create_annotation",
    "create_annotation_store",
    "create_dataset",
    "create_fhir_store",
    "create_note",
    "create_patient",
    "dataset_overview",
    "delete_annotation",
    "delete_annotation_store",
    "delete_dataset",
    "delete_fhir_store",
    "delete_note",
    "delete_patient",
    "documents",
    "get_annotation",
    "get_annotation_store",
    "get_dataset",
    "get_fhir_store",
    "get_note",
    "get_patient",
    "gone",
    "import_notes",
    "iter_notes",
    "iter_records",
    "list_annotation_stores",
    "list_annotations",
    "list_datasets",
    "list_fhir_stores",
    "list_notes",
    "list_patients",
    "records_json",
    "store_counts",
    "unstorable",
]
