import pytest

from tests.annotators.helpers import texts


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Seen today by Dr. Okonkwo in clinic.", ["Okonkwo"]),
        ("Discussed with Dr. Maria Gonzalez-Ruiz at length.", ["Maria Gonzalez-Ruiz"]),
        ("Signed: Alan J. Turner, MD", ["Alan J. Turner"]),
        ("Mary Ellen O'Brien, RN, gave the dose.", ["Mary Ellen O'Brien"]),
        ("Patient: JONES, SARAH", ["JONES, SARAH"]),
        ("Name: Jones, Sarah", ["Jones, Sarah"]),
        ("Her daughter Hope Brown was at bedside.", ["Hope Brown"]),
        ("PCP: Dr. Lee. Dr. Lee's office will call.", ["Lee", "Lee"]),
        ("Sarah Jones is a 67-year-old woman. Jones reports dyspnea.", ["Sarah Jones", "Jones"]),
        ("Mr. Ngata was seen by J. Smith.", ["Ngata", "J. Smith"]),
        ("MRS. PATRICIA KOWALSKI ARRIVED BY EMS.", ["PATRICIA KOWALSKI"]),
        ("DR. PORTER FOUND TWO POLYPS.", ["PORTER"]),
        ("Consult requested for patient Reyes-Villalobos today.", ["Reyes-Villalobos"]),
        ("Dictated by: Dawn Chapman   Dictated: 3/26/2020", ["Dawn Chapman"]),
        ("RE: PATBERG, SUZANNE   DOB: 1/2/1950", ["PATBERG, SUZANNE"]),
        ("Her niece, Wendy W. Brown, can be reached.", ["Wendy W. Brown"]),
    ],
)
def test_names_from_titles_roles_credentials_lexicons(text, names):
    assert texts("person_name", text) == names


@pytest.mark.parametrize(
    "text",
    [
        "History of Parkinson's disease and Crohn's disease.",
        "Foley catheter in place. Babinski sign negative. Murphy's sign positive.",
        "Allegra 180 mg daily, Lyrica 75 mg BID, Ativan 0.5 mg PRN.",
        "Graves' disease treated with methimazole; Bell's palsy resolved.",
        "Patient Active Problem List reviewed. Discharge Medications below.",
        "Hodgkin lymphoma in remission; Gleason score 3+4=7.",
        "Will follow up. Hope this helps.",
        "The family prefers a facility closer to Ann Arbor.",
        "Works at Buchanan, Martin and Garcia.",
    ],
)
def test_no_names_in_eponyms_drugs_or_ordinary_words(text):
    assert texts("person_name", text) == []


def test_title_is_outside_the_span_and_street_drive_is_not_a_title():
    assert texts("person_name", "Lives at 12 Elm Dr. Boston with Dr. Reyes.") == ["Reyes"]
