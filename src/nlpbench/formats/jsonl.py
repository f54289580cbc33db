"""JSON Lines: one JSON object per line, one document per object.

Entities and relations (format ``jsonl``)::

    {"id": "d1", "text": "John lives in Paris.",
     "entities": [{"start": 0, "end": 4, "label": "PER"}, {"id": "p", "start": 14, "end": 19, "label": "LOC"}],
     "relations": [{"head": 0, "tail": "p", "label": "lives_in"}]}

``start`` and ``end`` are character offsets into ``text`` (end exclusive); an
entity may also carry ``attributes`` (an object, e.g. ``{"locationType": "city"}``).
Instead of ``text`` a line may give ``tokens`` (a list of strings); then
``start`` and ``end`` are token indices (end exclusive), the text is the
tokens joined by single blanks and the token offsets are kept in
``metadata["tokens"]``, so that entities are compared in tokens. An entity
may carry an ``id`` (else its index, as a string, is its id) and its
``text``, which must be what the span covers. A relation names its head and
tail by entity index or id.

Surface triples (:func:`read_triples`), for relations known by their words only::

    {"id": "d1", "triples": [{"head": "John", "head_type": "PER", "label": "lives_in", "tail": "Paris"}]}

Entity links (:func:`read_gold_links`, :func:`read_predicted_links`)::

    {"id": "d1", "entities": [{"mention": "FORCED LANDING", "qid": "Q1975745",
                               "alternatives": [{"mention": "LANDING", "qid": "Q844947"}]}]}

A gold entity lists its primary link and, optionally, alternatives from the
most to the least specific (``qid`` may be null); a prediction gives one
``mention`` and ``qid`` per entity and no alternatives.
"""

from __future__ import annotations

import json
import operator
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from operator import attrgetter
from pathlib import Path
from typing import Annotated, Any, TypeGuard

import msgspec

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, excerpt, json_kind
from nlpbench.files import Source, written
from nlpbench.formats import jsonstream, register
from nlpbench.model import (
    Annotation,
    Argument,
    Document,
    EntityColumns,
    GoldEntity,
    LinkedMention,
    Relation,
    Span,
    TokenDocument,
    Triple,
    tokens_document,
)


def records(path: Source, line_type: type[_Identified] | None = None) -> Iterator[tuple[str, Any]]:
    """``(where, object)`` for each non-blank line; every object needs a string ``id``, unique in the file.

    Keys not read are ignored; a key written twice in a line is an error. With ``line_type`` (a struct
    with an ``id``, see :func:`~nlpbench.formats.jsonstream.typed`), a line of that type comes as one.
    """
    path = files.source(path)
    seen: set[str] = set()
    for where, record in jsonstream.json_lines(path, line_type):
        if line_type is not None and isinstance(record, line_type):
            doc_id = record.id
        elif not isinstance(record, dict) or not isinstance(record.get("id"), str) or not record["id"]:
            raise InputError("each line must be an object with a string id", path, where)
        else:
            doc_id = record["id"]
        if doc_id in seen:
            raise InputError(f"document {excerpt(doc_id)} appears twice", path, where)
        seen.add(doc_id)
        yield where, record


def _list(record: dict[str, Any], key: str, path: Source, where: str, *, required: bool = True) -> list[Any]:
    """The list ``record[key]``; a missing required key is an error (a document without any is ``[]``)."""
    if key not in record and required:
        raise InputError(f"no {key!r} (write {key!r}: [] for a document without any)", path, where)
    value = record.get(key, [])
    if not isinstance(value, list):
        raise InputError(f"{key} must be a list, not {json_kind(value)}", path, where)
    return value


def _integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _document(record: dict[str, Any], path: Source, where: str) -> Document:
    has_text, has_tokens = "text" in record, "tokens" in record
    if has_text == has_tokens:
        raise InputError("give either text or tokens", path, where)
    if has_text:
        if not isinstance(record["text"], str):
            raise InputError("text must be a string", path, where)
        return Document(record["id"], record["text"])
    tokens = record["tokens"]
    if not isinstance(tokens, list) or not all(isinstance(t, str) and t and not t.isspace() for t in tokens):
        raise InputError("tokens must be a list of non-blank strings", path, where)
    return tokens_document(record["id"], tokens)


def _entity(entity: object, index: int, document: Document, path: Source, where: str) -> Annotation:
    name = f"entity {index}"
    if not isinstance(entity, dict):
        raise InputError(f"{name} must be an object", path, where)
    start, end, label = entity.get("start"), entity.get("end"), entity.get("label")
    if not (_integer(start) and _integer(end)) or not isinstance(label, str) or not label:
        raise InputError(f"{name} needs integer start and end and a label", path, where)
    tokens = document.metadata.get("tokens")
    limit = len(tokens) if tokens is not None else len(document.text or "")
    if not 0 <= start < end <= limit:
        unit = "tokens" if tokens is not None else "characters"
        raise InputError(f"{name} at {start}-{end} is empty or outside the document ({limit} {unit})", path, where)
    if tokens is not None:
        start, end = tokens[start][0], tokens[end - 1][1]
    identifier = entity.get("id", str(index))
    if not isinstance(identifier, str):
        raise InputError(f"{name}: id must be a string", path, where)
    text = entity.get("text")
    if text is not None and not isinstance(text, str):
        raise InputError(f"{name}: text must be a string", path, where)
    attributes = entity.get("attributes", {})
    if not isinstance(attributes, dict):
        raise InputError(f"{name}: attributes must be an object", path, where)
    return Annotation(document.id, Span(start, end), label, text, attributes, id=identifier)


def _relation(relation: object, index: int, ids: list[str], path: Source, where: str) -> Relation:
    name = f"relation {index}"
    if not isinstance(relation, dict) or not isinstance(relation.get("label"), str) or not relation["label"]:
        raise InputError(f"{name} must be an object with head, tail and label", path, where)
    ends = []
    for role in ("head", "tail"):
        ref = relation.get(role)
        if _integer(ref) and 0 <= ref < len(ids):
            ends.append(ids[ref])
        elif isinstance(ref, str) and ref in ids:
            ends.append(ref)
        else:
            raise InputError(f"{name}: {role} {excerpt(ref)} is no entity index or id", path, where)
    return Relation(relation["label"], ends[0], ends[1], id=relation.get("id"))


def read(path: Source) -> Iterator[Document]:
    """Documents with their entities and relations, checked against their text."""
    path = files.source(path)
    for where, record in records(path):
        yield _read_record(record, path, where)


def read_entities(path: Source) -> Iterator[Document | TokenDocument]:
    """The documents :func:`read` gives, but a line of tokens and plain entities comes as a
    :class:`~nlpbench.model.TokenDocument`, its entities in token indices, for scoring entities in tokens.

    Such a line has only ``id``, ``tokens`` and ``entities``, and each entity only ``start``, ``end`` and
    ``label``. It is decoded in one go (:class:`_TokensLine`) and checked as :func:`read` checks it; any
    other line, or one a check refuses, is read by :func:`read`'s path, which says what is wrong.
    """
    path = files.source(path)
    for where, record in records(path, _TokensLine):
        if isinstance(record, _TokensLine):
            document = _token_document(record)
            if document is not None:
                yield document
                continue
            record = msgspec.to_builtins(record)
        yield _read_record(record, path, where)


def _read_record(record: dict[str, Any], path: Source, where: str) -> Document:
    document = _document(record, path, where)
    entities = _list(record, "entities", path, where)
    document.annotations = [_entity(e, i, document, path, where) for i, e in enumerate(entities)]
    ids = [a.id or "" for a in document.annotations]
    if len(set(ids)) != len(ids):
        raise InputError("two entities share an id", path, where)
    relations = _list(record, "relations", path, where, required=False)
    document.relations = [_relation(r, i, ids, path, where) for i, r in enumerate(relations)]
    problem = document.span_problem()
    if problem:
        raise InputError(problem, path, where)
    return document


_Label = Annotated[str, msgspec.Meta(min_length=1)]


class _Identified(msgspec.Struct, gc=False):
    """A line decoded into a struct: its id, a string of one character or more."""

    id: _Label


class _PlainEntity(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An entity of :class:`_TokensLine`: integers (not booleans) and a label; any other key is refused."""

    start: int
    end: int
    label: _Label


class _TokensLine(_Identified, forbid_unknown_fields=True, gc=False):
    """A line :func:`read_entities` decodes in one go: an id, tokens (strings of one character or more) and
    plain entities, nothing else; every field is required, so that the line checks its own keys
    (:func:`~nlpbench.formats.jsonstream.typed`)."""

    tokens: list[_Label]
    entities: list[_PlainEntity]


#: Any character ``str.isspace`` holds for (``re``'s ``\s`` on a ``str`` is the same test, in C).
_SPACE = re.compile(r"\s")
_START, _END, _LABEL = attrgetter("start"), attrgetter("end"), attrgetter("label")


def _token_document(line: _TokensLine) -> TokenDocument | None:
    """The document of a decoded line, or None when :func:`read` would refuse it: a token that is only
    blanks, an entity outside ``0 <= start < end <= len(tokens)``. Each check runs in C over the whole line:
    tokens holding no blank at all need no test one by one."""
    tokens = line.tokens
    if _SPACE.search("".join(tokens)) is not None and any(token.isspace() for token in tokens):
        return None
    entities = line.entities
    starts, ends = list(map(_START, entities)), list(map(_END, entities))
    if entities and (min(starts) < 0 or max(ends) > len(tokens) or not all(map(operator.lt, starts, ends))):
        return None
    return TokenDocument(line.id, tokens, EntityColumns(starts, ends, list(map(_LABEL, entities))))


def to_record(document: Document, left_out: Counter[str] | None = None) -> dict[str, Any]:
    """The JSON object of a document: tokens and token indices when it has tokens every entity fits, else text.

    What a line cannot hold as it is (discontinuous spans) is counted in ``left_out``."""
    if document.text is None:
        raise InputError("JSONL needs the document text", record=f"document {document.id}")
    tokens = document.metadata.get("tokens")
    start_index = {s: i for i, (s, _) in enumerate(tokens or [])}
    end_index = {e: i + 1 for i, (_, e) in enumerate(tokens or [])}
    in_tokens = tokens is not None and all(a.start in start_index and a.end in end_index for a in document.annotations)
    record: dict[str, Any] = {"id": document.id}
    if tokens is not None and in_tokens:
        record["tokens"] = [document.text[s:e] for s, e in tokens]
    else:
        record["text"] = document.text
    index = {a.id: i for i, a in enumerate(document.annotations) if a.id is not None}
    record["entities"] = []
    for annotation in document.annotations:
        entity = {
            "start": start_index[annotation.start] if in_tokens else annotation.start,
            "end": end_index[annotation.end] if in_tokens else annotation.end,
            "label": annotation.label,
        }
        if annotation.attributes:
            entity["attributes"] = annotation.attributes
        if annotation.span.discontinuous and left_out is not None:
            left_out["discontinuous annotations written as one extent"] += 1
        record["entities"].append(entity)
    if document.relations:
        record["relations"] = []
        for relation in document.relations:
            if relation.head not in index or relation.tail not in index:
                raise InputError(f"relation {relation.label} names an unknown entity", record=f"document {document.id}")
            record["relations"].append(
                {"head": index[relation.head], "tail": index[relation.tail], "label": relation.label}
            )
    return record


def write(documents: Iterable[Document], path: Path) -> None:
    left_out: Counter[str] = Counter()
    with written(path) as handle:
        for document in documents:
            handle.write(json.dumps(to_record(document, left_out), ensure_ascii=False) + "\n")
    for what, count in left_out.items():
        warnings.warn(f"{path}: {count} {what}", InputWarning, stacklevel=2)


def _string(value: object, allow_none: bool = False) -> bool:
    return (allow_none and value is None) or (isinstance(value, str) and bool(value.strip()))


def read_triples(path: Source) -> Iterator[Triple]:
    """Surface triples (``head``, ``label``, ``tail`` and optional ``head_type``, ``tail_type``) in file order."""
    path = files.source(path)
    for where, record in records(path):
        for index, triple in enumerate(_list(record, "triples", path, where)):
            if not isinstance(triple, dict) or not all(_string(triple.get(k)) for k in ("head", "label", "tail")):
                raise InputError(f"triple {index} needs head, label and tail strings", path, where)
            if not all(_string(triple.get(k), allow_none=True) for k in ("head_type", "tail_type")):
                raise InputError(f"triple {index}: head_type and tail_type must be strings", path, where)
            yield Triple(
                record["id"],
                triple["label"],
                Argument(None, triple["head"], triple.get("head_type")),
                Argument(None, triple["tail"], triple.get("tail_type")),
            )


def _link(value: object, name: str, path: Source, where: str, *, gold: bool) -> tuple[str, str | None]:
    if not isinstance(value, dict) or not _string(value.get("mention")) or not _string(value.get("qid"), gold):
        wanted = "a mention and a qid (or null)" if gold else "a mention and a qid"
        raise InputError(f"{name} needs {wanted}", path, where)
    return value["mention"], value.get("qid")


def read_gold_links(path: Source) -> Iterator[GoldEntity]:
    """Gold entities: each its primary (mention, qid) and its alternatives, in file order."""
    path = files.source(path)
    for where, record in records(path):
        for index, entity in enumerate(_list(record, "entities", path, where)):
            name = f"entity {index}"
            choices = [_link(entity, name, path, where, gold=True)]
            alternatives = entity.get("alternatives", []) if isinstance(entity, dict) else []
            if not isinstance(alternatives, list):
                raise InputError(f"{name}: alternatives must be a list", path, where)
            choices += [_link(a, f"{name} alternative {i}", path, where, gold=True) for i, a in enumerate(alternatives)]
            yield GoldEntity(record["id"], tuple(choices))


def read_predicted_links(path: Source) -> Iterator[LinkedMention]:
    """A system's links: one (mention, qid) per entity, in file order."""
    path = files.source(path)
    ignored = 0
    for where, record in records(path):
        for index, entity in enumerate(_list(record, "entities", path, where)):
            mention, qid = _link(entity, f"entity {index}", path, where, gold=False)
            if "alternatives" in entity:
                if not isinstance(entity["alternatives"], list):
                    raise InputError(f"entity {index}: alternatives must be a list", path, where)
                ignored += bool(entity["alternatives"])
            yield LinkedMention(record["id"], mention, qid or "")
    if ignored:
        warnings.warn(
            f"{path}: {ignored} predicted entities list alternatives: a prediction is scored by its one qid, "
            "the alternatives are ignored",
            InputWarning,
            stacklevel=2,
        )


register(
    "jsonl",
    "JSON Lines: text or tokens, entities {start, end, label}, relations {head, tail, label}",
    read,
    write,
    keeps=("relations",),
)
