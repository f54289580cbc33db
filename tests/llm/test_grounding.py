"""Grounding invariants (issue 22 §1): what a stage places is the mention, wherever white space and case differ."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.annotators.llm.grounding import Mention, ground, normalise

TEXT = st.text(alphabet="abAB İı\n\t.", max_size=60)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.data())
def test_each_exact_or_normalised_placement_is_the_mention(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    wanted = data.draw(st.sampled_from([text[start:end], text[start:end].upper(), " ".join(text[start:end].split())]))
    grounded = ground(text, [Mention(wanted, "person_name")])
    for placement in grounded.placements:
        placed = text[placement.start : placement.end]
        if placement.stage == "exact":
            assert placed == wanted.strip()
        elif placement.stage == "normalised":
            assert normalise(placed) == normalise(wanted)
    counts = grounded.counts["person_name"]
    assert counts.exact + counts.normalised + counts.fuzzy + counts.unplaced == 1
    assert (counts.unplaced == 1) == (not grounded.placements)


def test_white_space_runs_and_case_map_back_to_the_notes_offsets():
    text = "Seen by DR.\n\n   JOHN\tSMITH today; John  Smith again, and İstanbul."
    grounded = ground(text, [Mention("john smith", "person_name"), Mention("istanbul", "location")])
    assert [(text[p.start : p.end], p.stage) for p in grounded.placements] == [
        ("JOHN\tSMITH", "normalised"),
        ("John  Smith", "normalised"),
    ]  # İ lower-cases to two characters: kept as it is, so "istanbul" is not "İstanbul" (nor 90 % like it)
    assert grounded.counts["location"].unplaced == 1
