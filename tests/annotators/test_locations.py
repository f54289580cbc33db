import pytest

from tests.annotators.helpers import found


@pytest.mark.parametrize(
    ("text", "locations"),
    [
        ("Transferred from St. Mary's Hospital today.", [("St. Mary's Hospital", "hospital")]),
        ("Seen at Riverside Regional Medical Center.", [("Riverside Regional Medical Center", "hospital")]),
        (
            "Films from the Hospital of the University of Pennsylvania.",
            [("Hospital of the University of Pennsylvania", "hospital")],
        ),
        ("Referred to the Department of Cardiology.", [("Department of Cardiology", "department")]),
        ("Follow up in Nephrology Clinic.", [("Nephrology Clinic", "department")]),
        (
            "Lives at 4417 Old Kettle Rd, Fresno, CA 93726.",
            [("4417 Old Kettle Rd", "street"), ("Fresno", "city"), ("CA", "state"), ("93726", "zip")],
        ),
        (
            "Address: 12 Elm Street Apt. 4B, Springfield, Illinois",
            [("12 Elm Street Apt. 4B", "street"), ("Springfield", "city"), ("Illinois", "state")],
        ),
        ("Mail to P.O. Box 442.", [("P.O. Box 442", "street")]),
        ("Admitted to Room 412B overnight.", [("412B", "room")]),
        ("She moved from Guatemala to Texas in the fall.", [("Guatemala", "country"), ("Texas", "state")]),
        ("He was visiting Seattle last week.", [("Seattle", "city")]),
        ("Works at Acme Widgets Inc. as a welder.", [("Acme Widgets Inc.", "organization")]),
        ("Works as a welder at Morales, Marks and Moore.", [("Morales, Marks and Moore", "organization")]),
        (
            "She resides in Tulare County; the ZIP on the chart is 93291.",
            [("Tulare County", "other"), ("93291", "zip")],
        ),
        ("AN OUTSIDE ECHO FROM JARVIS CLINIC DATED 06/18/2026.", [("JARVIS CLINIC", "hospital")]),
        ("SHE LIVES IN HONOLULU, HAWAII.", [("HONOLULU", "city"), ("HAWAII", "state")]),
        ("Transferred from Boston General Hospital.", [("Boston General Hospital", "hospital")]),
    ],
)
def test_locations_with_their_type(text, locations):
    assert found("location", text) == locations


@pytest.mark.parametrize(
    "text",
    [
        "Jordan Smith met Dr. Georgia Reyes.",
        "The hospital was busy. Clinic visit went well.",
        "Seen by the PA and the MD on call.",
        "Chad was seen in the ED.",
    ],
)
def test_ambiguous_place_names_need_a_cue(text):
    assert found("location", text) == []
