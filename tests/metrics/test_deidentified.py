import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.deidentified import (
    GoldSpan,
    Rate,
    align,
    conforms,
    consistent_shifts,
    hipaa_category,
    replaced_groups,
    token_counts,
)
from nlpbench.toolapi.dateshift import date_of

TEXT = "Seen on 12/26/2020 by Dr. Chloe Price in Seattle (WA)."
DATE = GoldSpan(8, 18, "date", "MM/DD/YYYY")
NAME = GoldSpan(26, 37, "person_name")
CITY = GoldSpan(41, 48, "location", "city")
STATE = GoldSpan(50, 52, "location", "state")
GOLD = [DATE, NAME, CITY, STATE]


def test_the_spans_cover_what_they_say():
    assert [TEXT[g.start : g.end] for g in GOLD] == ["12/26/2020", "Chloe Price", "Seattle", "WA"]


def test_a_text_left_as_it_was_keeps_every_token_and_removes_no_phi():
    counts = token_counts(align(TEXT, TEXT), GOLD)
    assert counts.token == PRF(0, 0, 7)
    assert counts.hipaa_token == PRF(0, 0, 6)  # the state is not one of HIPAA's identifiers
    assert counts.alignment == Rate(12, 12)
    assert counts.over_redaction == Rate(0, 5)
    assert counts.residual == {"date": Rate(3, 3), "location": Rate(2, 2), "person_name": Rate(2, 2)}
    assert counts.hipaa_residual == {"dates": Rate(3, 3), "geographic subdivisions": Rate(1, 1), "names": Rate(2, 2)}


def test_type_tags_remove_every_phi_token_and_follow_the_strategy():
    deidentified = "Seen on [TEXT_DATE] by Dr. [TEXT_PERSON_NAME] in [TEXT_LOCATION] ([TEXT_LOCATION])."
    alignment = align(TEXT, deidentified)
    counts = token_counts(alignment, GOLD)
    assert counts.token == PRF(7, 0, 0) and counts.token.recall == 1
    assert counts.over_redaction == Rate(0, 5)
    groups = replaced_groups(alignment, GOLD)
    assert [deidentified[g.new_start : g.new_end] for g in groups] == [
        "[TEXT_DATE]",
        "[TEXT_PERSON_NAME]",
        "[TEXT_LOCATION] ([TEXT_LOCATION]",  # no token of the original between them: one replacement
    ]


def test_over_redaction_counts_non_phi_tokens_changed():
    deidentified = "Seen on ********** by ** *********** in ******* (**)."
    counts = token_counts(align(TEXT, deidentified), GOLD)
    assert counts.token == PRF(7, 1, 0)  # "Dr" masked too
    assert counts.over_redaction == Rate(1, 5)


def test_a_region_maps_offsets_when_lengths_change():
    deidentified = "Seen on [TEXT_DATE] by Dr. Chloe Price in Seattle (WA)."
    alignment = align(TEXT, deidentified)
    start, end = alignment.region(NAME.start, NAME.end)
    assert deidentified[start:end] == "Chloe Price"
    assert replaced_groups(alignment, GOLD) == replaced_groups(alignment, [DATE])  # the others were kept


def test_spans_with_no_kept_token_between_them_are_one_replacement():
    text = "Call Chloe Price, Seattle today."
    name, city = GoldSpan(5, 16, "person_name"), GoldSpan(18, 25, "location", "city")
    alignment = align(text, "Call [REDACTED] today.")
    (group,) = replaced_groups(alignment, [name, city])
    assert (group.start, group.end, group.members) == (5, 25, (name, city))
    assert alignment.deidentified[group.new_start : group.new_end] == "[REDACTED]"


def test_a_moved_date_counts_as_replaced_though_its_year_survives():
    text, span = "Admitted March 3, 2069 today.", GoldSpan(9, 22, "date")
    alignment = align(text, "Admitted April 2, 2069 today.")
    assert token_counts(alignment, [span]).residual == {"date": Rate(1, 3)}
    assert token_counts(alignment, [span], moved=[span]).residual == {"date": Rate(0, 3)}


def test_hipaa_categories():
    assert hipaa_category("person_name") == "names"
    assert hipaa_category("location", "zip") == "geographic subdivisions"
    assert hipaa_category("location", "country") is None
    assert hipaa_category("location") is None
    assert hipaa_category("id", "ssn") == "social security numbers"
    assert hipaa_category("id", "unheard-of") == "other unique numbers"
    assert hipaa_category("contact", "email") == "email addresses"
    assert hipaa_category("covid_symptom") is None


def test_conforms_compares_with_what_the_configuration_asks():
    assert conforms({"mask"}, "Seattle", "*******", "*******")
    assert not conforms({"mask"}, "Seattle", "****", "*******")
    assert conforms({"type"}, "WA", " [TEXT_LOCATION]\n", "[TEXT_LOCATION]")
    assert not conforms({"type"}, "WA", "[TEXT_LOCATION]", None)


def test_a_surrogate_is_other_text_holding_none_of_the_original_tokens():
    assert conforms({"surrogate", "type"}, "Chloe Price", "Maria Lopez", None)
    assert not conforms({"surrogate"}, "Chloe Price", "Chloe Lopez", None)
    assert not conforms({"surrogate"}, "Chloe Price", "  ", None)


def test_date_shifts_are_consistent_when_they_are_the_patients_most_common():
    shifts = [("n1", "p1", 30), ("n1", "p1", 30), ("n2", "p1", 31), ("n3", "p2", -4)]
    assert consistent_shifts(shifts) == {"n1": Rate(2, 2), "n2": Rate(0, 1), "n3": Rate(1, 1)}
    assert consistent_shifts([("n", "p", 3), ("n", "p", 2)]) == {"n": Rate(1, 2)}  # a tie: the smallest


def test_date_of_reads_whole_dates_only():
    assert date_of("12/26/2020") == dt.date(2020, 12, 26)
    assert date_of("26.12.2020", "DD.MM.YYYY") == dt.date(2020, 12, 26)
    assert date_of("March 2069") is None
    assert date_of("yesterday") is None
    assert date_of("02/30/2020") is None


words = st.lists(st.sampled_from(["Chloe", "Price", "seen", "on", "12", "of", "Seattle", "x"]), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(words, st.sets(st.integers(0, 11)))
def test_counts_add_up(tokens, phi):
    text = " ".join(tokens)
    starts = [sum(len(t) + 1 for t in tokens[:i]) for i in range(len(tokens))]
    gold = [GoldSpan(starts[i], starts[i] + len(tokens[i]), "person_name") for i in sorted(phi) if i < len(tokens)]
    masked = list(text)
    for span in gold:
        masked[span.start : span.end] = "#" * (span.end - span.start)
    counts = token_counts(align(text, "".join(masked)), gold)
    assert counts.token.recall == (1.0 if gold else 0.0)
    assert counts.token.fp == 0
    assert counts.token.tp + counts.token.fn + counts.over_redaction.whole == len(tokens)
    assert counts.alignment.part == len(tokens) - len(gold)
    assert (counts + counts).token == counts.token + counts.token
