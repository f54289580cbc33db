import pytest

from nlpbench.model import Annotation, Document, Span


def test_contiguous_span_has_one_part():
    span = Span.of(3, 4)
    assert (span.start, span.end, span.length) == (3, 7, 4)
    assert span.parts == ((3, 7),)
    assert not span.discontinuous


def test_fragments_are_sorted_and_joined_with_a_space():
    span = Span.from_fragments([(9, 14), (0, 5)])
    assert (span.start, span.end) == (0, 14)
    assert span.parts == ((0, 5), (9, 14))
    assert span.covered_text("left and right!") == "left  right"


@pytest.mark.parametrize(
    ("start", "end", "fragments", "message"),
    [
        (-1, 3, (), "negative offset"),
        (5, 3, (), "before start"),
        (0, 9, ((0, 5), (4, 9)), "overlap"),
        (0, 9, ((1, 5), (6, 9)), "do not begin"),
        ("0", 3, (), "not an integer"),
    ],
)
def test_bad_spans_are_refused(start, end, fragments, message):
    with pytest.raises(ValueError, match=message):
        Span(start, end, fragments)


def test_confidence_outside_0_to_100_is_refused():
    with pytest.raises(ValueError, match="confidence"):
        Annotation("d", Span(0, 1), "date", confidence=101)


def test_span_problem_names_the_first_misfit():
    doc = Document("n1", "On 12/26/2020 in Seattle.")
    doc.annotations = [
        Annotation("n1", Span(3, 13), "date", "12/26/2020"),
        Annotation("n1", Span(17, 24), "location", "Boston", id="T2"),
    ]
    assert (
        doc.span_problem() == "T2 (location) at 17-24: its text (6 characters) differs from the note's (7 characters)"
    )
    doc.annotations[1] = Annotation("n1", Span(17, 40), "location")
    assert "ends beyond the text (25 characters)" in doc.span_problem()
    doc.annotations.pop()
    assert doc.span_problem() is None
