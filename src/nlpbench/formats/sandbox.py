"""NLP Sandbox JSON (schemas 1.2.0): annotation records, patient bundles, tool responses.

Three shapes are read, told apart by their top level:

- a list of data-node ``Annotation`` records (what nlpsandbox-client's
  ``evaluate-prediction`` reads), or a data-node page ``{"annotations": […]}``;
  the note id is the last path segment of
  ``annotationSource.resourceSource.name``;
- patient bundles ``{"patient_bundles": [{"patient", "note_bundles":
  [{"note", "annotation"}]}]}``, which carry each note's text;
- a single tool response ``{"textDateAnnotations": […]}``; its note id is the
  file name without extension.

Each array (``textDateAnnotations``, ``textLocationAnnotations``, …) holds
``{start, length, text, confidence}`` plus the type's subtype attribute;
other properties are kept as attributes. A list of records is streamed, so a
large file is never held in memory.

A note's annotations may be spread over several records, as nlpsandbox-client
allows: it keys spans by (the last path segment of the resource name, start)
across all records of a file, whatever their dataset path. The records of one
note are merged into one document, their annotations in the order read (so a
scorer that keeps the last annotation of a start keeps the later record's), and
reported once per file. A list is counted first (each record's resource name
alone, ``count_notes``) so that only the notes with several records wait for
their last one.

Reading for scoring (``labels``) with ``columns``, the annotations of a list
of records come as columns (``Document.columns``, :class:`~nlpbench.model.SpanColumns`):
each wanted array is decoded straight into their rows.

Two facts nlpsandbox-client cannot cope with are kept in a document's
metadata for the scoring task: ``absentArrays`` (the arrays of the read labels
a record lacks, which the 1.2.0 schema allows) and ``container`` (``page``,
``bundles`` or ``response`` for a file that is not a list of records).
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import cache
from pathlib import Path
from types import GenericAlias
from typing import Annotated, Any, BinaryIO, cast

import msgspec

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, TypedWarning, excerpt, json_kind
from nlpbench.files import Input, LineTooLong, Source, bounded_lines, opened, written
from nlpbench.formats import jsonstream, register
from nlpbench.model import MISSING, PHI_TYPES, Annotation, Document, PhiType, Span, SpanColumns, SpanRow
from nlpbench.model.columns import LENGTH, SUBTYPE, TEXT

BY_ARRAY: dict[str, PhiType] = {t.array: t for t in PHI_TYPES.values()}
#: The arrays a record always carries when written (the 1.2.0 annotation types).
WRITTEN_ARRAYS = ("date", "person_name", "location", "id", "contact")
_MISFIT = "annotations whose length is not that of their text"
#: Keys that are not attributes: the span, the text, the confidence, and the note id of bundles.
_CORE_KEYS = ("start", "length", "text", "confidence", "noteId")


def read(path: Source, labels: Collection[str] | None = None, *, columns: bool = False) -> Iterator[Document]:
    """Read any of the three shapes, checking every record.

    ``labels`` reads for scoring: the arrays of other types are skipped
    unread, and each annotation keeps only its subtype attribute; with
    ``columns``, a list's annotations come as columns.

    Odd but valid annotations (a ``length`` that is not the length of
    ``text``, a subtype outside the schema's list) are read as they are and
    reported once per file, with a count and the first example.
    """
    path = files.source(path)
    oddities = _Oddities(path, labels, columns)
    with opened(path) as handle:
        first = _first_byte(handle, path)
        handle.seek(0)
        if first == b"[":
            if labels is not None and columns:  # each record in one decoding, the odd ones as the others
                every, scored = _record_type(frozenset(PHI_TYPES)), _record_type(frozenset(labels) & set(PHI_TYPES))
                records = jsonstream.items(
                    handle,
                    path,
                    every,  # every array as rows: its keys are checked from them
                    fallback_types=(*([scored] if scored is not every else []), dict[str, msgspec.Raw]),
                )
            else:
                records = jsonstream.items(handle, path, dict[str, msgspec.Raw])
            yield from _merged(_records(records, path, oddities), count_notes(path), oddities)
        else:
            data = jsonstream.decode(handle.read(), path)
            yield from _object(data, path, oddities)
    oddities.report()


class _Named(msgspec.Struct):
    """What ``count_notes`` decodes of a record: its resource name; everything else is skipped."""

    annotationSource: dict[str, dict[str, Any]]


#: The start of a record line as nlpbench and the platform write it (``json.dumps``): the record's ``name``
#: (optional), then its ``annotationSource`` holding only ``resourceSource`` holding only ``name``, each a
#: string without escapes.
_LEADING_NAME = re.compile(
    rb'\{(?:"name": ?"[^"\\]*", ?)?"annotationSource": ?\{"resourceSource": ?\{"name": ?"([^"\\]*)"\}\}[,}]'
)
_NAMED = msgspec.json.Decoder(_Named)


def count_notes(path: Source) -> Counter[str]:
    """How many records of the list in ``path`` name each note; a record that cannot be read is left
    for the reading itself to report.

    A list written one record a line is counted a line at a time (:func:`_line_counts`); any other is
    decoded a record at a time, each record's resource name alone.
    """
    with opened(path) as handle:
        counts = _line_counts(handle)
        if counts is not None:
            return counts
        handle.seek(0)
        counts = Counter()
        try:
            for record in jsonstream.items(handle, path, _Named, keys_checked=False):
                _count(counts, record)
        except (InputError, AttributeError, TypeError):  # the reading itself reports the bad record
            pass
    return counts


def _count(counts: Counter[str], record: Any) -> None:
    source = record.annotationSource if isinstance(record, _Named) else record.get("annotationSource")
    name = source.get("resourceSource", {}).get("name") if isinstance(source, dict) else None
    if isinstance(name, str):
        counts[_note_of(name)] += 1


def _line_counts(handle: BinaryIO) -> Counter[str] | None:
    """The notes a one-record-a-line list names; None as soon as a line is not ``[``, ``]``, blank or one
    whole record, or is too long to hold.

    A line that starts as :data:`_LEADING_NAME` says, with no other ``"annotationSource"`` and no ``\\u``
    escape (the only way to spell that key otherwise), holds one record that names its note there: a
    second record on the line would need its own ``annotationSource``, and a second one in the record is
    a repeated key, which the reading refuses. So most lines are counted without decoding; any other is
    decoded, its resource name alone.
    """
    counts: Counter[str] = Counter()
    named: list[str] = []  # the notes of the lines counted without decoding, counted in C a block at a time
    lines = bounded_lines(handle)
    try:
        first = next(lines, b"")
        if first.startswith(jsonstream.BOM):
            first = first[len(jsonstream.BOM) :]
        if first.strip() != b"[":
            return None
        for line in lines:
            found = _LEADING_NAME.match(line)
            if (
                found is not None
                and (b"\\" not in line or b"\\u" not in line)  # the first, one byte, is searched faster
                and line.find(b'"annotationSource"', found.end()) < 0
            ):
                named.append(_note_of(found[1].decode()))
                if len(named) == 4096:
                    counts.update(named)
                    named.clear()
                continue
            stripped = line.strip()
            if stripped in (b"", b"]"):
                continue
            _count(counts, _NAMED.decode(stripped[:-1] if stripped.endswith(b",") else stripped))
    except (LineTooLong, UnicodeDecodeError, msgspec.DecodeError, RecursionError):  # left to the reading
        return None
    counts.update(named)
    return counts


def _note_of(name: str) -> str:
    """A note id from a resource name: its last path segment, as ``os.path.basename`` gives it."""
    return name.rsplit("/", 1)[-1]


def read_records(
    records: Callable[[], Iterable[Any]],
    source: str,
    labels: Collection[str] | None = None,
    columns: bool = False,
    names: Callable[[], Iterable[Any]] | None = None,
) -> Iterator[Document]:
    """Annotation records already decoded (a data node's pages, a store's rows), checked and merged as
    :func:`read` checks and merges a file's list. ``records()`` is called twice, to count each note's
    records and to read them, so that memory stays flat; ``source`` names them in messages. A caller that
    knows the records' resource names (``annotationSource.resourceSource.name``) without the records gives
    them as ``names()``, and ``records()`` is called once."""
    oddities = _Oddities(source, labels, columns)
    named = names() if names is not None else (_name_of(record) for record in records())
    counts = Counter(_note_of(name) for name in named if isinstance(name, str))
    yield from _merged(_records(records(), source, oddities), counts, oddities)
    oddities.report()


class _Oddities:
    """The reading context: which labels are wanted, whether as columns; odd annotations counted per kind
    with a first example."""

    def __init__(self, path: Input, labels: Collection[str] | None = None, columns: bool = False):
        self.path = path
        self.labels = labels
        self.columns = columns
        self.found: dict[tuple[str, str | None], list] = {}
        #: the wanted types, by name, with the subtypes their schema allows (:func:`_row_type`)
        self.wanted = [(PHI_TYPES[label], _row_type(label)[1]) for label in sorted(labels or ()) if label in PHI_TYPES]

    def note(self, kind: str, example: str, label: str | None = None) -> None:
        """Count one odd thing of ``kind`` (in an annotation of type ``label``), keeping the first as example."""
        entry = self.found.setdefault((kind, label), [0, example])
        entry[0] += 1

    def report(self) -> None:
        """One warning per kind, first seen first: its count over every type, its first example; a kind met in
        annotations is a :class:`~nlpbench.errors.TypedWarning` that also words it per type."""
        kinds: dict[str, dict[str | None, list]] = {}
        for (kind, label), entry in self.found.items():
            kinds.setdefault(kind, {})[label] = entry
        for kind, by_label in kinds.items():
            count, example = sum(count for count, _ in by_label.values()), next(iter(by_label.values()))[1]
            message = f"{self.path}: {count} {kind} (first: {example})"
            typed = {label: f"{self.path}: {n} {kind} (first: {ex})" for label, (n, ex) in by_label.items() if label}
            warnings.warn(TypedWarning(message, typed) if typed else InputWarning(message), stacklevel=2)


def _first_byte(handle, path: Source) -> bytes:
    """The first byte after a byte order mark and blanks, read a block at a time."""
    if handle.read(len(jsonstream.BOM)) != jsonstream.BOM:
        handle.seek(0)
    while True:
        block = handle.read(65536)
        if not block:
            raise InputError("empty file", path)
        content = block.lstrip()
        if content:
            if content[:1] not in (b"[", b"{"):
                raise InputError("malformed JSON: expected a list or an object", path)
            return content[:1]


def _object(data: dict[str, Any], path: Source, odd: _Oddities) -> Iterator[Document]:
    if "patient_bundles" in data:
        yield from _contained(_unique(_bundles(data["patient_bundles"], path, odd), path), "bundles")
    elif "annotations" in data:
        records = data["annotations"]
        names = (_name_of(record) for record in (records if isinstance(records, list) else ()))
        counts = Counter(_note_of(name) for name in names if isinstance(name, str))
        yield from _contained(_merged(_records(records, path, odd), counts, odd), "page")
    elif any(key in BY_ARRAY for key in data):
        yield from _contained([_document(path.stem, data, path, "tool response", odd)], "response")
    else:
        raise InputError(
            "not NLP Sandbox JSON: expected a list of annotation records, "
            "{patient_bundles: …} or a tool response with text…Annotations arrays",
            path,
        )


def _records(records: Iterable[Any], path: Input, odd: _Oddities) -> Iterator[Document]:
    for index, record in enumerate(records):
        where = f"record {index}"
        if isinstance(record, msgspec.Struct):
            yield _read_whole(record, where, odd)
            continue
        if not isinstance(record, dict):
            raise InputError("an annotation record must be an object", path, where)
        name = _dig(record, ("annotationSource", "resourceSource", "name"), path, where)
        document = _document(_note_of(name), record, path, where, odd, odd.columns)
        if odd.labels is not None:
            arrays = (PHI_TYPES[label].array for label in sorted(odd.labels))
            absent = tuple(array for array in arrays if array not in record)
            if absent:
                document.metadata["absentArrays"] = absent
        yield document


class _Resource(msgspec.Struct, gc=False):
    name: str


class _Source(msgspec.Struct, gc=False):
    resourceSource: _Resource


@cache
def _record_type(labels: frozenset[str]) -> type[msgspec.Struct]:
    """A record of a list decoded in one go: its note's resource name, the arrays of ``labels`` as checked rows
    (:func:`_row_type`), the other arrays and its ``name`` skipped. A record with any other key, or that a
    check refuses, is decoded as a dictionary instead, and read by the general path, which says what is
    wrong or keeps what is odd.

    Reading for scoring decodes every array as rows first, whatever it scores: a record whose arrays are all
    rows is checked for repeated keys from them (``jsonstream._no_key_repeated``), which costs less than the
    second, plain decoding the check otherwise takes (for one type, about 16 µs a 2.7 kB record against 24).
    A record that only the arrays being scored decode into rows (another type's ``confidence`` of 140) is then
    decoded with the others skipped, as before."""
    fields: list[tuple] = [("annotationSource", _Source), ("name", msgspec.Raw, msgspec.UNSET)]
    for array, phi in BY_ARRAY.items():
        wanted = GenericAlias(list, _row_type(phi.name)[0]) if phi.name in labels else msgspec.Raw
        fields.append((array, wanted, msgspec.UNSET))
    return msgspec.defstruct("Record", fields, forbid_unknown_fields=True, gc=False)


def _read_whole(record: Any, where: str, odd: _Oddities) -> Document:
    """The document of a record decoded by :func:`_record_type`: its wanted arrays as columns."""
    document = Document(_note_of(record.annotationSource.resourceSource.name))
    absent = []
    for phi, allowed in odd.wanted:
        rows = getattr(record, phi.array)
        if rows is msgspec.UNSET:
            absent.append(phi.array)
        else:
            document.columns[phi.name] = _checked(rows, phi, allowed, odd, where, phi.array)
    if absent:
        document.metadata["absentArrays"] = tuple(absent)
    return document


def _name_of(record: Any) -> Any:
    source = record.get("annotationSource") if isinstance(record, dict) else None
    resource = source.get("resourceSource") if isinstance(source, dict) else None
    return resource.get("name") if isinstance(resource, dict) else None


def _contained(documents: Iterable[Document], container: str) -> Iterator[Document]:
    for document in documents:
        document.metadata["container"] = container
        yield document


def _bundles(bundles: Any, path: Source, odd: _Oddities) -> Iterator[Document]:
    if not isinstance(bundles, list):
        raise InputError("patient_bundles must be a list", path)
    for p, bundle in enumerate(bundles):
        patient_id = _dig(bundle, ("patient", "identifier"), path, f"patient_bundles[{p}]")
        for n, note_bundle in enumerate(_list(bundle, "note_bundles", path, f"patient {patient_id}")):
            where = f"patient {patient_id}, note_bundles[{n}]"
            note = note_bundle.get("note") if isinstance(note_bundle, dict) else None
            if not isinstance(note, dict) or not isinstance(note.get("text"), str):
                raise InputError("a note bundle needs a note with a text", path, where)
            record = note_bundle.get("annotation") or {}
            document = _document(_note_id(note, record, path, where), record, path, where, odd)
            document.text = note["text"]
            document.metadata.update(patientId=patient_id, noteType=note.get("type", ""))
            problem = document.span_problem()
            if problem:
                raise InputError(problem, path, where)
            yield document


def _note_id(note: dict, record: dict, path: Input, where: str) -> str:
    """A bundle's note id: ``note.identifier``, else the one ``noteId`` its annotations share."""
    if isinstance(note.get("identifier"), str):
        return note["identifier"]
    ids = {
        a.get("noteId")
        for key, values in record.items()
        if key in BY_ARRAY and isinstance(values, list)
        for a in values
        if isinstance(a, dict)
    }
    only = next(iter(ids)) if len(ids) == 1 else None
    if not isinstance(only, str):
        raise InputError("cannot tell the note id: no note.identifier and no single noteId", path, where)
    return only


def _document(
    doc_id: str, record: dict[str, Any], path: Input, where: str, odd: _Oddities, columns: bool = False
) -> Document:
    """A record's document; with ``columns``, its annotations as columns."""
    document = Document(doc_id)
    for key, values in record.items():
        phi = BY_ARRAY.get(key)
        if phi is None:
            if key.startswith("text") and key.endswith("Annotations"):
                raise InputError(f"unknown annotation type {excerpt(key)}", path, where)
            continue
        if odd.labels is not None and phi.name not in odd.labels:
            continue
        found = _typed(values, phi, odd, where, key) if odd.labels is not None else None
        if found is None:
            values = _decoded(values, path, where)
            if not isinstance(values, list):
                raise InputError(f"{key} must be a list", path, where)
            objects = [_annotation(value, phi, doc_id, odd, (where, key, index)) for index, value in enumerate(values)]
            if not columns:
                document.annotations.extend(objects)
                continue
            found = SpanColumns.of(objects, phi.type_attribute)
        if columns:
            document.columns[phi.name] = found
        else:
            document.annotations.extend(found.annotations(doc_id, phi.name, phi.type_attribute))
    return document


def _typed(raw: Any, phi: PhiType, odd: _Oddities, where: str, key: str) -> SpanColumns | None:
    """A wanted array, undecoded, decoded straight into checked rows; None when it is decoded already or
    a check fails, so that the general path can say exactly what is wrong. Only the subtype is kept."""
    if not isinstance(raw, msgspec.Raw):
        return None
    try:
        rows = _array_decoder(phi.name).decode(raw)
    except msgspec.DecodeError:  # ValidationError included: the general path says what is wrong
        return None
    return _checked(rows, phi, _row_type(phi.name)[1], odd, where, key)


def _checked(
    rows: list[SpanRow], phi: PhiType, allowed: frozenset | None, odd: _Oddities, where: str, key: str
) -> SpanColumns:
    """The decoded rows of an array, their odd annotations noted: a length that is not their text's, a subtype
    outside ``allowed`` (the schema's, when it lists any)."""
    if list(map(len, map(TEXT, rows))) != list(map(LENGTH, rows)):  # map: the loops run in C
        for index, row in enumerate(rows):
            assert row.text is not None  # a decoded row has its text
            if len(row.text) != row.length:
                at = _where((where, key, index))
                odd.note(_MISFIT, f"{at}: length {row.length}, text of {len(row.text)} characters", phi.name)
    if allowed is not None and not allowed.issuperset(map(SUBTYPE, rows)):
        for index, row in enumerate(rows):
            if row.subtype not in allowed:
                odd.note(
                    f"{phi.type_attribute} values outside the 1.2.0 schema",
                    f"{_where((where, key, index))}: {excerpt(row.subtype)}",
                    phi.name,
                )
    return SpanColumns(rows)


@cache
def _row_type(name: str) -> tuple[type[SpanRow], frozenset | None]:
    """For the annotations of a type: a :class:`~nlpbench.model.SpanRow` to decode them into, refusing what the
    general path refuses (bools, floats and negatives as offsets, a confidence outside 0 to 100), and the
    subtypes the schema allows (:data:`MISSING` too; None when it lists none)."""
    phi = PHI_TYPES[name]
    offset = Annotated[int, msgspec.Meta(ge=0)]
    percent = msgspec.Meta(ge=0, le=100)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [
        ("start", offset),
        ("length", offset),
        ("text", str),
        # another value than a string goes the general path, which keeps any
        ("subtype", str, msgspec.field(default=MISSING, name=phi.type_attribute)),
        ("confidence", Annotated[int, percent] | Annotated[float, percent] | None, None),
    ]
    # omit_defaults: encoded again, a row writes only members its text wrote (jsonstream's repeated-key check)
    row = msgspec.defstruct(f"Text{name}", fields, bases=(SpanRow,), kw_only=True, omit_defaults=True, gc=False)
    allowed = frozenset([*phi.subtypes, MISSING]) if phi.subtypes else None
    return cast(type[SpanRow], row), allowed


@cache
def _array_decoder(name: str) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(GenericAlias(list, _row_type(name)[0]))


def _annotation(value: Any, phi: PhiType, doc_id: str, odd: _Oddities, at: tuple[str, str, int]) -> Annotation:
    """One annotation object; ``value`` is a freshly decoded dict whose leftover keys become its attributes."""
    try:
        start, length, text = value["start"], value["length"], value["text"]
        confidence = value.get("confidence")
    except (KeyError, TypeError):
        raise _problem(value, odd.path, at) from None
    if not (
        type(start) is int
        and type(length) is int
        and start >= 0
        and length >= 0
        and type(text) is str
        and (confidence is None or (type(confidence) in (int, float) and 0 <= confidence <= 100))
    ):
        raise _problem(value, odd.path, at)
    if len(text) != length:
        odd.note(_MISFIT, f"{_where(at)}: length {length}, text of {len(text)} characters", phi.name)
    if phi.subtypes and phi.type_attribute in value and value[phi.type_attribute] not in phi.subtypes:
        odd.note(
            f"{phi.type_attribute} values outside the 1.2.0 schema",
            f"{_where(at)}: {excerpt(value[phi.type_attribute])}",
            phi.name,
        )
    for key in _CORE_KEYS:
        value.pop(key, None)
    if odd.labels is not None:  # reading for scoring: only the subtype is kept, as on the typed path
        value = {phi.type_attribute: value[phi.type_attribute]} if phi.type_attribute in value else {}
    return Annotation(doc_id, Span.of(start, length), phi.name, text, value, confidence)


def _where(at: tuple[str, str, int]) -> str:
    record, key, index = at
    return f"{record}, {key}[{index}]"


def _problem(value: Any, path: Input, at: tuple[str, str, int]) -> InputError:
    """The first thing wrong with an annotation object that the fast checks refused."""
    if not isinstance(value, dict):
        return InputError("an annotation must be an object", path, _where(at))
    for key in ("start", "length", "text"):
        if key not in value:
            return InputError(f"missing required field {key!r}", path, _where(at))
    start, length, text, confidence = value["start"], value["length"], value["text"], value.get("confidence")
    for key, number in (("start", start), ("length", length)):
        if type(number) is not int:
            return InputError(f"{key} {excerpt(number)} is not an integer", path, _where(at))
    if start < 0 or length < 0:
        return InputError(f"negative offset: start {start}, length {length}", path, _where(at))
    if type(text) is not str:
        return InputError(f"text is {json_kind(text)}, not a string", path, _where(at))
    return InputError(f"confidence {excerpt(confidence)} is not a number from 0 to 100", path, _where(at))


def _decoded(value: Any, path: Input, where: str) -> Any:
    """A value as Python objects: records streamed a line at a time leave values undecoded until needed."""
    if not isinstance(value, msgspec.Raw):
        return value
    try:
        return msgspec.json.decode(value)
    except msgspec.DecodeError as error:  # a lone surrogate, which the line's first pass skipped over
        raise InputError(f"malformed JSON: {error}", path, where) from None


def _dig(obj: Any, keys: tuple[str, ...], path: Input, where: str) -> str:
    for key in keys:
        if not isinstance(obj, dict) or key not in obj:
            raise InputError(f"missing required field {'.'.join(keys)!r}", path, where)
        obj = _decoded(obj[key], path, where)
    if not isinstance(obj, str):
        raise InputError(f"{'.'.join(keys)} must be a string", path, where)
    return obj


def _list(obj: Any, key: str, path: Input, where: str) -> list:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, list):
        raise InputError(f"{key} must be a list", path, where)
    return value


def _merged(documents: Iterable[Document], counts: Counter[str], odd: _Oddities) -> Iterator[Document]:
    """The documents read from records, those of one note merged into one, yielded at its last record.

    ``counts`` says how many records name each note; only the notes with several wait.
    """
    waiting: dict[str, Document] = {}
    for document in documents:
        expected = counts.get(document.id, 1)
        if expected == 1:
            yield document
            continue
        merged = waiting.get(document.id)
        if merged is None:
            merged = waiting[document.id] = document
            merged.metadata["records"] = 1
            odd.note("notes split over several annotation records, merged in the order read", f"note {document.id}")
        else:
            merged.annotations.extend(document.annotations)
            for label, found in document.columns.items():
                merged.columns.setdefault(label, SpanColumns()).extend(found)
            absent = merged.metadata.get("absentArrays", ()) + document.metadata.get("absentArrays", ())
            if absent:
                merged.metadata["absentArrays"] = tuple(dict.fromkeys(absent))
            merged.metadata["records"] += 1
        if merged.metadata["records"] == expected:
            del waiting[document.id], merged.metadata["records"]
            yield merged
    for merged in waiting.values():  # fewer records than counted: a record the count could not read
        del merged.metadata["records"]
        yield merged


def _unique(documents: Iterable[Document], path: Source) -> Iterator[Document]:
    """Refuse a second bundle for a note: a bundle carries the note's text, which two bundles could disagree on."""
    seen: set[str] = set()
    for document in documents:
        if document.id in seen:
            raise InputError("a second note bundle for this note", path, f"note {document.id}")
        seen.add(document.id)
        yield document


# --- writing -------------------------------------------------------------------------------


def annotation_json(annotation: Annotation, text: str | None) -> dict[str, Any]:
    """One annotation as an NLP Sandbox object; ``text`` is the note text when known."""
    covered = annotation.text
    if covered is None and text is not None:
        covered = annotation.span.covered_text(text)
    if covered is None:
        raise InputError(
            f"annotation at {annotation.start} has no text and the note text is unknown",
            record=f"document {annotation.doc_id}",
        )
    obj: dict[str, Any] = {"start": annotation.start, "length": annotation.span.length, "text": covered}
    if annotation.confidence is not None:
        obj["confidence"] = annotation.confidence
    obj.update(annotation.attributes)
    return obj


def record_json(document: Document, left_out: Counter[str] | None = None) -> dict[str, Any]:
    """A document's annotations as one data-node annotation record.

    Annotations whose label has no NLP Sandbox array are left out and counted
    by label in ``left_out``.
    """
    record: dict[str, Any] = {
        "name": document.id,
        "annotationSource": {"resourceSource": {"name": document.id}},
    }
    arrays: dict[str, list[dict[str, Any]]] = {name: [] for name in WRITTEN_ARRAYS}
    for annotation in document.annotations:
        if annotation.label in PHI_TYPES:
            arrays.setdefault(annotation.label, []).append(annotation_json(annotation, document.text))
        elif left_out is not None:
            left_out[annotation.label] += 1
    for label, values in arrays.items():
        record[PHI_TYPES[label].array] = values
    return record


_STORED_ARRAYS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_NO_ANNOTATIONS = msgspec.Raw(b"[]")


def raw_record(note: str, arrays: str | bytes | None) -> dict[str, Any]:
    """The record :func:`record_json` writes for a note whose stored record holds ``arrays`` (the JSON text of an
    object of NLP Sandbox arrays; None: the note has no record), each array left undecoded
    (:class:`msgspec.Raw`) for a reading for scoring to decode straight into columns. An array of no NLP
    Sandbox type is left out, as :func:`record_json` leaves out an annotation of no such type."""
    stored = _STORED_ARRAYS.decode(arrays) if arrays is not None else {}
    record: dict[str, Any] = {"name": note, "annotationSource": {"resourceSource": {"name": note}}}
    for label in WRITTEN_ARRAYS:
        record[PHI_TYPES[label].array] = stored.get(PHI_TYPES[label].array, _NO_ANNOTATIONS)
    record.update((array, value) for array, value in stored.items() if array in BY_ARRAY and array not in record)
    return record


def _warn_left_out(path: Source, left_out: Counter[str]) -> None:
    if left_out:
        listed = ", ".join(f"{n} {label}" for label, n in sorted(left_out.items()))
        warnings.warn(f"{path}: no NLP Sandbox array for {listed} annotations: left out", InputWarning, stacklevel=3)


def write(documents: Iterable[Document], path: Path) -> None:
    """Write a JSON list of annotation records, one record a line."""
    left_out: Counter[str] = Counter()
    with written(path) as handle:
        handle.write("[")
        for index, document in enumerate(documents):
            handle.write(",\n" if index else "\n")
            handle.write(json.dumps(record_json(document, left_out), ensure_ascii=False))
        handle.write("\n]\n")
    _warn_left_out(path, left_out)


def write_bundles(documents: Iterable[Document], path: Path, confidence: float | None = None) -> None:
    """Write patient bundles; every document needs its text.

    The bundles carry what the NLP Sandbox's seeding script (nlpsandbox-client's
    ``examples/push_dataset.py``) needs, since it takes a note's id from the
    ``noteId`` its annotations share and passes the note and its record to the
    1.2.0 create requests as they are: every annotation carries ``noteId``, the
    record has no ``name`` and the note no ``identifier`` — except a note
    without annotations, which keeps its ``identifier`` so that it is read back.
    The schema also requires each annotation's ``confidence``: ``confidence``
    is given to those without one (``sandbox-seed``); by default nothing is
    added, so that a dataset written and read back is the same.
    """
    patients: dict[str, list[dict[str, Any]]] = {}
    left_out: Counter[str] = Counter()
    for document in documents:
        if document.text is None:
            raise InputError("patient bundles need each note's text", record=f"document {document.id}")
        patient = str(document.metadata.get("patientId", document.id))
        note = {"text": document.text, "type": document.metadata.get("noteType", ""), "patientId": patient}
        record = record_json(document, left_out)
        del record["name"]
        annotations = [a for key, values in record.items() if key in BY_ARRAY for a in values]
        for annotation in annotations:
            if confidence is not None:
                annotation.setdefault("confidence", confidence)
            annotation["noteId"] = document.id
        if not annotations:
            note = {"identifier": document.id, **note}
        patients.setdefault(patient, []).append({"note": note, "annotation": record})
    bundles = [{"patient": {"identifier": patient}, "note_bundles": notes} for patient, notes in patients.items()]
    with written(path) as handle:
        json.dump({"patient_bundles": bundles}, handle, ensure_ascii=False, indent=1)
    _warn_left_out(path, left_out)


def write_seed(documents: Iterable[Document], path: Path) -> None:
    """Patient bundles for the NLP Sandbox's seeding script: an annotation without a confidence gets 100."""
    write_bundles(documents, path, confidence=100)


def write_response(documents: Iterable[Document], path: Path) -> None:
    """Write the one document of a tool response: its arrays, without a record around them."""
    documents = list(documents)
    if len(documents) != 1:
        raise InputError(f"a tool response holds one note, not {len(documents)}", path)
    left_out: Counter[str] = Counter()
    record = record_json(documents[0], left_out)
    with written(path) as handle:
        json.dump({k: v for k, v in record.items() if k in BY_ARRAY}, handle, ensure_ascii=False, indent=1)
    _warn_left_out(path, left_out)


register(
    "sandbox",
    "NLP Sandbox annotation records (a JSON list); reads every sandbox shape",
    read,
    write,
    reads_labels=True,
    columns=True,
)
register(
    "sandbox-bundles",
    "NLP Sandbox patient bundles with note texts",
    read,
    write_bundles,
    reads_labels=True,
    columns=True,
)
register(
    "sandbox-seed",
    "NLP Sandbox patient bundles for its seeding script (push_dataset.py): confidence 100 where none",
    read,
    write_seed,
    reads_labels=True,
    columns=True,
)
register(
    "sandbox-response",
    "one NLP Sandbox tool response (one note)",
    read,
    write_response,
    reads_labels=True,
    columns=True,
)
