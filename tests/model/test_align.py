import pytest

from nlpbench.model import Document, pair_documents


def docs(*ids):
    return [Document(i) for i in ids]


def test_pairs_by_id_and_reports_one_sided_documents_last():
    pairs = [(i, g and g.id, p and p.id) for i, g, p in pair_documents(docs("a", "b", "c"), docs("b", "a", "d"))]
    assert pairs == [("b", "b", "b"), ("a", "a", "a"), ("c", "c", None), ("d", None, "d")]


def test_streams_in_the_same_order_hold_nothing_back():
    def stream(n, seen):
        for i in range(n):
            seen.append(i)
            yield Document(str(i))

    read = []
    for doc_id, _, _ in pair_documents(stream(100, read), stream(100, [])):
        # the pair for document i is yielded as soon as both sides have read it
        assert int(doc_id) == len(read) - 1


def test_a_document_repeated_on_one_side_is_refused():
    with pytest.raises(ValueError, match="appears twice in the gold"):
        list(pair_documents(docs("a", "a"), docs("b")))
