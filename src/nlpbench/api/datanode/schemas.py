"""Pydantic models of the NLP Sandbox 1.2.0 data-node schemas (``openapi/data-node/components``).

The text annotations, the note and the problem object are those the tools
share (:mod:`nlpbench.toolapi.schemas`). Create requests that the schema leaves as
"an empty object" accept any object; a dataset's may also carry the metadata
the original lacked (version, description, licence, visibility), which
``GET /datasets/{datasetId}`` returns beside its name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints

from nlpbench.toolapi.schemas import (
    RESOURCE_ID_PATTERN,
    Absent,
    HealthCheck,
    License,
    Note,
    Problem,
    TextAnnotation,
    TextContactAnnotation,
    TextDateAnnotation,
    TextIdAnnotation,
    TextLocationAnnotation,
    TextPersonNameAnnotation,
    _Model,
)

__all__ = ["HealthCheck", "Note", "Problem"]

#: A resource id without its anchors, to build the resource-name patterns from.
ID = RESOURCE_ID_PATTERN.removeprefix("^").removesuffix("$")
Gender = Literal["male", "female", "other", "unknown"]
Visibility = Literal["public", "private"]
COVID_CONDITIONS = (
    "fever", "chill", "cough", "fatigue", "nasal_obstruction", "loss_of_appetite", "diarrhea", "abdominal_pain",
    "nausea", "vomiting", "sore_throat", "headache", "myalgia", "loss_of_taste", "loss_of_smell", "dyspnea",
    "chest_pain", "delirium", "hypersomnia", "cyanosis",
)  # fmt: skip


DatasetName = Annotated[str, StringConstraints(pattern=f"^datasets/{ID}$")]
FhirStoreName = Annotated[str, StringConstraints(pattern=f"^datasets/{ID}/fhirStores/{ID}$")]
AnnotationStoreName = Annotated[str, StringConstraints(pattern=f"^datasets/{ID}/annotationStores/{ID}$")]
PatientName = Annotated[str, StringConstraints(pattern=f"^datasets/{ID}/fhirStores/{ID}/Patient/{ID}$")]
NoteName = Annotated[str, StringConstraints(pattern=f"^datasets/{ID}/fhirStores/{ID}/Note/{ID}$")]
AnnotationName = Annotated[str, StringConstraints(pattern=f"^datasets/{ID}/annotationStores/{ID}/annotations/{ID}$")]


if TYPE_CHECKING:
    # The enum is built from its tuple when the module runs: the type checker sees its strings.
    CovidCondition = str
else:
    CovidCondition = Literal[COVID_CONDITIONS]


class TextCovidSymptomAnnotation(TextAnnotation):
    condition: CovidCondition
    certainty: Literal["positive", "negated", "possible"]


class AnyObject(_Model):
    """The schemas' "empty object": any object, its properties ignored."""

    model_config = ConfigDict(strict=True, extra="allow")


class DatasetCreateRequest(AnyObject):
    """Any object; nlpbench reads the dataset's metadata from it when present."""

    version: Absent[Annotated[str, StringConstraints(min_length=1, max_length=40)]] = None
    description: Absent[Annotated[str, StringConstraints(max_length=2000)]] = None
    license: Absent[License] = None
    visibility: Absent[Visibility] = None


class Dataset(_Model):
    name: DatasetName
    version: Absent[str] = None
    description: Absent[str] = None
    license: Absent[str] = None
    visibility: Absent[Visibility] = None
    createdAt: Absent[str] = Field(default=None, description="When the dataset was created (ISO 8601, UTC)")


class FhirStore(_Model):
    name: FhirStoreName


class AnnotationStore(_Model):
    name: AnnotationStoreName


class PatientCreateRequest(AnyObject):
    gender: Absent[Gender] = None


class Patient(_Model):
    identifier: Annotated[str, StringConstraints(min_length=3, max_length=60, pattern=RESOURCE_ID_PATTERN)]
    gender: Absent[Gender] = None


class NoteCreateRequest(_Model):
    model_config = ConfigDict(strict=True, extra="allow")

    text: str
    type: str
    patientId: Annotated[str, StringConstraints(min_length=3, max_length=60, pattern=RESOURCE_ID_PATTERN)]


class ResourceSource(_Model):
    name: str


class AnnotationSource(_Model):
    model_config = ConfigDict(strict=True, extra="forbid")  # maxProperties: 1

    resourceSource: ResourceSource


class _Arrays(_Model):
    textDateAnnotations: Absent[list[TextDateAnnotation]] = None
    textPersonNameAnnotations: Absent[list[TextPersonNameAnnotation]] = None
    textLocationAnnotations: Absent[list[TextLocationAnnotation]] = None
    textIdAnnotations: Absent[list[TextIdAnnotation]] = None
    textContactAnnotations: Absent[list[TextContactAnnotation]] = None
    textCovidSymptomAnnotations: Absent[list[TextCovidSymptomAnnotation]] = None


#: The annotation arrays of a record, in the schema's order.
ARRAYS = tuple(_Arrays.model_fields)


class AnnotationCreateRequest(_Arrays):
    annotationSource: AnnotationSource


class Annotation(_Arrays):
    name: AnnotationName
    annotationSource: AnnotationSource


class Created(_Model):
    """``{name}``: what every create operation answers with 201."""

    name: str


class Links(_Model):
    next: str = Field(description="The next page; empty when this page is the last")


class _Page(_Model):
    offset: int
    limit: int
    links: Links
    totalResults: int


class PageOfDatasets(_Page):
    datasets: list[Dataset]


class PageOfFhirStores(_Page):
    fhirStores: list[FhirStore]


class PageOfPatients(_Page):
    patients: list[Patient]


class PageOfNotes(_Page):
    notes: list[Note]


class PageOfAnnotationStores(_Page):
    annotationStores: list[AnnotationStore]


class PageOfAnnotations(_Page):
    annotations: list[Annotation]


class EmptyObject(_Model):
    pass
