"""BioC collections, XML or JSON, through the ``bioc`` package.

A document's text is its passages placed at their offsets. An annotation's
``type`` infon is its label; other infons are its attributes, except
``confidence`` and ``link:<resource>`` infons, which hold the confidence and
normalisations. One location per fragment. A relation's ``type`` infon is its
label, its ``head`` and ``tail`` nodes (or its first two nodes) its arguments.
The file name decides XML or JSON: ``.json`` is JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import bioc
from bioc import biocjson, biocxml

from nlpbench import files
from nlpbench.errors import InputError, shorten
from nlpbench.files import Source, opened, read_bytes, written
from nlpbench.formats import jsonstream, register
from nlpbench.model import Annotation, Document, Link, Relation, Span

_LINK = "link:"


def read(path: Source) -> Iterator[Document]:
    path = files.source(path)
    try:
        if path.suffix.lower() == ".json":
            data = read_bytes(path)
            jsonstream.decode(data, path)  # bounded, UTF-8, no lone surrogate, no repeated key
            collection = biocjson.loads(data.decode("utf-8-sig"))
        else:
            with opened(path) as handle:  # the XML parser reads the encoding and a byte order mark itself
                collection = biocxml.load(handle)
    except InputError:
        raise
    except Exception as error:  # the bioc package raises parser-specific errors
        raise InputError(f"malformed BioC: {error}", path) from None
    for index, bioc_document in enumerate(collection.documents):
        yield _document(bioc_document, path, f"document {index} ({bioc_document.id})")


def _document(bioc_document, path: Source, where: str) -> Document:
    document = Document(bioc_document.id, _text(bioc_document, path, where))
    holders = [bioc_document, *bioc_document.passages]
    for holder in holders:
        for bioc_annotation in holder.annotations:
            annotation, links = _annotation(bioc_annotation, document.id, path, where)
            document.annotations.append(annotation)
            document.links.extend(links)
        for relation in holder.relations:
            document.relations.append(_relation(relation, path, where))
    problem = document.span_problem() or _reference_problem(document)
    if problem:
        raise InputError(problem, path, where)
    return document


def _reference_problem(document: Document) -> str | None:
    """A repeated annotation id, or a relation naming no annotation of the document (links are the annotations')."""
    ids = [a.id for a in document.annotations if a.id is not None]
    if len(set(ids)) != len(ids):
        repeated = next(i for i in ids if ids.count(i) > 1)
        return f"annotation id {shorten(repeated)} is given twice"
    known = set(ids)
    for relation in document.relations:
        for role, target in (("head", relation.head), ("tail", relation.tail)):
            if target not in known:
                name = shorten(relation.id or relation.label)
                return f"relation {name}: its {role} {shorten(str(target))} is no annotation"
    return None


def _text(bioc_document, path: Source, where: str) -> str:
    text = ""
    for passage in sorted(bioc_document.passages, key=lambda p: p.offset):
        if passage.offset < len(text):
            raise InputError(f"passage at offset {passage.offset} overlaps the previous one", path, where)
        text += " " * (passage.offset - len(text)) + (passage.text or "")
    return text


def _annotation(bioc_annotation, doc_id: str, path: Source, where: str) -> tuple[Annotation, list[Link]]:
    infons = dict(bioc_annotation.infons)
    where = f"{where}, annotation {bioc_annotation.id}"
    label = infons.pop("type", None)
    if not label:
        raise InputError("annotation without a 'type' infon", path, where)
    if not bioc_annotation.locations:
        raise InputError("annotation without a location", path, where)
    try:
        span = Span.from_fragments([(loc.offset, loc.offset + loc.length) for loc in bioc_annotation.locations])
        confidence = float(infons.pop("confidence")) if "confidence" in infons else None
        links = [
            Link(bioc_annotation.id, key[len(_LINK) :], value)
            for key, value in list(infons.items())
            if key.startswith(_LINK)
        ]
        attributes = {k: v for k, v in infons.items() if not k.startswith(_LINK)}
        annotation = Annotation(
            doc_id, span, label, bioc_annotation.text or None, attributes, confidence, bioc_annotation.id or None
        )
    except ValueError as error:
        raise InputError(str(error), path, where) from None
    return annotation, links


def _relation(relation, path: Source, where: str) -> Relation:
    roles = {node.role: node.refid for node in relation.nodes}
    if "head" in roles and "tail" in roles:
        head, tail = roles["head"], roles["tail"]
    elif len(relation.nodes) >= 2:
        head, tail = relation.nodes[0].refid, relation.nodes[1].refid
    else:
        raise InputError(f"relation {relation.id} needs two nodes", path, where)
    return Relation(relation.infons.get("type", ""), head, tail, id=relation.id or None)


def to_collection(documents: Iterable[Document]) -> bioc.BioCCollection:
    collection = bioc.BioCCollection()
    collection.date = ""  # the package stamps today's date; output must not depend on the day
    for document in documents:
        if document.text is None:
            raise InputError("BioC needs the note text", record=f"document {document.id}")
        bioc_document = bioc.BioCDocument()
        bioc_document.id = document.id
        passage = bioc.BioCPassage()
        passage.offset, passage.text = 0, document.text
        links: dict[str | None, list[Link]] = {}
        for link in document.links:
            links.setdefault(link.target, []).append(link)
        for number, annotation in enumerate(document.annotations, start=1):
            passage.add_annotation(_bioc_annotation(annotation, number, document.text, links))
        for number, relation in enumerate(document.relations, start=1):
            bioc_relation = bioc.BioCRelation()
            bioc_relation.id = relation.id or f"R{number}"
            bioc_relation.infons["type"] = relation.label
            bioc_relation.add_node(bioc.BioCNode(relation.head, "head"))
            bioc_relation.add_node(bioc.BioCNode(relation.tail, "tail"))
            passage.add_relation(bioc_relation)
        bioc_document.add_passage(passage)
        collection.add_document(bioc_document)
    return collection


def _bioc_annotation(annotation: Annotation, number: int, text: str, links: dict) -> bioc.BioCAnnotation:
    bioc_annotation = bioc.BioCAnnotation()
    bioc_annotation.id = annotation.id or f"T{number}"
    bioc_annotation.infons["type"] = annotation.label
    bioc_annotation.infons.update({k: str(v) for k, v in annotation.attributes.items()})
    if annotation.confidence is not None:
        bioc_annotation.infons["confidence"] = repr(annotation.confidence)
    for link in links.get(annotation.id, []):
        bioc_annotation.infons[_LINK + link.resource] = link.identifier
    for start, end in annotation.span.parts:
        bioc_annotation.add_location(bioc.BioCLocation(start, end - start))
    bioc_annotation.text = annotation.span.covered_text(text)
    return bioc_annotation


def write(documents: Iterable[Document], path: Path) -> None:
    path = Path(path)
    collection = to_collection(documents)
    with written(path) as handle:
        if path.suffix.lower() == ".json":
            biocjson.dump(collection, handle, indent=1)
        else:
            biocxml.dump(collection, handle)


register(
    "bioc",
    "BioC collection, XML (or JSON when the file name ends in .json)",
    read,
    write,
    keeps=("relations", "links"),
)
