import pytest

from tests.annotators.helpers import found


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("MRN: 4455123", [("4455123", "medical_record")]),
        ("Medical Record Number 00-12-345", [("00-12-345", "medical_record")]),
        ("SSN 123-45-6789", [("123-45-6789", "ssn")]),
        ("Social security number: 123 45 6789", [("123 45 6789", "ssn")]),
        ("SSN as written on the intake form: 402 19 8877.", [("402 19 8877", "ssn")]),
        ("Labeled with the medical record number (MR4824056).", [("MR4824056", "medical_record")]),
        ("Acct #: 99812345", [("99812345", "account")]),
        ("Member ID: XGH123456789", [("XGH123456789", "health_plan")]),
        ("DEA # AB1234563", [("AB1234563", "license")]),
        ("Pacemaker serial PJN123456", [("PJN123456", "device")]),
        ("VIN 1HGCM82633A004352 on the report", [("1HGCM82633A004352", "vehicle")]),
        ("Fingerprint ID FP77120031", [("FP77120031", "bio_id")]),
        ("Accession #: S69-12345", [("S69-12345", "id_number")]),
    ],
)
def test_identifiers_typed_by_their_cue(text, ids):
    assert found("id", text) == ids


@pytest.mark.parametrize(
    ("text", "contacts"),
    [
        ("Call (617) 555-1212 today.", [("(617) 555-1212", "phone")]),
        ("Tel: 617.555.1212 x23", [("617.555.1212 x23", "phone")]),
        ("Phone: 555-1212", [("555-1212", "phone")]),
        ("Phone 617-555-1212  Fax: 617-555-1313", [("617-555-1212", "phone"), ("617-555-1313", "fax")]),
        ("Pager +1 617 555 0000.", [("+1 617 555 0000", "phone")]),
        ("Email m.ferndale+clinic@zephyrmail.example.", [("m.ferndale+clinic@zephyrmail.example", "email")]),
        (
            "Portal https://portal.example.org/u/marisol, then log in.",
            [("https://portal.example.org/u/marisol", "url")],
        ),
        ("Visit www.example.com.", [("www.example.com", "url")]),
        ("Last reachable at 10.34.201.7 today.", [("10.34.201.7", "ip_address")]),
        ("It was last reachable at 10.34.201.7.", [("10.34.201.7", "ip_address")]),
    ],
)
def test_contacts_with_their_type(text, contacts):
    assert found("contact", text) == contacts


@pytest.mark.parametrize(
    "text",
    [
        "WBC 12.5, Hgb 10.1, Plt 250, BP 120/80.",
        "Version 2.3.1.4 of the software.",
        "Admitted 12/26/2069.",
        "Gave 1500 mg twice.",
    ],
)
def test_no_identifiers_or_contacts_in_values(text):
    assert found("id", text) == [] and found("contact", text) == []
