"""The OMIn (trusted_ke) CSV files and the token source their NER mentions are found in.

All files are UTF-8 CSV with a header; an empty cell is a missing value
(pandas, which trusted_ke reads them with, would also take ``NA``, ``None``,
``null`` and the like for missing: no OMIn file has such a cell). List cells
are Python literals (``['ACFT', None, None]``), read with
:func:`ast.literal_eval`. The document is the 15-character FAA id in the
column ``id`` (gold), ``c5_id`` or ``c5_unique_id`` (tool outputs).

- NER, :func:`read_ner`: gold ``ner.csv`` (``id, sample, entities``: untyped),
  ``ner_conll.csv`` and the other typed files (``…, labels``), and tool
  outputs (``c5_id``/``c5_unique_id``, ``entities``, ``labels``): one row per
  mention, in text order. Each document becomes a :class:`Document` whose
  ``metadata["mentions"]`` lists its :class:`Mention` objects in file order;
  a row whose mention is empty (the typed gold files give a document without
  mentions one such row) adds the document and no mention.
- Token source, :func:`read_token_source`: the jsonlines file of the OMIn
  coreference data (``coref/s2e-coref/data/test.english.jsonlines``): one JSON
  object per line with ``doc_key`` (``faa/<row>_<FAA id>_0``) and
  ``sentences`` (lists of tokens). A document's tokens are its sentences
  concatenated; the document text is the tokens joined by single blanks and
  ``metadata["tokens"]`` holds each token's ``(start, end)`` in it.
- Entity linking, :func:`read_gold_links` and :func:`read_predicted_links`:
  gold ``nel.csv`` (``id, sample, entity, qid``: parallel lists of the
  primary, secondary and tertiary mention and QID) and tool outputs
  (``c5_id``, ``mentions`` and a QID column that differs by tool: BLINK
  ``bi_qid`` or ``cross_qid``, ReFinED and GENRE ``qids``). A tool row with
  an empty QID is a mention the tool did not link: it is counted and
  reported, not returned.
- Relations, :func:`read_triples`: ``re.csv`` (``id, subject, subject_type,
  relation, relation_type, object, object_type``), free-text triples without
  spans; the relation is the ``relation`` phrase (``relation_type`` is a
  coarser class of it and is not compared). An entirely empty row is
  reported and skipped.
"""

from __future__ import annotations

import ast
import csv
import warnings
from collections.abc import Iterator

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, excerpt, shorten
from nlpbench.files import Source
from nlpbench.formats import jsonstream
from nlpbench.model import Argument, Document, GoldEntity, LinkedMention, Mention, Triple, tokens_document

ID_COLUMNS = ("id", "c5_id", "c5_unique_id", "c5")


def _rows(path: Source, required: tuple[str, ...]) -> Iterator[tuple[str, dict[str, str]]]:
    """``(where, row)`` for each data row; ``where`` names the row and its first line."""
    path = files.source(path)
    try:
        reader = csv.DictReader(files.text_lines(path, newline=""))
        columns = reader.fieldnames or []
        missing = [c for c in required if c not in columns]
        if missing:
            raise InputError(f"no column {', '.join(missing)} (columns: {shorten(', '.join(columns))})", path, "header")
        line = reader.line_num + 1
        for number, row in enumerate(reader, start=1):
            if None in row:
                raise InputError("more cells than header columns", path, f"row {number} (line {line})")
            yield f"row {number} (line {line})", {k: v or "" for k, v in row.items()}
            line = reader.line_num + 1
    except csv.Error as error:
        raise InputError(f"bad CSV: {error}", path) from None


def id_column(path: Source) -> str:
    """The document-id column of an OMIn CSV: ``id``, ``c5_id``, ``c5_unique_id`` or ``c5``."""
    lines = files.text_lines(path, newline="")
    try:
        header = next(csv.reader(lines), [])
    except csv.Error as error:
        raise InputError(f"bad CSV: {error}", path) from None
    finally:
        lines.close()
    for name in ID_COLUMNS:
        if name in header:
            return name
    raise InputError(f"no document-id column ({', '.join(ID_COLUMNS)})", path, "header")


def read_ner(path: Source) -> Iterator[Document]:
    """Documents of an OMIn NER file, each with its mentions in ``metadata["mentions"]``, in order of first row."""
    path = files.source(path)
    doc_column = id_column(path)
    documents: dict[str, Document] = {}
    for where, row in _rows(path, (doc_column, "entities")):
        doc_id = row[doc_column].strip()
        if not doc_id:
            raise InputError("empty document id", path, where)
        document = documents.get(doc_id)
        if document is None:
            document = documents[doc_id] = Document(doc_id, metadata={"mentions": []})
        text, label = row["entities"], row.get("labels", "")
        if not text.strip():
            if label:
                raise InputError(f"label {excerpt(label)} without a mention", path, where)
            continue
        if "labels" in row and not label:
            raise InputError(f"a mention ({len(text)} characters) without a label", path, where)
        document.metadata["mentions"].append(Mention(doc_id, text, label or None))
    yield from documents.values()


def _doc_key_id(doc_key: object, path: Source, where: str) -> str:
    if not isinstance(doc_key, str) or "_" not in doc_key or len(doc_key.split("_", 1)[1]) < 15:
        raise InputError(f"doc_key {excerpt(doc_key)} is not faa/<row>_<FAA id>_<part>", path, where)
    return doc_key.split("_", 1)[1][:15]


def read_token_source(path: Source) -> Iterator[Document]:
    """The documents of an OMIn jsonlines token source: text = tokens joined by blanks, tokens in metadata."""
    path = files.source(path)
    for where, record in jsonstream.json_lines(path):
        yield _token_line(record, path, where)


def _token_line(record: object, path: Source, where: str) -> Document:
    if not isinstance(record, dict) or not isinstance(record.get("sentences"), list):
        raise InputError("a line needs doc_key and sentences (lists of tokens)", path, where)
    sentences = record["sentences"]
    if not all(isinstance(sentence, list) for sentence in sentences):
        raise InputError("sentences must be lists of tokens", path, where)
    tokens = [t for sentence in sentences for t in sentence]
    if not all(isinstance(t, str) and t and not any(c.isspace() for c in t) for t in tokens):
        raise InputError("tokens must be non-empty strings without blanks", path, where)
    return tokens_document(_doc_key_id(record.get("doc_key"), path, where), tokens)


def _literal_list(cell: str, column: str, path: Source, where: str) -> list[str | None]:
    try:
        value = ast.literal_eval(cell)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise InputError(f"{column} is not a Python list literal ({len(cell)} characters)", path, where) from None
    if not isinstance(value, list | tuple) or not all(v is None or isinstance(v, str) for v in value):
        raise InputError(f"{column} is not a list of strings and None ({len(cell)} characters)", path, where)
    return list(value)


def read_gold_links(path: Source) -> Iterator[GoldEntity]:
    """The gold entities of ``nel.csv``, one per row, in file order."""
    path = files.source(path)
    for where, row in _rows(path, ("id", "entity", "qid")):
        entities = _literal_list(row["entity"], "entity", path, where)
        qids = _literal_list(row["qid"], "qid", path, where)
        if len(entities) != len(qids):
            raise InputError(f"{len(entities)} entities but {len(qids)} QIDs", path, where)
        yield GoldEntity(row["id"].strip(), tuple(zip(entities, qids, strict=True)))


def read_predicted_links(path: Source, qid_column: str = "qids") -> Iterator[LinkedMention]:
    """A tool's links (``c5_id``, ``mentions``, ``qid_column``) in file order; unlinked rows are reported."""
    path = files.source(path)
    doc_column = id_column(path)
    unlinked = 0
    for where, row in _rows(path, (doc_column, "mentions", qid_column)):
        if not row[qid_column].strip():
            unlinked += 1
            continue
        if not row["mentions"].strip():
            raise InputError(f"a link to {row[qid_column]} without a mention", path, where)
        yield LinkedMention(row[doc_column].strip(), row["mentions"], row[qid_column].strip())
    if unlinked:
        warnings.warn(
            f"{path}: {unlinked} rows have no {qid_column} (mentions the tool did not link) and are not predictions",
            InputWarning,
            stacklevel=2,
        )


TRIPLE_COLUMNS = ("id", "subject", "subject_type", "relation", "relation_type", "object", "object_type")


def read_triples(path: Source) -> Iterator[Triple]:
    """The free-text triples of an OMIn ``re.csv`` file, in file order."""
    path = files.source(path)
    empty = 0
    for where, row in _rows(path, TRIPLE_COLUMNS):
        if not any(row[c].strip() for c in TRIPLE_COLUMNS[1:]):
            empty += 1
            continue
        missing = [c for c in ("id", "subject", "relation", "object") if not row[c].strip()]
        if missing:
            raise InputError(f"a triple needs {', '.join(missing)}", path, where)
        yield Triple(
            row["id"].strip(),
            row["relation"],
            Argument(None, row["subject"], row["subject_type"] or None),
            Argument(None, row["object"], row["object_type"] or None),
        )
    if empty:
        warnings.warn(f"{path}: skipped {empty} empty rows", InputWarning, stacklevel=2)
