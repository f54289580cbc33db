"""brat standoff: ``<id>.txt`` holds the text, ``<id>.ann`` what is annotated in it.

Lines of ``.ann`` kept: ``T`` text-bound annotations (``T1<TAB>Label 0 5;9
14<TAB>text``, fragments separated by ``;``), ``A``/``M`` attributes (a value,
or none for a binary flag), ``N`` normalisations (``N1<TAB>Reference T1
Wikidata:Q42<TAB>text``) and ``R`` relations (``R1<TAB>Label Arg1:T1
Arg2:T2``). Other lines (events, equivalences, notes) are counted and
reported, not kept.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, excerpt, shorten
from nlpbench.files import Source, in_folder, text_lines, written
from nlpbench.formats import read_text, register
from nlpbench.model import Annotation, Document, Link, Relation, Span

_FRAGMENT = re.compile(r"^(\d+) (\d+)$")


def read(path: Source) -> Iterator[Document]:
    """Read one ``.ann`` file (with its ``.txt``), or every ``.ann`` of a directory in name order."""
    path = files.source(path)
    if not files.is_folder(path):
        yield read_file(path.with_suffix(".ann"))
        return
    names = files.listed(path, ".ann")
    if not names:
        raise InputError("no .ann file in this directory: not brat standoff", path)
    for name in names:
        yield read_file(name)


def read_file(ann_path: Source) -> Document:
    txt_path = ann_path.with_suffix(".txt")
    if not files.exists(txt_path):
        raise InputError("no .txt file beside the .ann file", txt_path)
    if not files.exists(ann_path):
        raise InputError("no such .ann file", ann_path)
    document = Document(ann_path.stem, read_text(txt_path))
    attributes: list[tuple[str, str, str | bool, str]] = []
    skipped: dict[str, int] = {}
    ids: dict[str, str] = {}  # id -> where it was given
    references: list[tuple[str, str, str]] = []  # (what, id it names, where)
    for number, line in enumerate(text_lines(ann_path, newline="\n"), start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        where = f"line {number}"
        kind = line[0]
        fields = line.split("\t")
        if kind in "TAMNR":
            if fields[0] in ids:
                raise InputError(f"id {shorten(fields[0])} was already given at {ids[fields[0]]}", ann_path, where)
            ids[fields[0]] = where
        if kind == "T":
            document.annotations.append(_text_bound(fields, document, ann_path, where))
        elif kind in "AM":
            attributes.append((*_attribute(fields, ann_path, where), where))
        elif kind == "N":
            document.links.append(_normalization(fields, ann_path, where))
            references.append(("the normalisation's target", document.links[-1].target, where))
        elif kind == "R":
            document.relations.append(_relation(fields, ann_path, where))
            references += [(f"the relation's {role}", arg, where) for role, arg in _arguments(document.relations[-1])]
        else:
            skipped[kind] = skipped.get(kind, 0) + 1
    _attach(document, attributes, ann_path)
    known = {a.id for a in document.annotations}
    for what, target, where in references:
        if target not in known:
            raise InputError(f"{what} {shorten(target)} is no T annotation of the file", ann_path, where)
    if skipped:
        listed = ", ".join(f"{n} {excerpt(kind)} lines" for kind, n in sorted(skipped.items()))
        warnings.warn(f"{ann_path}: skipped {listed} (not part of the model)", InputWarning, stacklevel=2)
    problem = document.span_problem()
    if problem:
        raise InputError(problem, ann_path)
    return document


def _text_bound(fields: list[str], document: Document, path: Source, where: str) -> Annotation:
    if len(fields) != 3 or " " not in fields[1]:
        raise InputError("a T line needs ID<TAB>Label offsets<TAB>text", path, where)
    label, offsets = fields[1].split(" ", 1)
    fragments = []
    for piece in offsets.split(";"):
        match = _FRAGMENT.match(piece.strip())
        if not match:
            raise InputError(f"bad offsets {excerpt(offsets)}", path, where)
        fragments.append((int(match[1]), int(match[2])))
    try:
        span = Span.from_fragments(fragments)
    except ValueError as error:
        raise InputError(f"bad offsets {excerpt(offsets)}: {error}", path, where) from None
    text = fields[2]
    if document.text is not None and span.end <= len(document.text):
        covered = span.covered_text(document.text)
        if text == covered.replace("\n", " "):
            text = covered  # brat writes line breaks inside an annotation as spaces
    return Annotation(document.id, span, label, text, id=fields[0])


def _arguments(relation: Relation) -> list[tuple[str, str]]:
    return [("Arg1", relation.head), ("Arg2", relation.tail)]


def _attribute(fields: list[str], path: Source, where: str) -> tuple[str, str, str | bool]:
    parts = fields[1].split() if len(fields) >= 2 else []
    if len(parts) not in (2, 3):
        raise InputError("an attribute line needs ID<TAB>Name Target [Value]", path, where)
    return parts[1], parts[0], parts[2] if len(parts) == 3 else True


def _attach(document: Document, attributes: list, path: Source) -> None:
    by_id = {a.id: i for i, a in enumerate(document.annotations)}
    for target, name, value, where in attributes:
        if target not in by_id:
            raise InputError(f"attribute of unknown annotation {excerpt(target)}", path, where)
        index = by_id[target]
        annotation = document.annotations[index]
        document.annotations[index] = dataclasses.replace(annotation, attributes={**annotation.attributes, name: value})


def _normalization(fields: list[str], path: Source, where: str) -> Link:
    parts = fields[1].split() if len(fields) >= 2 else []
    if len(parts) != 3 or ":" not in parts[2]:
        raise InputError("an N line needs ID<TAB>Reference Target Resource:Id[<TAB>text]", path, where)
    resource, identifier = parts[2].split(":", 1)
    text = fields[2] if len(fields) > 2 else None
    return Link(parts[1], resource, identifier, text, id=fields[0])


def _relation(fields: list[str], path: Source, where: str) -> Relation:
    parts = fields[1].split() if len(fields) >= 2 else []
    if len(parts) != 3 or not all(":" in p for p in parts[1:]):
        raise InputError("an R line needs ID<TAB>Label Arg1:T1 Arg2:T2", path, where)
    head, tail = (p.split(":", 1)[1] for p in parts[1:])
    return Relation(parts[0], head, tail, id=fields[0])


def to_ann(document: Document) -> str:
    """The ``.ann`` text of a document; annotation ids become T1, T2, … where they are not T ids."""
    if document.text is None:
        raise InputError("brat needs the note text", record=f"document {document.id}")
    lines: list[str] = []
    ids: dict[str | None, str] = {}
    attribute_number = 0
    for number, annotation in enumerate(document.annotations, start=1):
        t_id = annotation.id if annotation.id and re.fullmatch(r"T\d+", annotation.id) else f"T{number}"
        ids[annotation.id] = t_id
        offsets = ";".join(f"{s} {e}" for s, e in annotation.span.parts)
        covered = annotation.span.covered_text(document.text).replace("\n", " ")
        lines.append(f"{t_id}\t{annotation.label} {offsets}\t{covered}")
        for name, value in annotation.attributes.items():
            if value is True:
                attribute_number += 1
                lines.append(f"A{attribute_number}\t{name} {t_id}")
            elif isinstance(value, str) and value and not re.search(r"\s", value):
                attribute_number += 1
                lines.append(f"A{attribute_number}\t{name} {t_id} {value}")
            else:
                warnings.warn(
                    f"document {document.id}: attribute {name}={value!r} of {t_id} cannot be written in brat",
                    InputWarning,
                    stacklevel=2,
                )
    for number, relation in enumerate(document.relations, start=1):
        head, tail = ids.get(relation.head, relation.head), ids.get(relation.tail, relation.tail)
        lines.append(f"R{number}\t{relation.label} Arg1:{head} Arg2:{tail}")
    for number, link in enumerate(document.links, start=1):
        suffix = f"\t{link.text}" if link.text is not None else ""
        lines.append(
            f"N{number}\tReference {ids.get(link.target, link.target)} {link.resource}:{link.identifier}{suffix}"
        )
    return "".join(line + "\n" for line in lines)


def write(documents: Iterable[Document], path: Path) -> None:
    """Write ``<id>.txt`` and ``<id>.ann`` for each document into the directory ``path``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for document in documents:
        ann = to_ann(document)
        with written(in_folder(path, f"{document.id}.txt"), newline="") as handle:
            handle.write(document.text or "")
        with written(in_folder(path, f"{document.id}.ann")) as handle:
            handle.write(ann)


register("brat", "brat standoff (.txt + .ann: T, A/M, N and R lines)", read, write, keeps=("relations", "links"))
