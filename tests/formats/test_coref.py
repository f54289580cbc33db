import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.errors import InputError, InputWarning
from nlpbench.formats.coref import (
    _CLOSE,
    _DOUBLE_ANTECEDENT,
    _OPEN,
    _SINGLE,
    _events,
    _take_enclosed,
    read,
    read_conll2012,
    read_jsonl,
    read_omin_csv,
    write_conll2012,
    write_jsonl,
    write_omin_csv,
)
from nlpbench.model import Cluster, CorefDocument


def conll(tmp_path, body, key="(d); part 000"):
    path = tmp_path / "in.conll"
    path.write_text(f"#begin document {key}\n{body}#end document\n")
    return path


def clusters_of(tmp_path, cells):
    """The clusters read from one document whose coreference cells are ``cells``, one token each."""
    lines = "".join(f"d\t0\t{i}\tw{i}\t{cell}\n" for i, cell in enumerate(cells))
    (document,) = read_conll2012(conll(tmp_path, lines))
    return [(c.id, c.mentions) for c in document.clusters]


def canonical(document):
    """What a round trip keeps: id, clusters as sets of mentions, and the tokens."""
    clusters = sorted((c.id or "", tuple(sorted(c.mentions))) for c in document.clusters)
    return document.id, clusters, document.sentences


def test_cells_concatenated_and_separated(tmp_path):
    assert clusters_of(tmp_path, ["(1)(2", "(1(3", "3)2)1)", "(1)|(2)"]) == [
        ("1", ((0, 0), (1, 2), (3, 3))),
        ("2", ((0, 2), (3, 3))),
        ("3", ((1, 2),)),
    ]


def test_same_chain_nesting_closes_last_opened_first(tmp_path):
    assert clusters_of(tmp_path, ["(1", "(1", "1)", "1)"]) == [("1", ((1, 2), (0, 3)))]


def test_a_cell_that_closes_and_reopens_a_chain_is_read_as_v801_reads_it(tmp_path):
    """Openings are taken before closings, so ``1)|(1`` closes the mention it opens (v8.01 does the same)."""
    assert clusters_of(tmp_path, ["(1", "1)|(1", "1)"]) == [("1", ((1, 1), (0, 2)))]


def test_removed_matches_can_make_new_ones(tmp_path):
    """Each pass deletes its first match until none is left: ``(1(2))`` loses ``(2)``, then ``(1)`` is a single."""
    assert clusters_of(tmp_path, ["(1(2))"]) == [("2", ((0, 0),)), ("1", ((0, 0),))]


def _perl_passes(cell):
    """What v8.01 takes from a cell: its four ``while ($cell =~ s/PATTERN//)`` loops, searched again after each
    removal (the reference for the one-pass reading)."""
    taken = []
    for pattern in (r"\((\d+\+\d)\)", r"\((\d+)\)", r"\((\d+)", r"(\d+)\)"):
        found = []
        while match := re.search(pattern, cell):
            found.append(match[1])
            cell = cell[: match.start()] + cell[match.end() :]
        taken.append(found)
    return taken


def _one_pass(cell):
    discarded, cell = _take_enclosed(_DOUBLE_ANTECEDENT, cell)
    singles, cell = _take_enclosed(_SINGLE, cell)
    return [discarded, singles, _OPEN.findall(cell), _CLOSE.findall(_OPEN.sub("", cell))]


@settings(max_examples=2000)
@given(st.text(alphabet="()12+|a", max_size=40))
def test_one_pass_reads_a_cell_as_v801_s_removal_loops(cell):
    assert _one_pass(cell) == _perl_passes(cell)


@settings(max_examples=3000)
@given(st.text(alphabet="()12+|a_-", max_size=30))
def test_a_cell_s_events_are_v801_s_passes(cell):
    discarded, singles, openings, closings = _perl_passes(cell)
    assert _events(cell) == (
        len(discarded),
        (*(("single", c) for c in singles), *(("opening", c) for c in openings), *(("closing", c) for c in closings)),
    )


def test_a_cell_of_a_million_mentions_is_read_in_one_pass(tmp_path):
    """v8.01's loops search the cell again after each removal: 300,000 nested mentions took minutes that way."""
    cells = ["(1" * 300_000 + "1)" * 300_000, "(1)" * 1_000_000]
    (document,) = read_conll2012(conll(tmp_path, "".join(f"d 0 {i} w {cell}\n" for i, cell in enumerate(cells))))
    # the first cell is 300,000 singles "(11)", each made by removing the one inside it
    assert [(c.id, len(c.mentions)) for c in document.clusters] == [("11", 300_000), ("1", 1_000_000)]


def test_a_file_with_no_document_is_not_conll2012(tmp_path):
    path = tmp_path / "in.conll"
    path.write_text('{"doc_key": "d", "clusters": []}\n{"doc_key": "e", "clusters": []}\n')
    with pytest.raises(InputError) as raised:
        list(read_conll2012(path))
    assert str(raised.value) == f"{path}: no #begin document line: not CoNLL-2012 (2 lines, none inside a document)"


def test_chain_ids_are_strings_and_underscore_and_dash_mean_nothing(tmp_path):
    assert clusters_of(tmp_path, ["(01)", "_", "(1)", "-"]) == [("01", ((0, 0),)), ("1", ((2, 2),))]


def test_double_antecedents_are_discarded_with_a_warning(tmp_path):
    with pytest.warns(InputWarning, match=r"double antecedents \(N\+M\) discarded, as the reference scorer"):
        assert clusters_of(tmp_path, ["(12+3)|(4)"]) == [("4", ((0, 0),))]


def test_tokens_count_across_sentences_and_words_are_kept(tmp_path):
    body = "d 0 0 Mary (1)\nd 0 1 left -\n\n   \nd 0 0 She (1)\n"
    (document,) = read_conll2012(conll(tmp_path, body))
    assert document.clusters == (Cluster(((0, 0), (2, 2)), "1"),)
    assert document.sentences == (("Mary", "left"), ("She",))


def test_key_is_the_whole_rest_of_the_begin_line_and_parts_are_documents(tmp_path):
    path = tmp_path / "in.conll"
    path.write_text(
        "#begin document (LuoTestCase); \r\nx (1)\n#end document\n\nstray line\n"
        "#begin document (a); part 000\nx (1)\n#end document\n#begin document (a); part 001\nx (1)\n#end document\n"
    )
    with pytest.warns(InputWarning, match="lines outside any document, ignored: 1"):
        ids = [d.id for d in read_conll2012(path)]
    assert ids == ["(LuoTestCase); ", "(a); part 000", "(a); part 001"]


def test_hash_lines_inside_a_document_are_tokens(tmp_path):
    with pytest.warns(InputWarning, match="lines starting with # read as tokens"):
        (document,) = read_conll2012(conll(tmp_path, "# a comment\nx (1)\n"))
    assert document.clusters[0].mentions == ((1, 1),)


def test_crlf_and_space_separated_columns(tmp_path):
    path = tmp_path / "in.conll"
    path.write_bytes(b"#begin document (d); part 000\r\nd 0 0 A (7\r\nd 0 1 B 7)\r\n\r\n#end document\r\n")
    (document,) = read_conll2012(path)
    assert document.id == "(d); part 000"
    assert document.clusters == (Cluster(((0, 1),), "7"),)


def test_not_utf8_is_an_input_error(tmp_path):
    path = tmp_path / "in.conll"
    path.write_bytes(b"#begin document d\nx \xff(1)\n#end document\n")
    with pytest.raises(InputError, match="not UTF-8 text"):
        list(read_conll2012(path))


DOCUMENT = CorefDocument(
    "(nw/a); part 001",
    (Cluster(((0, 0), (2, 4), (3, 3)), "5"), Cluster(((0, 4), (1, 1)), "12"), Cluster(((6, 6),))),
    (("He", "said", "the", "old", "man"), ("and", "left", ".")),
)


def test_conll2012_round_trip(tmp_path):
    """Chains keep their ids (a cluster without one is numbered after the largest) and tokens their words."""
    path = tmp_path / "out.conll"
    write_conll2012([DOCUMENT, CorefDocument("empty")], path)
    documents = list(read_conll2012(path))
    assert [d.id for d in documents] == [DOCUMENT.id, "empty"]
    expected = CorefDocument(DOCUMENT.id, (*DOCUMENT.clusters[:2], Cluster(((6, 6),), "13")), DOCUMENT.sentences)
    assert canonical(documents[0]) == canonical(expected)
    assert documents[1] == CorefDocument("empty")


def test_jsonl_round_trip(tmp_path):
    path = tmp_path / "out.jsonl"
    write_jsonl([DOCUMENT, CorefDocument("empty")], path)
    without_ids = tuple(Cluster(c.mentions) for c in DOCUMENT.clusters)
    assert list(read_jsonl(path)) == [
        CorefDocument(DOCUMENT.id, without_ids, DOCUMENT.sentences),
        CorefDocument("empty"),
    ]


def test_omin_csv_round_trip_keeps_mentions_as_written(tmp_path):
    path = tmp_path / "out.csv"
    odd = CorefDocument("19790720021329A", (Cluster(((4, 5), (10,))),))
    write_omin_csv([odd, CorefDocument("x")], path)
    assert path.read_text().splitlines() == ["id,coreferences", '19790720021329A,"[[[4,5],[10]]]"', "x,[]"]
    with pytest.warns(InputWarning, match=r"mentions written with one index.*: 1 \(first: \[10\] in 19790720021329A\)"):
        assert list(read_omin_csv(path)) == [odd, CorefDocument("x")]


def test_a_document_without_tokens_is_written_with_placeholder_words(tmp_path):
    path = tmp_path / "out.conll"
    write_conll2012([CorefDocument("d", (Cluster(((1, 2),)),))], path)
    assert path.read_text().splitlines() == [
        "#begin document d", "d\t0\t0\t_\t-", "d\t0\t1\t_\t(0", "d\t0\t2\t_\t0)", "", "#end document",
    ]  # fmt: skip


def test_crossing_mentions_of_one_chain_cannot_be_written(tmp_path):
    crossing = CorefDocument("d", (Cluster(((0, 1), (1, 2)), "3"),))
    with pytest.raises(InputError, match="chain 3: mentions 0-1 and 1-2 overlap without nesting"):
        write_conll2012([crossing], tmp_path / "out.conll")


spans = st.tuples(st.integers(0, 12), st.integers(0, 3)).map(lambda p: (p[0], p[0] + p[1]))


def laminar(mentions):
    """Drop the mentions that cross an earlier one, so that the chain can be written as brackets."""
    kept = []
    for s, e in mentions:
        if all(e < s2 or e2 < s or (s <= s2 and e2 <= e) or (s2 <= s and e <= e2) for s2, e2 in kept):
            kept.append((s, e))
    return tuple(kept)


documents = st.builds(
    lambda name, chains: CorefDocument(
        name, tuple(Cluster(m, str(i)) for i, m in enumerate(laminar(c) for c in chains) if m), (("w",) * 16,)
    ),
    st.text("abc()_; 0123", min_size=1, max_size=8).map(lambda t: t.strip() or "x"),
    st.lists(st.lists(spans, min_size=1, max_size=5), max_size=5),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(documents, max_size=3, unique_by=lambda d: d.id))
def test_written_conll2012_reads_back_the_same_clusters(tmp_path_factory, docs):
    path = tmp_path_factory.mktemp("round") / "out.conll"
    write_conll2012(docs, path)
    assert [canonical(d) for d in read_conll2012(path)] == [canonical(d) for d in docs]


@settings(max_examples=30, deadline=None)
@given(st.lists(documents, max_size=3, unique_by=lambda d: d.id))
def test_written_jsonl_reads_back_the_same_documents(tmp_path_factory, docs):
    path = tmp_path_factory.mktemp("round") / "out.jsonl"
    write_jsonl(docs, path)
    assert list(read_jsonl(path)) == [
        CorefDocument(d.id, tuple(Cluster(c.mentions) for c in d.clusters), d.sentences) for d in docs
    ]


def test_omin_csv_columns_odd_mentions_and_repeated_ids(tmp_path):
    path = tmp_path / "tool.csv"
    path.write_text(',c5,corefs\n0,A,"[[[-1, -1], [3, 3]]]"\n1,B,"[[], [[0, 1]]]"\n2,A,"[]"\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        documents = list(read_omin_csv(path))
    assert documents == [
        CorefDocument("A", (Cluster(((-1, -1), (3, 3))),)),
        CorefDocument("B", (Cluster(((0, 1),)),)),
    ]
    messages = [str(w.message) for w in caught]
    assert messages == [
        f"{path}: row 2 (id B): corefs[0] is an empty cluster; ignored",
        f"{path}: rows repeating the id of an earlier row, ignored (the first row of an id counts): 1",
        f"{path}: mentions [-1, -1] (a mention the tool could not place), kept, matching no placed mention: "
        "1 (first: [-1, -1] in A)",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id,text\na,x\n", "header: no clusters column (coreferences or corefs or clusters); the columns are id, text"),
        ('id,corefs\na,"[[[0, 1]"\n', "row 1 (id a): column 'corefs' is not a Python list literal: '[[[0, 1]'"),
        ('id,corefs\na,"[[[-2, 1]]]"\n', "row 1 (id a): corefs[0]: mention [-2, 1] has a negative index"),
        ('id,corefs\na,"[[[0, 1, 2]]]"\n', "row 1 (id a): corefs[0]: mention [0, 1, 2] is not [start, end]"),
        ("id,corefs\na,[[0]]\n", "row 1 (id a): corefs[0]: mention 0 is not [start, end]"),
        ("id,corefs\na\n", "row 1 (id a): the row has fewer cells than the header"),
    ],
)
def test_bad_omin_csv(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(InputError) as raised:
        list(read_omin_csv(path))
    assert str(raised.value).startswith(f"{path}: {message}")


def test_read_dispatches_and_checks_options(tmp_path):
    path = conll(tmp_path, "x (1)\n")
    assert [d.id for d in read("conll2012", path)] == ["(d); part 000"]
    with pytest.raises(InputError, match="applies to omin-csv files, not to conll2012"):
        read("conll2012", path, id_column="id")
    with pytest.raises(InputError, match="unknown coreference format 'brat'"):
        read("brat", path)
