"""The PHI annotation types of the NLP Sandbox and their typed attributes.

Each type has the array that holds it in NLP Sandbox JSON, the attribute that
carries its subtype and the subtypes the 1.2.0 schemas allow (empty: any
string). ``physical_address`` is the pre-1.2.0 name of ``location``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PhiType:
    name: str
    array: str
    type_attribute: str
    subtypes: tuple[str, ...] = ()


LOCATION_TYPES = (
    "city", "country", "department", "hospital", "organization",
    "other", "room", "state", "street", "zip",
)  # fmt: skip

PHI_TYPES: dict[str, PhiType] = {
    t.name: t
    for t in (
        PhiType("date", "textDateAnnotations", "dateFormat"),
        PhiType("person_name", "textPersonNameAnnotations", "personType"),
        PhiType("location", "textLocationAnnotations", "locationType", LOCATION_TYPES),
        PhiType("physical_address", "textPhysicalAddressAnnotations", "addressType", LOCATION_TYPES),
        PhiType(
            "id",
            "textIdAnnotations",
            "idType",
            (
                "account",
                "bio_id",
                "device",
                "health_plan",
                "id_number",
                "license",
                "medical_record",
                "ssn",
                "vehicle",
                "other",
            ),
        ),
        PhiType(
            "contact",
            "textContactAnnotations",
            "contactType",
            ("email", "fax", "ip_address", "phone", "url", "other"),
        ),
        PhiType("covid_symptom", "textCovidSymptomAnnotations", "condition"),
    )
}

#: The five PHI types an NLP Sandbox 1.2.0 tool annotates, in the tool API's order (an ``nlpsandbox:phi-annotator``
#: answers all five; ``physical_address`` and ``covid_symptom`` are read from files, never asked of a tool).
PHI_LABELS = ("date", "person_name", "location", "id", "contact")

#: Whether a location subtype is one of HIPAA's eighteen identifiers (geographic
#: subdivisions smaller than a state, and organisations), per the NLP Sandbox.
HIPAA_LOCATION: dict[str, bool] = {
    "city": True,
    "country": False,
    "department": False,
    "hospital": False,
    "organization": True,
    "other": False,
    "room": False,
    "state": False,
    "street": True,
    "zip": True,
}


def phi_type(name: str) -> PhiType:
    """The PHI type called ``name``; ``KeyError`` names the known ones."""
    try:
        return PHI_TYPES[name]
    except KeyError:
        raise KeyError(f"unknown annotation type {name!r}; known: {', '.join(PHI_TYPES)}") from None
