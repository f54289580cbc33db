"""i2b2 2014 de-identification XML: one file per note.

``<deIdi2b2><TEXT><![CDATA[…]]></TEXT><TAGS><DATE id="P0" start="16"
end="26" text="…" TYPE="DATE" comment=""/>…</TAGS></deIdi2b2>``.

Categories map to NLP Sandbox annotation types as the NLP Sandbox did: DATE →
``date``, NAME → ``person_name`` (``personType``), LOCATION → ``location``
(``locationType``), ID → ``id`` (``idType``), CONTACT → ``contact``
(``contactType``); PROFESSION and AGE keep their own labels. The note id is
the file name without ``.xml``.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, excerpt
from nlpbench.files import Source, in_folder, opened, written
from nlpbench.formats import register
from nlpbench.model import Annotation, Document, Span

#: i2b2 category → (annotation label, subtype attribute, {i2b2 TYPE: subtype}).
CATEGORIES: dict[str, tuple[str, str | None, dict[str, str]]] = {
    "DATE": ("date", None, {"DATE": ""}),
    "NAME": ("person_name", "personType", {"PATIENT": "patient", "DOCTOR": "doctor", "USERNAME": "username"}),
    "PROFESSION": ("profession", None, {"PROFESSION": ""}),
    "AGE": ("age", None, {"AGE": ""}),
    "LOCATION": (
        "location",
        "locationType",
        {
            "ROOM": "room",
            "DEPARTMENT": "department",
            "HOSPITAL": "hospital",
            "ORGANIZATION": "organization",
            "STREET": "street",
            "CITY": "city",
            "STATE": "state",
            "COUNTRY": "country",
            "ZIP": "zip",
            "LOCATION-OTHER": "other",
        },
    ),
    "ID": (
        "id",
        "idType",
        {
            "SSN": "ssn",
            "MEDICALRECORD": "medical_record",
            "HEALTHPLAN": "health_plan",
            "ACCOUNT": "account",
            "LICENSE": "license",
            "VEHICLE": "vehicle",
            "DEVICE": "device",
            "BIOID": "bio_id",
            "IDNUM": "id_number",
            "OTHER": "other",
        },
    ),
    "CONTACT": (
        "contact",
        "contactType",
        {"PHONE": "phone", "FAX": "fax", "EMAIL": "email", "URL": "url", "IPADDR": "ip_address", "OTHER": "other"},
    ),
}
_BY_LABEL = {label: (category, attribute, types) for category, (label, attribute, types) in CATEGORIES.items()}


def read(path: Source) -> Iterator[Document]:
    """Read one XML file, or every ``*.xml`` file of a directory in name order."""
    path = files.source(path)
    if not files.is_folder(path):
        yield read_file(path)
        return
    names = files.listed(path, ".xml")
    if not names:
        raise InputError("no .xml file in this directory: not i2b2 XML", path)
    for name in names:
        yield read_file(name)


def _parse(path: Source) -> tuple[ET.Element, str]:
    """The root element of an i2b2 file and its note text (line breaks normalised to LF, as XML parsers do)."""
    try:
        with opened(path) as handle:
            root = ET.parse(handle).getroot()
    except ET.ParseError as error:
        line, column = error.position
        raise InputError(f"malformed XML at line {line}, column {column}", path) from None
    text_element = root.find("TEXT")
    if text_element is None:
        raise InputError("no <TEXT> element", path)
    return root, text_element.text or ""


def read_file(path: Source) -> Document:
    root, text = _parse(path)
    document = Document(path.stem, text)
    tags = root.find("TAGS")
    for index, tag in enumerate(tags if tags is not None else ()):
        document.annotations.append(_annotation(tag, document, path, f"tag {index} <{tag.tag}>"))
    problem = document.span_problem()
    if problem:
        raise InputError(problem, path)
    return document


@dataclass(frozen=True, slots=True)
class RawTag:
    """One element under ``<TAGS>`` as the file spells it: element name and attributes as written
    (None when absent), unchecked, for scorers that must see what the i2b2 scripts see."""

    name: str
    type: str | None
    start: str | None
    end: str | None
    id: str | None = None


def read_raw(path: Source) -> tuple[str, list[RawTag] | None]:
    """The note text of one i2b2 file and every element under its ``<TAGS>``, in file order (None: no ``<TAGS>``)."""
    root, text = _parse(path)
    tags = root.find("TAGS")
    if tags is None:
        return text, None
    return text, [
        RawTag(tag.tag, tag.get("TYPE"), tag.get("start"), tag.get("end"), tag.get("id"))
        for tag in tags
        if isinstance(tag.tag, str)
    ]


def _annotation(tag: ET.Element, document: Document, path: Source, where: str) -> Annotation:
    if tag.tag not in CATEGORIES:
        raise InputError(f"unknown category {excerpt(tag.tag)}", path, where)
    label, attribute, types = CATEGORIES[tag.tag]
    subtype = tag.get("TYPE")
    if subtype not in types:
        raise InputError(f"unknown TYPE {excerpt(subtype)} for {excerpt(tag.tag)}", path, where)
    try:
        span = Span(int(tag.get("start", "")), int(tag.get("end", "")))
    except ValueError as error:
        raise InputError(
            f"bad offsets start={excerpt(tag.get('start'))} end={excerpt(tag.get('end'))}: {error}", path, where
        ) from None
    attributes = {attribute: types[subtype]} if attribute else {}
    comment = tag.get("comment")
    if comment:
        attributes["comment"] = comment
    return Annotation(document.id, span, label, tag.get("text"), attributes, id=tag.get("id"))


#: The i2b2 TYPE written for an annotation whose subtype has no i2b2 equivalent.
_FALLBACK = {"location": "LOCATION-OTHER", "id": "OTHER", "contact": "OTHER", "person_name": "PATIENT"}


def to_xml(document: Document, changes: Counter[str] | None = None) -> str:
    """The i2b2 XML of a document. What cannot be written as it is gets counted in ``changes``:
    annotations without an i2b2 category (left out), subtypes without an i2b2 TYPE, discontinuous spans."""
    if document.text is None:
        raise InputError("i2b2 XML needs the note text", record=f"document {document.id}")
    # imported here: xml.sax.saxutils imports urllib.request (http.client, ssl, email), 0.03 s that reading skips
    from xml.sax.saxutils import quoteattr

    changes = Counter() if changes is None else changes
    tags = []
    for index, annotation in enumerate(document.annotations):
        if annotation.label not in _BY_LABEL:
            changes[f"annotations labelled {annotation.label!r} have no i2b2 category: left out"] += 1
            continue
        category, attribute, types = _BY_LABEL[annotation.label]
        subtype = category
        if attribute:
            subtypes: dict[Any, str] = {value: key for key, value in types.items()}
            found = subtypes.get(annotation.attributes.get(attribute))
            if found is None:
                found = _FALLBACK[annotation.label]
                changes[f"{annotation.label} annotations without an i2b2 {attribute}: written as TYPE={found}"] += 1
            subtype = found
        if annotation.span.discontinuous:
            changes["discontinuous annotations: written as one extent"] += 1
        text = document.text[annotation.start : annotation.end]
        tag_id = annotation.id or f"P{index}"
        comment = annotation.attributes.get("comment", "")
        tags.append(
            f'<{category} id={quoteattr(tag_id)} start="{annotation.start}" end="{annotation.end}" '
            f"text={quoteattr(text)} TYPE={quoteattr(subtype)} comment={quoteattr(comment)} />"
        )
    body = document.text.replace("]]>", "]]]]><![CDATA[>")
    return (
        '<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n'
        f"<TEXT><![CDATA[{body}]]></TEXT>\n<TAGS>\n" + "".join(t + "\n" for t in tags) + "</TAGS>\n</deIdi2b2>\n"
    )


def write(documents: Iterable[Document], path: Path) -> None:
    """Write one ``<id>.xml`` per document into the directory ``path``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    changes: Counter[str] = Counter()
    for document in documents:
        with written(in_folder(path, f"{document.id}.xml")) as handle:
            handle.write(to_xml(document, changes))
    for change, count in changes.items():
        warnings.warn(f"{path}: {count} {change}", InputWarning, stacklevel=2)


register("i2b2", "i2b2 2014 de-identification XML (a file or a directory of files)", read, write)
