import pytest

from nlpbench.annotators import REGISTRY
from nlpbench.model import Document
from tests.annotators.helpers import found, texts


@pytest.mark.parametrize(
    ("text", "date", "date_format"),
    [
        ("Admitted 12/26/2069 for chest pain.", "12/26/2069", "MM/DD/YYYY"),
        ("Seen 1/5/70 in clinic.", "1/5/70", "M/D/YY"),
        ("Echo 2069-03-12 showed EF 40%.", "2069-03-12", "YYYY-MM-DD"),
        ("Operated on 26.12.2069 abroad.", "26.12.2069", "DD.MM.YYYY"),
        ("Last colonoscopy 06/2068, normal.", "06/2068", "MM/YYYY"),
        ("Recheck labs on 3/4 please.", "3/4", "M/D"),
        ("Seen on March 3rd, 2069 by cardiology.", "March 3rd, 2069", "MMMM Do, YYYY"),
        ("Biopsy 3 Mar 69, benign.", "3 Mar 69", "D MMM YY"),
        ("CT chest Mar-2069.", "Mar-2069", "MMM-YYYY"),
        ("Discharged Monday, March 3, 2069 home.", "Monday, March 3, 2069", "dddd, MMMM D, YYYY"),
        ("Seen the 3rd of March, 2069 again.", "3rd of March, 2069", "Do [of] MMMM, YYYY"),
        ("DOB: SEPT. 9, 1948", "SEPT. 9, 1948", "MMM. D, YYYY"),
        ("Quit smoking in spring of 2065.", "spring of 2065", "[spring of] YYYY"),
        ("Fell over Thanksgiving, no injury.", "Thanksgiving", "[Thanksgiving]"),
        ("Diagnosed in 2061 by his PCP.", "2061", "YYYY"),
        ("Symptoms began on Tuesday evening.", "Tuesday", "dddd"),
        ("Return in January for follow-up.", "January", "MMMM"),
        ("Immunized in '52 as a child.", "'52", "'YY"),
    ],
)
def test_date_forms_with_their_format(text, date, date_format):
    assert found("date", text) == [(date, date_format)]


@pytest.mark.parametrize(
    "text",
    [
        "Percocet 5/325 mg 1-2 tabs q4-6h PRN pain.",
        "Take 1/2 tablet daily.",
        "BP 128/76, HR 72.",
        "Strength 5/5 in all extremities; pain 7/10; 2/6 systolic murmur.",
        "Call 617-555-1212 or (617) 555-1213.",
        "SSN 123-45-6789.",
        "Give 2000 mg of vancomycin and 1500 mL of saline.",
        "He may go home when able. She will march to the ward.",
        "Platelets 250, INR 1.1, Na 135 at 10:30.",
        "IP 10.12.201.7 and version 2.11.2069.",
    ],
)
def test_no_dates_in_doses_pressures_scores_phones_or_identifiers(text):
    assert texts("date", text) == []


def test_a_full_date_is_one_span_not_its_parts():
    assert texts("date", "Admitted on December 12, 2069 at noon.") == ["December 12, 2069"]


def test_confidence_grows_with_evidence():
    note = Document("n", "Seen 2069-03-12. Appendectomy 2065")
    annotations = {a.text: a.confidence for a in REGISTRY.get("date")().annotate(note)}
    assert annotations["2069-03-12"] > annotations["2065"]
