import pytest

from nlpbench import profiles
from nlpbench.profiles.coref import CorefProfile


def test_the_three_profiles_and_their_documented_quirks():
    import nlpbench.tasks.coref  # noqa: F401  (registers the profiles)

    assert profiles.names("coref") == ["conll2012", "e2e", "standard"]
    conll2012 = profiles.get("coref", "conll2012")
    quirks = {name: value for name, value, _ in profiles.describe(conll2012)}
    assert quirks["repeats"] == "'response-repeats-of-key-mentions'"
    assert quirks["max_removed_repeats"] == "10" and quirks["blanc_parts"] == "'key'"
    assert all(doc.endswith(".") for _, _, doc in profiles.describe(conll2012))
    e2e = profiles.get("coref", "e2e")
    assert list(e2e.measures()) == ["muc", "bcub", "ceafe", "lea"]
    assert e2e.identify((10,)) == (10,) and conll2012.identify((10,)) == (10, 10)
    assert list(profiles.get("coref", "standard").measures()) == [
        "mentions", "muc", "bcub", "ceafm", "ceafe", "blanc", "lea",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"definitions": "scorch"}, "definitions must be one of reference, e2e"),
        ({"repeats": "drop"}, "repeats must be one of merge"),
        ({"definitions": "e2e"}, "no e2e definition of blanc, ceafm, mentions"),
    ],
)
def test_bad_profiles_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        CorefProfile(task="coref", name="x", summary="", **fields)
