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
from collections.abc import Iterable, Iterator
from pathlib import Path
from xml.sax.saxutils import quoteattr

from nlpbench.errors import InputError, InputWarning
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


def read(path: Path) -> Iterator[Document]:
    """Read one XML file, or every ``*.xml`` file of a directory in name order."""
    path = Path(path)
    files = sorted(path.glob("*.xml")) if path.is_dir() else [path]
    for file in files:
        yield read_file(file)


def read_file(path: Path) -> Document:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        line, column = error.position
        raise InputError(f"malformed XML at line {line}, column {column}", path) from None
    text_element = root.find("TEXT")
    if text_element is None:
        raise InputError("no <TEXT> element", path)
    document = Document(path.stem, text_element.text or "")
    tags = root.find("TAGS")
    for index, tag in enumerate(tags if tags is not None else ()):
        document.annotations.append(_annotation(tag, document, path, f"tag {index} <{tag.tag}>"))
    problem = document.span_problem()
    if problem:
        raise InputError(problem, path)
    return document


def _annotation(tag: ET.Element, document: Document, path: Path, where: str) -> Annotation:
    if tag.tag not in CATEGORIES:
        raise InputError(f"unknown category {tag.tag!r}", path, where)
    label, attribute, types = CATEGORIES[tag.tag]
    subtype = tag.get("TYPE")
    if subtype not in types:
        raise InputError(f"unknown TYPE {subtype!r} for {tag.tag}", path, where)
    try:
        span = Span(int(tag.get("start", "")), int(tag.get("end", "")))
    except ValueError as error:
        raise InputError(
            f"bad offsets start={tag.get('start')!r} end={tag.get('end')!r}: {error}", path, where
        ) from None
    attributes = {attribute: types[subtype]} if attribute else {}
    if tag.get("comment"):
        attributes["comment"] = tag.get("comment")
    return Annotation(document.id, span, label, tag.get("text"), attributes, id=tag.get("id"))


def to_xml(document: Document) -> str:
    """The i2b2 XML of a document; annotations without an i2b2 category are left out, with a warning."""
    if document.text is None:
        raise InputError("i2b2 XML needs the note text", record=f"document {document.id}")
    tags, skipped = [], 0
    for index, annotation in enumerate(document.annotations):
        if annotation.label not in _BY_LABEL:
            skipped += 1
            continue
        category, attribute, types = _BY_LABEL[annotation.label]
        reverse = {value: key for key, value in types.items()}
        subtype = reverse.get(annotation.attributes.get(attribute, "")) if attribute else category
        if subtype is None:
            subtype = {"location": "LOCATION-OTHER", "id": "OTHER", "contact": "OTHER", "person_name": "PATIENT"}[
                annotation.label
            ]
            skipped_type = annotation.attributes.get(attribute)
            warnings.warn(
                f"document {document.id}: {annotation.label} subtype {skipped_type!r} written as {subtype}",
                InputWarning,
                stacklevel=2,
            )
        if annotation.span.discontinuous:
            warnings.warn(
                f"document {document.id}: discontinuous span at {annotation.start} written as one extent",
                InputWarning,
                stacklevel=2,
            )
        text = document.text[annotation.start : annotation.end]
        tag_id = annotation.id or f"P{index}"
        comment = annotation.attributes.get("comment", "")
        tags.append(
            f'<{category} id={quoteattr(tag_id)} start="{annotation.start}" end="{annotation.end}" '
            f"text={quoteattr(text)} TYPE={quoteattr(subtype)} comment={quoteattr(comment)} />"
        )
    if skipped:
        warnings.warn(
            f"document {document.id}: {skipped} annotations have no i2b2 category; not written",
            InputWarning,
            stacklevel=2,
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
    for document in documents:
        (path / f"{document.id}.xml").write_text(to_xml(document), encoding="utf-8")


register("i2b2", "i2b2 2014 de-identification XML (a file or a directory of files)", read, write)
