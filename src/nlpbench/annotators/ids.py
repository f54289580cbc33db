"""Identifiers, typed by the cue before them: ``MRN``, ``Acct``, ``Member ID``, ``DEA``, ``VIN``….

A cue (longest first) followed by a token with at least one digit gives that
cue's ``idType``. Without a cue, only shapes that are hardly ever anything
else count: a social security number ``123-45-6789``, a vehicle
identification number (17 characters, no I, O or Q), an accession number
``S69-12345``, and — with low confidence — a long number or a long code of
letters and digits that is not a phone number, a date or a ZIP code (those
finders win where they overlap).
"""

from __future__ import annotations

import re

from nlpbench.annotators.rules import Candidate, alternation, first_words, matches_at_words

_NUMBER_WORDS = r"(?P<numword>\s*(?:(?:number|num|no|nbr|id)\b\.?|#))?"
#: Cues that name an identifier on their own; other cue words need "number", "#" or ":" after them.
_STRONG = {
    "mrn", "mr#", "mr #", "ssn", "ss#", "acct", "acc't", "acc #", "fin", "csn", "mbi", "hicn", "dea", "npi", "vin",
    "s/n", "udi", "unit #", "chart #", "record #", "patient id", "pt id", "member id", "subscriber id", "plan id",
    "insurance id", "device id", "implant id", "vehicle id", "biometric id", "fingerprint id", "dna id", "study id",
    "employee id", "medical record", "med rec", "social security", "serial", "accession", "license plate",
}  # fmt: skip
CUES: dict[str, tuple[str, ...]] = {
    "medical_record": (
        "mrn", "mr#", "mr #", "mr no", "medical record", "med rec", "med. rec.", "unit no", "unit number",
        "unit #", "hospital number", "hospital no", "chart", "chart #", "record #", "record number", "record no",
        "patient number", "patient id", "pt id",
        "emr", "history number",
    ),
    "ssn": ("ssn", "ss#", "social security", "soc sec"),
    "account": (
        "account", "acct", "acc't", "acc #", "billing", "billing account", "encounter", "visit", "fin", "csn",
        "financial",
    ),
    "health_plan": (
        "member id", "member", "policy", "insurance id", "insurance", "subscriber id", "subscriber", "group",
        "medicaid", "medicare", "mbi", "health plan", "plan id", "beneficiary", "hicn",
    ),
    "license": (
        "license", "licence", "lic", "lic.", "dea", "npi", "driver's license", "drivers license", "dl",
        "medical license", "state license", "certification",
    ),
    "device": (
        "serial", "s/n", "sn", "model", "device id", "device", "udi", "lot", "implant id", "pacemaker",
        "device serial",
    ),
    "vehicle": ("vin", "vehicle id", "vehicle", "license plate", "plate", "tag"),
    "bio_id": ("biometric id", "biometric", "fingerprint id", "fingerprint", "retinal scan", "voiceprint", "dna id"),
    "id_number": (
        "accession", "specimen", "order", "requisition", "case", "report", "study id", "study", "lab", "pathology",
        "job", "document", "doc", "claim", "id", "reference", "ref", "confirmation", "passport", "employee id",
        "badge", "tracking",
    ),
}  # fmt: skip
_CUE_TYPE = {cue: id_type for id_type, cues in CUES.items() for cue in cues}
_CUED = re.compile(
    rf"(?<![\w/-])(?P<cue>{alternation(_CUE_TYPE)}){_NUMBER_WORDS}\s*(?P<sep>is|of|on file is|[:#=(])?\s*(?:#\s*)?"
    r"(?P<value>(?=[A-Z0-9-]*\d)[A-Z0-9](?:[A-Z0-9-]*[A-Z0-9])?)(?![\w-])",
    re.IGNORECASE,
)
_CUE_STARTS = first_words(_CUE_TYPE)
_SSN = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])")
#: A spaced SSN: "123 45 6789" with "SSN" or "social security" earlier on its line.
_SSN_SPACED = re.compile(
    r"\b(?:ssn|social security)\b[^\n\d]{0,40}?(?P<value>(?<![\w-])\d{3} \d{2} \d{4})(?![\w-])", re.IGNORECASE
)
_VIN = re.compile(r"(?<![\w-])(?=(?:[A-HJ-NPR-Z]*\d){3})(?=(?:\d*[A-HJ-NPR-Z]){3})[A-HJ-NPR-Z0-9]{17}(?![\w-])")
_ACCESSION = re.compile(r"(?<![\w-])[A-Z]{1,3}-?\d{2}-\d{3,7}(?![\w-])")
_LONG = re.compile(r"(?<![\w.,/-])(?=[A-Z0-9-]*\d{4})(?=[A-Z0-9-]{6,})[A-Z0-9]+(?:-[A-Z0-9]+)*(?![\w-]|[.,/]\d)")


def find(text: str) -> list[Candidate]:
    """Identifier candidates, typed by cue where there is one."""
    found: list[Candidate] = []
    for m in matches_at_words(_CUED, text, _CUE_STARTS):
        value = m.group("value")
        if len(value) >= 3 and not value.isalpha():
            cue = m.group("cue").lower()
            explicit = cue in _STRONG or m.group("numword") or m.group("sep") in (":", "#", "=", "(")
            confidence = (96 if len(value) >= 4 else 88) if explicit else 78
            id_type = _CUE_TYPE[cue]
            found.append(Candidate(m.start("value"), m.end("value"), "id", confidence, id_type, (m.start(), m.end())))
    for m in _SSN.finditer(text):
        found.append(Candidate(m.start(), m.end(), "id", 89, "ssn"))
    for m in _SSN_SPACED.finditer(text):
        found.append(Candidate(m.start("value"), m.end("value"), "id", 95, "ssn"))
    for m in _VIN.finditer(text):
        found.append(Candidate(m.start(), m.end(), "id", 85, "vehicle"))
    for m in _ACCESSION.finditer(text):
        found.append(Candidate(m.start(), m.end(), "id", 66, "id_number"))
    for m in _LONG.finditer(text):
        found.append(Candidate(m.start(), m.end(), "id", 55 if m.group().isdigit() else 58, "id_number"))
    return found
