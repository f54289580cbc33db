"""``POST /deidentifiedNotes``: each strategy with exact text and re-based annotations."""

from __future__ import annotations

from itertools import combinations

import jsonschema
import pytest

from nlpbench.api.tool import create_deidentifier_app
from tests.api.official import spec
from tests.toolkit import NOTE, AsgiClient, Fixed, RegexPhi

MARY = "Mary Williamson came back from Seattle yesterday, 12 December 2013."


def spans_of(text: str, *words: str, label: str, confidence: float = 95.5, **attributes):
    return [(text.index(w), text.index(w) + len(w), label, attributes, confidence) for w in words]


MARY_ANNOTATIONS = (
    spans_of(MARY, "Mary", "Williamson", label="person_name")
    + spans_of(MARY, "Seattle", label="location", locationType="city")
    + spans_of(MARY, "12", "December", "2013", label="date")
)


@pytest.fixture(scope="module")
def official(vectors):
    return spec(vectors, "phi-deidentifier")


def deidentify(annotator, text: str, *steps: dict, official=None, status: int = 200) -> dict:
    note = {**NOTE, "text": text}
    body = {"note": note, "deidentificationSteps": list(steps)}
    response = AsgiClient(create_deidentifier_app(annotator)).post("/api/v1/deidentifiedNotes", json=body)
    assert response.status_code == status, response.text
    if official is not None:
        official.validate_request("post", "/deidentifiedNotes", body)
        official.validate_response("post", "/deidentifiedNotes", status, response.json())
    return response.json()


def texts(annotation_set: dict, array: str) -> list[tuple[int, int, str]]:
    return [(a["start"], a["length"], a["text"]) for a in annotation_set[array]]


def covered(result: dict) -> None:
    """Every re-based annotation's text is the new text it covers."""
    text = result["deidentifiedNote"]["text"]
    for found in result["deidentifiedAnnotations"].values():
        for a in found:
            assert text[a["start"] : a["start"] + a["length"]] == a["text"]


def test_masking_character_per_type(official):
    result = deidentify(
        Fixed(MARY_ANNOTATIONS),
        MARY,
        {"maskingCharConfig": {"maskingChar": "*"}, "annotationTypes": ["text_location"]},
        {"maskingCharConfig": {"maskingChar": "_"}, "annotationTypes": ["text_person_name"]},
        {"maskingCharConfig": {"maskingChar": "-"}, "annotationTypes": ["text_date"]},
        official=official,
    )
    assert result["deidentifiedNote"]["text"] == "____ __________ came back from ******* yesterday, -- -------- ----."
    for array in ("textPersonNameAnnotations", "textLocationAnnotations", "textDateAnnotations"):
        original = [(s, n) for s, n, _ in texts(result["originalAnnotations"], array)]
        assert [(s, n) for s, n, _ in texts(result["deidentifiedAnnotations"], array)] == original
    assert texts(result["originalAnnotations"], "textLocationAnnotations") == [(31, 7, "Seattle")]
    assert result["deidentifiedNote"]["identifier"] == NOTE["identifier"]
    covered(result)


def test_masking_character_defaults_to_a_star(official):
    result = deidentify(Fixed(MARY_ANNOTATIONS), MARY, {"maskingCharConfig": {}, "annotationTypes": ["text_location"]})
    assert result["deidentifiedNote"]["text"] == MARY.replace("Seattle", "*******")


def test_redact_every_type(official):
    result = deidentify(
        Fixed(MARY_ANNOTATIONS),
        MARY,
        {"redactConfig": {}, "annotationTypes": ["text_person_name", "text_location", "text_date"]},
        official=official,
    )
    assert result["deidentifiedNote"]["text"] == "  came back from  yesterday,   ."
    deidentified = result["deidentifiedAnnotations"]
    assert texts(deidentified, "textPersonNameAnnotations") == [(0, 0, ""), (1, 0, "")]
    assert texts(deidentified, "textLocationAnnotations") == [(17, 0, "")]
    assert texts(deidentified, "textDateAnnotations") == [(29, 0, ""), (30, 0, ""), (31, 0, "")]


def test_annotation_type_tags(official):
    result = deidentify(
        Fixed(MARY_ANNOTATIONS),
        MARY,
        {"annotationTypeMaskConfig": {}, "annotationTypes": ["text_person_name", "text_location", "text_date"]},
        official=official,
    )
    text = result["deidentifiedNote"]["text"]
    assert text == (
        "[TEXT_PERSON_NAME] [TEXT_PERSON_NAME] came back from [TEXT_LOCATION] yesterday, "
        "[TEXT_DATE] [TEXT_DATE] [TEXT_DATE]."
    )
    deidentified = result["deidentifiedAnnotations"]
    assert texts(deidentified, "textPersonNameAnnotations") == [
        (0, 18, "[TEXT_PERSON_NAME]"),
        (19, 18, "[TEXT_PERSON_NAME]"),
    ]
    assert texts(deidentified, "textLocationAnnotations") == [(53, 15, "[TEXT_LOCATION]")]
    assert [a["text"] for a in deidentified["textDateAnnotations"]] == ["[TEXT_DATE]"] * 3
    covered(result)


def test_confidence_threshold_and_types_not_asked_for(official):
    text = "Chloe Price (SSN 123-45-6789) was seen in Seattle."
    result = deidentify(
        RegexPhi(),
        text,
        {"confidenceThreshold": 75, "maskingCharConfig": {"maskingChar": "#"}, "annotationTypes": ["text_person_name"]},
        {"confidenceThreshold": 75, "redactConfig": {}, "annotationTypes": ["text_location"]},
        official=official,
    )
    # person names (80) are masked, Seattle (70) is below the threshold, ids were not asked for
    assert result["deidentifiedNote"]["text"] == "########### (SSN 123-45-6789) was seen in Seattle."
    assert result["originalAnnotations"]["textIdAnnotations"] == []
    assert texts(result["deidentifiedAnnotations"], "textLocationAnnotations") == [(42, 7, "Seattle")]


def test_the_threshold_is_inclusive():
    result = deidentify(
        RegexPhi(), "in Seattle", {"confidenceThreshold": 70, "redactConfig": {}, "annotationTypes": ["text_location"]}
    )
    assert result["deidentifiedNote"]["text"] == "in "


def test_tag_above_90_mask_below():
    annotations = spans_of(MARY, "Mary", label="person_name", confidence=95) + spans_of(
        MARY, "Williamson", label="person_name", confidence=50
    )
    result = deidentify(
        Fixed(annotations),
        MARY,
        {"confidenceThreshold": 10, "maskingCharConfig": {"maskingChar": "*"}, "annotationTypes": ["text_person_name"]},
        {"confidenceThreshold": 90, "annotationTypeMaskConfig": {}, "annotationTypes": ["text_person_name"]},
    )
    assert result["deidentifiedNote"]["text"] == MARY.replace("Mary", "[TEXT_PERSON_NAME]").replace(
        "Williamson", "*" * 10
    )
    assert texts(result["deidentifiedAnnotations"], "textPersonNameAnnotations") == [
        (0, 18, "[TEXT_PERSON_NAME]"),
        (19, 10, "*" * 10),
    ]


def test_overlapping_annotations_are_replaced_once_whatever_their_order():
    text = "ABCDEFG"
    annotations = [
        (0, 3, "date", {}, 90.0),
        (0, 4, "person_name", {}, 90.0),
        (0, 5, "location", {"locationType": "city"}, 90.0),
    ]
    step = {
        "maskingCharConfig": {"maskingChar": "*"},
        "annotationTypes": ["text_date", "text_person_name", "text_location"],
    }
    forward = deidentify(Fixed(annotations), text, step)
    backward = deidentify(Fixed(annotations[::-1]), text, {**step, "annotationTypes": step["annotationTypes"][::-1]})
    assert forward["deidentifiedNote"]["text"] == backward["deidentifiedNote"]["text"] == "*****FG"
    for result in (forward, backward):
        assert [(a["start"], a["length"]) for a in result["deidentifiedAnnotations"]["textDateAnnotations"]] == [(0, 5)]
    tagged = deidentify(
        Fixed(annotations), text, {"annotationTypeMaskConfig": {}, "annotationTypes": ["text_location", "text_date"]}
    )
    assert tagged["deidentifiedNote"]["text"] == "[TEXT_LOCATION]FG"


def test_partial_overlap_never_erases_text():
    text = "TUVWXYZ"
    annotations = [(0, 3, "date", {}, 90.0), (1, 5, "date", {}, 90.0), (4, 7, "date", {}, 90.0)]
    result = deidentify(
        Fixed(annotations), text, {"maskingCharConfig": {"maskingChar": "*"}, "annotationTypes": ["text_date"]}
    )
    assert result["deidentifiedNote"]["text"] == "*******"


def test_an_unselected_annotation_overlapping_a_replacement_stretches_over_it():
    annotations = [*spans_of(MARY, "Mary", label="person_name"), (0, 15, "location", {"locationType": "other"}, 10.0)]
    step = {"confidenceThreshold": 50, "annotationTypeMaskConfig": {}}
    result = deidentify(Fixed(annotations), MARY, {**step, "annotationTypes": ["text_person_name", "text_location"]})
    assert result["deidentifiedNote"]["text"].startswith("[TEXT_PERSON_NAME] Williamson came")
    assert texts(result["deidentifiedAnnotations"], "textLocationAnnotations") == [
        (0, 29, "[TEXT_PERSON_NAME] Williamson")
    ]
    covered(result)


def test_date_offset_of_the_spec_example(official):
    text = "John Smith visited on 1 January 2020, then on 12/26/2020."
    annotations = (
        spans_of(text, "John Smith", label="person_name")
        + spans_of(text, "1 January 2020", label="date", dateFormat="D MMMM YYYY")
        + spans_of(text, "12/26/2020", label="date", dateFormat="MM/DD/YYYY")
    )
    result = deidentify(
        Fixed(annotations),
        text,
        {"dateOffsetConfig": {"offsetDays": 2128}, "annotationTypes": ["text_date"]},
        official=official,
    )
    assert result["deidentifiedNote"]["text"] == "John Smith visited on 29 October 2025, then on 10/24/2026."
    assert texts(result["deidentifiedAnnotations"], "textDateAnnotations") == [
        (22, 15, "29 October 2025"),
        (47, 10, "10/24/2026"),
    ]
    assert result["deidentifiedAnnotations"]["textDateAnnotations"][0]["dateFormat"] == "D MMMM YYYY"


def test_date_offset_that_changes_lengths_moves_what_follows():
    text = "Seen Sept 9 by Mary; next visit Monday."
    annotations = spans_of(text, "Sept 9", "Monday", label="date") + spans_of(text, "Mary", label="person_name")
    result = deidentify(
        Fixed(annotations), text, {"dateOffsetConfig": {"offsetDays": -10}, "annotationTypes": ["text_date"]}
    )
    assert result["deidentifiedNote"]["text"] == "Seen Aug 30 by Mary; next visit Friday."
    result = deidentify(
        Fixed(annotations), text, {"dateOffsetConfig": {"offsetDays": 1}, "annotationTypes": ["text_date"]}
    )
    assert result["deidentifiedNote"]["text"] == "Seen Sept 10 by Mary; next visit Tuesday."
    assert texts(result["deidentifiedAnnotations"], "textDateAnnotations") == [(5, 7, "Sept 10"), (33, 7, "Tuesday")]
    assert result["originalAnnotations"]["textPersonNameAnnotations"] == []  # not asked for
    covered(result)


def test_a_date_offset_leaves_what_it_cannot_read():
    text = "Discharged yesterday, 12/26/2020."
    annotations = spans_of(text, "yesterday", "12/26/2020", label="date")
    result = deidentify(
        Fixed(annotations), text, {"dateOffsetConfig": {"offsetDays": 7}, "annotationTypes": ["text_date"]}
    )
    assert result["deidentifiedNote"]["text"] == "Discharged yesterday, 01/02/2021."


@pytest.mark.parametrize(
    ("step", "detail"),
    [
        ({"annotationTypes": ["text_date"]}, "give exactly one of"),
        ({"redactConfig": {}, "maskingCharConfig": {}, "annotationTypes": ["text_date"]}, "redactConfig"),
        ({"dateOffsetConfig": {"offsetDays": 3}, "annotationTypes": ["text_person_name"]}, "text_date only"),
        ({"dateOffsetConfig": {"offsetDays": 10**9}, "annotationTypes": ["text_date"]}, "outside the years"),
    ],
)
def test_steps_that_cannot_be_done_are_400_problems(official, step, detail):
    problem = deidentify(RegexPhi(), NOTE["text"], step, official=official, status=400)
    assert problem["status"] == 400 and detail in problem["detail"]
    assert problem["detail"].startswith("deidentificationSteps[0]")


@pytest.mark.parametrize(
    "body",
    [
        {"note": NOTE},
        {"deidentificationSteps": []},
        {"note": NOTE, "deidentificationSteps": [{"redactConfig": {}}]},
        {"note": NOTE, "deidentificationSteps": [{"redactConfig": {}, "annotationTypes": ["date"]}]},
        {"note": NOTE, "deidentificationSteps": [{"maskingCharConfig": {"maskingChar": "**"}, "annotationTypes": []}]},
        {
            "note": NOTE,
            "deidentificationSteps": [{"confidenceThreshold": 101, "redactConfig": {}, "annotationTypes": []}],
        },
        {"note": NOTE, "deidentificationSteps": [{"dateOffsetConfig": {}, "annotationTypes": ["text_date"]}]},
        {"note": NOTE, "deidentificationSteps": [{"dateOffsetConfig": {"offsetDays": "3"}, "annotationTypes": []}]},
    ],
)
def test_bad_bodies_get_400_problems(official, body):
    response = AsgiClient(create_deidentifier_app(RegexPhi())).post("/api/v1/deidentifiedNotes", json=body)
    assert response.status_code == 400
    official.validate_response("post", "/deidentifiedNotes", 400, response.json())


def test_the_spec_example_request(official):
    steps = [
        {"confidenceThreshold": 20.0, "maskingCharConfig": {"maskingChar": "-"}, "annotationTypes": ["text_date"]},
        {
            "confidenceThreshold": 30.0,
            "maskingCharConfig": {"maskingChar": "#"},
            "annotationTypes": ["text_person_name"],
        },
        {"confidenceThreshold": 20.0, "annotationTypeMaskConfig": {}, "annotationTypes": ["text_location"]},
    ]
    result = deidentify(RegexPhi(), NOTE["text"], *steps, official=official)
    assert (
        result["deidentifiedNote"]["text"] == "On ----------, Ms. ########### met with Dr. ######## in [TEXT_LOCATION]."
    )
    assert texts(result["deidentifiedAnnotations"], "textLocationAnnotations") == [(56, 15, "[TEXT_LOCATION]")]
    covered(result)


def test_no_steps_returns_the_note_unchanged(official):
    result = deidentify(RegexPhi(), NOTE["text"], official=official)
    assert result["deidentifiedNote"] == NOTE
    assert all(values == [] for values in result["originalAnnotations"].values())


STRATEGY_VALUES = {
    "maskingCharConfig": {"maskingChar": "*"},
    "redactConfig": {},
    "annotationTypeMaskConfig": {},
    "dateOffsetConfig": {"offsetDays": 3},
}


@pytest.mark.parametrize("types", [["text_date"], ["text_person_name"], ["text_date", "text_location"]])
@pytest.mark.parametrize("count", range(len(STRATEGY_VALUES) + 1))
def test_the_documented_step_schema_accepts_exactly_what_the_service_accepts(types, count):
    """The OpenAPI document's ``oneOf`` (one strategy, a date offset for dates only) is the rule the service
    applies: every combination of strategies and types is valid under the document's schema when, and only
    when, the service takes it."""
    app = create_deidentifier_app(RegexPhi())
    # the document itself as the root, so that its "#/components/…" references resolve; its other
    # members (openapi, info, paths) are not JSON Schema keywords and are ignored
    step_schema = {**app.openapi(), "$ref": "#/components/schemas/DeidentificationStep"}
    validator = jsonschema.Draft202012Validator(step_schema)
    for chosen in combinations(STRATEGY_VALUES, count):
        step = {"annotationTypes": types, **{name: STRATEGY_VALUES[name] for name in chosen}}
        body = {"note": {**NOTE, "text": MARY}, "deidentificationSteps": [step]}
        status = AsgiClient(app).post("/api/v1/deidentifiedNotes", json=body).status_code
        assert status in (200, 400, 422), (chosen, types, status)
        assert validator.is_valid(step) == (status == 200), (chosen, types, status)
