"""What a tool answers: its 1.2.0 tool object and type, and annotations as 1.2.0 objects checked against the schema."""

from __future__ import annotations

from typing import Any

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.api.problems import Responses, problem_doc
from nlpbench.model import PHI_TYPES, Annotation, Document
from nlpbench.toolapi import schemas

PHI_LABELS = tuple(schemas.ANNOTATION_MODELS)
#: The errors every tool operation documents.
ERRORS: Responses = {
    400: problem_doc("Invalid request"),
    413: problem_doc("Request body too large"),
    500: problem_doc("The tool failed"),
}


def tool_type(annotator: Annotator) -> str:
    """``nlpsandbox:date-annotator`` for one type, ``nlpsandbox:phi-annotator`` for several."""
    types = tuple(annotator.types)
    unknown = [t for t in types if t not in PHI_LABELS]
    if unknown or not types:
        raise ValueError(f"annotator {annotator.info.name!r} produces {types}: not NLP Sandbox PHI types")
    if len(types) == 1:
        return f"nlpsandbox:{types[0].replace('_', '-')}-annotator"
    return "nlpsandbox:phi-annotator"


def tool_model(info: ToolInfo, type_: str) -> schemas.Tool:
    return schemas.Tool(
        name=info.name,
        version=info.version,
        license=info.license,
        repository=info.repository,
        description=info.description,
        author=info.author,
        authorEmail=info.author_email,
        url=info.url,
        type=type_,
        apiVersion=schemas.API_VERSION,
    )


def note_document(note: schemas.Note) -> Document:
    return Document(note.identifier, note.text, metadata={"patientId": note.patientId, "noteType": note.type})


def annotation_json(annotation: Annotation) -> dict[str, Any]:
    """One annotation as its 1.2.0 object, checked against the schema."""
    if annotation.confidence is None:
        raise ValueError(f"the annotator gave no confidence for {annotation.label} at {annotation.start}")
    phi = PHI_TYPES[annotation.label]
    body: dict[str, Any] = {
        "start": annotation.start,
        "length": annotation.span.length,
        "text": annotation.text,
        "confidence": annotation.confidence,
    }
    if phi.type_attribute in annotation.attributes:
        body[phi.type_attribute] = annotation.attributes[phi.type_attribute]
    return schemas.dump(schemas.ANNOTATION_MODELS[annotation.label].model_validate(body))


def annotation_set(annotations: list[Annotation], labels: tuple[str, ...] = PHI_LABELS) -> dict[str, list]:
    """The five arrays of an ``AnnotationSet``; labels not asked for stay empty."""
    ordered = sorted(annotations, key=lambda a: (a.start, a.end, a.label))
    return {
        PHI_TYPES[label].array: [annotation_json(a) for a in ordered if a.label == label and label in labels]
        for label in PHI_LABELS
    }
