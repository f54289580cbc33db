"""Pydantic models of the NLP Sandbox 1.2.0 schemas that tools exchange.

Field names, constraints and enums are those of ``nlpsandbox-schemas`` 1.2.0
(``commons/components/schemas`` and each tool's ``components/schemas``). The
models validate strictly — a string is not a number, ``true`` is not an
integer — so that what a tool accepts is exactly what the schema allows. A
``Note`` keeps properties it does not know, as the schema does not forbid them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from nlpbench.model import phi_type

API_VERSION = "1.2.0"

#: NoteId, PatientId and Tool.name: lower-case letters and digits joined by single hyphens.
RESOURCE_ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
SEMVER_PATTERN = (
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)

#: Tool.authorEmail: something, an @, something, no space.
EMAIL_PATTERN = r"^[^@\s]+@[^@\s]+$"
#: Tool.url: an http(s) URL.
HTTP_URL_PATTERN = r"^https?://\S+$"
#: What each pattern of the schemas asks, in words a tool's author reads: messages name the rule, not the regex.
PATTERN_WORDS = {
    SEMVER_PATTERN: "a SemVer version (MAJOR.MINOR.PATCH, as 1.2.0, with an optional -PRERELEASE and +BUILD)",
    RESOURCE_ID_PATTERN: "lower-case letters and digits joined by single hyphens (as awesome-tool)",
    EMAIL_PATTERN: "an e-mail address (NAME@DOMAIN, no spaces)",
    HTTP_URL_PATTERN: "an http:// or https:// URL (no spaces)",
}
#: The longest pattern not in PATTERN_WORDS a message shows as it is; a longer one is named as a form.
LONGEST_PATTERN_SHOWN = 40


def rule_broken(where: str, error: Mapping[str, Any]) -> str:
    """One of pydantic's ``error`` at ``where`` (a field path) in a tool author's words, never the value refused.

    A pattern of :data:`PATTERN_WORDS` is named in words ("`version` is not a SemVer version (…)");
    another pattern is shown when it has at most :data:`LONGEST_PATTERN_SHOWN` characters, else named as
    "the form the schema gives"; any other error is ``where: pydantic's message`` (which quotes no input).
    """
    message = str(error.get("msg", "invalid"))
    if error.get("type") == "string_pattern_mismatch":
        pattern = str((error.get("ctx") or {}).get("pattern", ""))
        if pattern in PATTERN_WORDS:
            return f"`{where}` is not {PATTERN_WORDS[pattern]}" if where else f"not {PATTERN_WORDS[pattern]}"
        if len(pattern) > LONGEST_PATTERN_SHOWN:
            message = "does not have the form the schema gives"
    return f"{where}: {message}" if where else message


ResourceId = Annotated[str, StringConstraints(min_length=3, max_length=60, pattern=RESOURCE_ID_PATTERN)]
SemVer = Annotated[str, StringConstraints(min_length=1, pattern=SEMVER_PATTERN)]
Confidence = Annotated[float, Field(ge=0, le=100)]
T = TypeVar("T")
if TYPE_CHECKING:
    #: The type checker sees an absent property as ``None``; pydantic validates ``T`` alone, so refuses ``null``.
    Absent = Annotated[T | None, ...]
else:
    #: An optional property: ``None`` when absent, but ``null`` is not a value it takes.
    Absent = Annotated[T, Field(json_schema_extra=lambda schema: schema.pop("default", None))]


class _Model(BaseModel):
    model_config = ConfigDict(strict=True)


LICENSES = (
    "afl-3.0", "apache-2.0", "artistic-2.0", "bsl-1.0", "bsd-2-clause", "bsd-3-clause", "bsd-3-clause-clear",
    "cc", "cc0-1.0", "cc-by-4.0", "cc-by-sa-4.0", "wtfpl", "ecl-2.0", "epl-1.0", "epl-2.0", "eupl-1.1",
    "agpl-3.0", "gpl", "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "isc", "lppl-1.3c", "ms-pl",
    "mit", "mpl-2.0", "osl-3.0", "postgresql", "ofl-1.1", "ncsa", "unlicense", "zlib", "none",
)  # fmt: skip
TOOL_TYPES = (
    "nlpsandbox:contact-annotator", "nlpsandbox:covid-symptom-annotator", "nlpsandbox:data-node",
    "nlpsandbox:date-annotator", "nlpsandbox:id-annotator", "nlpsandbox:location-annotator",
    "nlpsandbox:person-name-annotator", "nlpsandbox:phi-annotator", "nlpsandbox:phi-deidentifier",
)  # fmt: skip
#: The annotation types a de-identification step names: ``text_`` and an nlpbench label.
ANNOTATION_TYPES = ("text_date", "text_person_name", "text_location", "text_id", "text_contact")

if TYPE_CHECKING:
    # The enums are built from their tuples when the module runs: the type checker sees their strings.
    License: TypeAlias = str
    ToolType: TypeAlias = str
    AnnotationType: TypeAlias = str
    LocationType: TypeAlias = str
    IdType: TypeAlias = str
    ContactType: TypeAlias = str
else:
    # Enums are Literals: strict validation of parsed JSON takes their strings as they are.
    License = Literal[LICENSES]
    ToolType = Literal[TOOL_TYPES]
    AnnotationType = Literal[ANNOTATION_TYPES]
    LocationType = Literal[phi_type("location").subtypes]
    IdType = Literal[phi_type("id").subtypes]
    ContactType = Literal[phi_type("contact").subtypes]


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _printable(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError("control characters (line breaks, NUL, …) are not allowed here")
    return value


#: What a string a tool says of itself is checked for last: no control character.
PRINTABLE = AfterValidator(_printable)


class Tool(_Model):
    """What a tool says about itself: ``GET /tool``.

    Pages and reasons show these fields, and a tool sets them: each is bounded and holds no control
    character. The 1.2.0 schema bounds ``name`` (60) and ``description`` (280); nlpbench bounds the
    others too (100 for a version, 200 for the author, 254 for an e-mail address, 1,000 for a URL), and
    its ``url`` (a URI in the schema, shown as a link) is an http(s) one.
    """

    name: Annotated[str, StringConstraints(min_length=3, max_length=60, pattern=RESOURCE_ID_PATTERN)]
    version: Annotated[str, StringConstraints(max_length=100, pattern=SEMVER_PATTERN), PRINTABLE]
    license: License
    repository: Annotated[str, StringConstraints(max_length=1000), PRINTABLE]
    description: Annotated[str, StringConstraints(max_length=280), PRINTABLE]
    author: Annotated[str, StringConstraints(max_length=200), PRINTABLE]
    authorEmail: Annotated[str, StringConstraints(max_length=254, pattern=EMAIL_PATTERN), PRINTABLE]
    url: Annotated[str, StringConstraints(max_length=1000, pattern=HTTP_URL_PATTERN), PRINTABLE]
    type: ToolType
    apiVersion: Annotated[str, StringConstraints(max_length=100, pattern=SEMVER_PATTERN), PRINTABLE]


class ToolDependencies(_Model):
    tools: list[Tool]


class HealthCheck(_Model):
    status: Literal["pass", "fail", "warn"]


class Problem(_Model):
    """An RFC 7807 problem object: the schemas' ``Error``."""

    title: str
    status: int
    detail: Absent[str] = None
    type: Absent[str] = None


class Note(_Model):
    """A clinical note; properties the schema does not name are kept."""

    model_config = ConfigDict(strict=True, extra="allow")

    identifier: ResourceId
    text: str
    type: str
    patientId: ResourceId


class NoteRequest(_Model):
    """``{note}``: the body of every annotation request."""

    note: Note


class TextAnnotation(_Model):
    start: int
    length: int
    text: str
    confidence: Confidence


class TextDateAnnotation(TextAnnotation):
    dateFormat: Absent[str] = Field(default=None, description="Date format (ISO 8601 tokens), e.g. MM/DD/YYYY")


class TextPersonNameAnnotation(TextAnnotation):
    pass


class TextLocationAnnotation(TextAnnotation):
    locationType: LocationType


class TextIdAnnotation(TextAnnotation):
    idType: IdType


class TextContactAnnotation(TextAnnotation):
    contactType: ContactType


class TextDateAnnotationResponse(_Model):
    textDateAnnotations: list[TextDateAnnotation]


class TextPersonNameAnnotationResponse(_Model):
    textPersonNameAnnotations: list[TextPersonNameAnnotation]


class TextLocationAnnotationResponse(_Model):
    textLocationAnnotations: list[TextLocationAnnotation]


class TextIdAnnotationResponse(_Model):
    textIdAnnotations: list[TextIdAnnotation]


class TextContactAnnotationResponse(_Model):
    textContactAnnotations: list[TextContactAnnotation]


class AnnotationSet(_Model):
    """All five PHI arrays of one note."""

    textDateAnnotations: list[TextDateAnnotation]
    textPersonNameAnnotations: list[TextPersonNameAnnotation]
    textLocationAnnotations: list[TextLocationAnnotation]
    textIdAnnotations: list[TextIdAnnotation]
    textContactAnnotations: list[TextContactAnnotation]


class MaskingCharConfig(_Model):
    maskingChar: Annotated[str, StringConstraints(min_length=1, max_length=1)] = "*"


class RedactConfig(_Model):
    pass


class AnnotationTypeMaskConfig(_Model):
    pass


class DateOffsetConfig(_Model):
    offsetDays: int


STRATEGIES = ("maskingCharConfig", "redactConfig", "annotationTypeMaskConfig", "dateOffsetConfig")


def _one_strategy() -> list[dict[str, Any]]:
    """JSON Schema for "exactly one strategy, and a date offset only for dates"."""
    branches = []
    for name in STRATEGIES:
        # an absent property is one whose schema is false: unlike "not": {"anyOf": [{"required": …}]},
        # generators (schemathesis, Hypothesis) read it directly instead of searching for values
        properties: dict[str, Any] = {other: False for other in STRATEGIES if other != name}
        if name == "dateOffsetConfig":
            properties["annotationTypes"] = {"items": {"enum": ["text_date"]}}
        branches.append({"required": [name], "properties": properties})
    return branches


class DeidentificationStep(_Model):
    """One step: which annotations (types, confidence threshold) and one strategy.

    The 1.2.0 schema lets a step name any number of strategies; this API takes
    exactly one, and a date offset for ``text_date`` only, and says so in its
    OpenAPI document (``oneOf``). Absent strategies are ``None``; ``null`` is
    refused, as the schema does not allow it.
    """

    model_config = ConfigDict(strict=True, json_schema_extra=lambda schema: schema.update(oneOf=_one_strategy()))

    confidenceThreshold: Confidence = 0
    maskingCharConfig: Absent[MaskingCharConfig] = None
    annotationTypeMaskConfig: Absent[AnnotationTypeMaskConfig] = None
    redactConfig: Absent[RedactConfig] = None
    dateOffsetConfig: Absent[DateOffsetConfig] = None
    annotationTypes: list[AnnotationType]


class DeidentifyRequest(_Model):
    note: Note
    deidentificationSteps: list[DeidentificationStep]


class DeidentifyResponse(_Model):
    originalAnnotations: AnnotationSet
    deidentifiedAnnotations: AnnotationSet
    deidentifiedNote: Note


#: Each PHI label's annotation model and response model, keyed by the nlpbench label.
ANNOTATION_MODELS: dict[str, type[TextAnnotation]] = {
    "date": TextDateAnnotation,
    "person_name": TextPersonNameAnnotation,
    "location": TextLocationAnnotation,
    "id": TextIdAnnotation,
    "contact": TextContactAnnotation,
}
RESPONSE_MODELS: dict[str, type[_Model]] = {
    "date": TextDateAnnotationResponse,
    "person_name": TextPersonNameAnnotationResponse,
    "location": TextLocationAnnotationResponse,
    "id": TextIdAnnotationResponse,
    "contact": TextContactAnnotationResponse,
}


def dump(model: BaseModel) -> dict[str, Any]:
    """A model as JSON-ready data, leaving out optional fields that were not set."""
    return model.model_dump(mode="json", exclude_none=True)
