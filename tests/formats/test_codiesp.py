import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.errors import InputError
from nlpbench.formats import codiesp as tsv
from nlpbench.formats import codiesp_columns as columns_reader
from nlpbench.model import CodeReference, RankedCodes


def write(tmp_path, text, name="file.tsv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_ranked_codes_group_by_document_in_file_order(tmp_path):
    path = write(tmp_path, "d2\tB02.1\nd1\ta01.0\nd2\tc03\r\n\nd1\tA01.0\n")
    assert tsv.read_ranked_codes(path) == [RankedCodes("d2", ("B02.1", "c03")), RankedCodes("d1", ("a01.0", "A01.0"))]


def test_ranked_codes_round_trip(tmp_path):
    documents = [RankedCodes("S0004-1", ("n39.0", "0DT70ZZ", "n39.0")), RankedCodes("S0005-2", ("r52",))]
    path = tmp_path / "out.tsv"
    tsv.write_ranked_codes(documents, path)
    assert path.read_text() == "S0004-1\tn39.0\nS0004-1\t0DT70ZZ\nS0004-1\tn39.0\nS0005-2\tr52\n"
    assert tsv.read_ranked_codes(path) == documents


def test_byte_order_mark_is_not_part_of_the_first_id(tmp_path):
    path = write(tmp_path, "d1\ta01.0\n", encoding="utf-8-sig")
    assert tsv.read_ranked_codes(path)[0].doc_id == "d1"


def test_gold_references_keep_their_listed_pieces(tmp_path):
    path = write(
        tmp_path,
        "d1\tDIAGNOSTICO\tn32.9\tlesiones vesicales\t1208 1216;737 746\nd1\tPROCEDIMIENTO\tbw40zzz\teco\t5 9\n",
    )
    first, second = tsv.read_references(path)
    assert first == CodeReference("d1", "n32.9", ((1208, 1216), (737, 746)), "DIAGNOSTICO", "lesiones vesicales")
    assert first.listed_bounds == (1208, 746) and first.covering_bounds == (737, 1216)
    assert first.span.parts == ((737, 746), (1208, 1216))
    assert second.listed_bounds == second.covering_bounds == (5, 9)


def test_references_round_trip(tmp_path):
    references = [
        CodeReference("d1", "n20.0", ((10, 20), (30, 40)), "DIAGNOSTICO", "litiasis renal"),
        CodeReference("d2", "bw40zzz", ((5, 9),), "PROCEDIMIENTO", "eco"),
    ]
    gold, pred = tmp_path / "gold.tsv", tmp_path / "pred.tsv"
    tsv.write_references(references, gold)
    assert tsv.read_references(gold) == references
    tsv.write_predicted_references(references, pred)
    assert pred.read_text() == "d1\t10 40\tDIAGNOSTICO\tn20.0\nd2\t5 9\tPROCEDIMIENTO\tbw40zzz\n"
    assert [r.fragments for r in tsv.read_predicted_references(pred)] == [((10, 40),), ((5, 9),)]


def test_predicted_spans_are_kept_as_written(tmp_path):
    path = write(tmp_path, "d1\t1208 746\tDIAGNOSTICO\tn32.9\nd1\t-3 50\tPROEDIMIENTO\tm81.0\n")
    assert [(r.listed_bounds, r.label) for r in tsv.read_predicted_references(path)] == [
        ((1208, 746), "DIAGNOSTICO"),
        ((-3, 50), "PROEDIMIENTO"),
    ]


def test_valid_codes_first_column_lower_cased(tmp_path):
    path = write(tmp_path, "A00.0\tCólera\tCholera\n0016\tBypass\n\nz87.4\n")
    assert tsv.read_valid_codes(path) == {"a00.0", "0016", "z87.4"}


@pytest.mark.parametrize(
    ("reader", "text", "message"),
    [
        (tsv.read_ranked_codes, "d1\ta01.0\textra\n", "line 1: expected 2 tab-separated fields (case, code), found 3"),
        (tsv.read_ranked_codes, "d1\tDIAGNOSTICO\ta01.0\tref\t1 2\n", "found 5: is this a CodiEsp-X gold file?"),
        (tsv.read_ranked_codes, "d1\ta01.0\nd1\n", "line 2: expected 2 tab-separated fields (case, code), found 1"),
        (tsv.read_ranked_codes, "d1\t\n", "line 1: empty code"),
        (tsv.read_ranked_codes, "d1\ta01.0 \n", "line 1: code 'a01.0 ' contains whitespace"),
        (tsv.read_ranked_codes, "d 1\ta01.0\n", "line 1: case id 'd 1' contains whitespace"),
        (tsv.read_references, "d1\t10 20\tDIAGNOSTICO\ta01.0\n", "expected 5 tab-separated fields (case, label, code"),
        (
            tsv.read_references,
            "d1\tDIAGNOSTICO\ta01.0\tref\t10\n",
            "line 1: reference position '10' is not 'start end'",
        ),
        (tsv.read_references, "d1\tDIAGNOSTICO\ta01.0\tref\t10 x\n", "reference position '10 x'"),
        (tsv.read_references, "d1\tDIAGNOSTICO\ta01.0\tref\t10 20; 30 40\n", "reference position '10 20; 30 40'"),
        (tsv.read_references, "d1\tDIAGNOSTICO\ta01.0\tref\t20 10\n", "reference fragment '20 10' ends before it"),
        (tsv.read_predicted_references, "d1\t10 20;30 40\tD\ta01.0\n", "discontinuous predicted span '10 20;30 40'"),
        (tsv.read_predicted_references, "d1\t10.5 20\tD\ta01.0\n", "predicted span '10.5 20' is not two integer"),
        (tsv.read_predicted_references, "d1\t10\tD\ta01.0\n", "predicted span '10' is not two integer offsets"),
        (tsv.read_predicted_references, "d1\tD\ta01.0\tref\t10 20\n", "found 5: is this a CodiEsp-X gold file?"),
        (tsv.read_predicted_references, "d1\ta01.0\n", "found 2: is this a CodiEsp-D/P file?"),
        (tsv.read_valid_codes, " A00.0\tdesc\n", "line 1: code ' A00.0' contains whitespace"),
        (tsv.read_valid_codes, "\n\r\n", "empty file: a valid-code list needs at least one code"),
    ],
)
def test_bad_lines_name_file_line_and_problem(tmp_path, reader, text, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as raised:
        reader(path)
    text = str(raised.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text
    assert text.startswith(f"{path}: line ") or "empty file" in text


@pytest.mark.parametrize("reader", [tsv.read_ranked_codes, tsv.read_references, tsv.read_predicted_references])
@pytest.mark.parametrize("text", ["", "\n\r\n", "\ufeff"])
def test_an_empty_file_has_no_records(tmp_path, reader, text):
    assert reader(write(tmp_path, text)) == []


def test_not_utf8(tmp_path):
    path = write(tmp_path, "d1\tcódigo\n", encoding="latin-1")
    with pytest.raises(InputError, match="not UTF-8 text"):
        tsv.read_ranked_codes(path)


def test_code_reference_needs_integer_pieces():
    with pytest.raises(ValueError):
        CodeReference("d1", "a01.0", ())
    with pytest.raises(ValueError):
        CodeReference("d1", "a01.0", ((1.5, 3),))
    with pytest.raises(ValueError):
        CodeReference("d1", "a01.0", ((True, 3),))


@pytest.mark.parametrize(
    "text",
    [
        "d1\tN39.0\nd2\tr52\nd2\tn39.0\n",
        "d1\tDIAGNOSTICO\tN39.0\tinfección\t1 5\nd2\tDIAGNOSTICO\tr52\tdolor\t3 8;10 12\n",
        "d1\t1 5\tDIAGNOSTICO\tN39.0\nd2\t3 12\tDIAGNOSTICO\tr52\n",
    ],
)
def test_assigned_codes_of_any_layout(tmp_path, text):
    assert tsv.read_assigned_codes(write(tmp_path, text)) == {"n39.0", "r52"}


def test_valid_codes_round_trip(tmp_path):
    path = tmp_path / "codes.tsv"
    tsv.write_valid_codes(["A00.0", "0DT70ZZ"], path)
    assert tsv.read_valid_codes(path) == {"a00.0", "0dt70zz"}


def as_rows(columns):
    return sorted(
        zip(
            (columns.documents[d] for d in columns.document.tolist()),
            (columns.codes[c] for c in columns.code.tolist()),
            columns.start.tolist(),
            columns.end.tolist(),
            strict=True,
        )
    )


def read_both(path):
    """What the bulk (columns) and the exact (one object per line) readers make of one file: rows or the error."""
    results = []
    for read in (columns_reader.read_predicted_columns, tsv.read_predicted_references):
        try:
            value = read(path)
        except InputError as error:
            results.append(str(error))
            continue
        if isinstance(value, list):
            value = sorted((r.doc_id, r.code.lower(), *r.fragments[0]) for r in value)
        else:
            value = as_rows(value)
        results.append(value)
    return results


# pieces of lines that are valid, odd or wrong, for the bulk reader and the exact one to agree on
FIELDS = st.sampled_from(
    ["d1", "D1", "S0004-06142005000500011-1", "a01.0", "A01.0", "0DT70ZZ", "abcdefghijklmnopq", "10 20", "-3 5",
     "5 -3", "-0 -0", "007 08", "99999999 1", "123456789 1", "123456789012345678 -1", "1 2 3", "1  2", " 1 2",
     "1 2 ", "--1 2", "1- 2", "1 2-", "1.5 2", "+1 2", "x", "", "é", "d\u00a0", "\u0663 2", "\x00", "a\x00", "\x7f",
     "DIAGNOSTICO", "lab el", "\x0b", "\x1c", "ñ"]
)  # fmt: skip
LINES = st.lists(st.lists(FIELDS, min_size=3, max_size=5).map("\t".join), max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    LINES,
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.sampled_from(["", "\ufeff"]),
    st.booleans(),
    st.sampled_from([columns_reader._CHUNK, 1, 24]),
)
def test_the_bulk_reader_reads_what_the_exact_reader_reads(lines, newline, bom, last_newline, chunk):
    """Whole files and files read a few lines a chunk (the last chunk, with or without the file's last line end)."""
    text = bom + newline.join(lines) + (newline if last_newline else "")
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(columns_reader, "_CHUNK", chunk):
        path = Path(folder) / "pred.tsv"
        path.write_bytes(text.encode("utf-8"))
        bulk, exact = read_both(path)
    assert bulk == exact


def test_the_bulk_reader_on_many_lines_names_the_first_bad_one(tmp_path):
    lines = [
        f"S{d:04d}-1\t{i} {i + 9}\tDIAGNOSTICO\t{'A01.0' if i % 3 else 'b02.1'}" for d in range(30) for i in range(3000)
    ]
    path = write(tmp_path, "\n".join(lines) + "\n")
    columns = columns_reader.read_predicted_columns(path)
    assert (len(columns.documents), sorted(columns.codes), len(columns.start)) == (30, ["a01.0", "b02.1"], 90_000)
    assert as_rows(columns)[:2] == [("S0000-1", "a01.0", 1, 10), ("S0000-1", "a01.0", 2, 11)]
    lines[70_000] = lines[70_000].replace("\t", " ", 1)
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"line 70001: expected 4 tab-separated fields"):
        columns_reader.read_predicted_columns(path)


def test_offsets_beyond_64_bits_are_named(tmp_path):
    path = write(tmp_path, "d1\t1 2\tD\ta01.0\nd1\t1 99999999999999999999\tD\ta01.0\n")
    with pytest.raises(InputError, match="line 2: predicted span has an offset beyond 64-bit integers"):
        columns_reader.read_predicted_columns(path)


def test_gold_columns_span_references_by_their_pieces(tmp_path):
    path = write(tmp_path, "d1\tD\tA01.0\tref\t30 40;5 9\nd2\tP\tbw40zzz\tref\t1 2\n")
    covering = columns_reader.read_reference_columns(path)
    listed = columns_reader.read_reference_columns(path, listed=True)
    assert (covering.documents, covering.codes) == (["d1", "d2"], ["a01.0", "bw40zzz"])
    assert (covering.start.tolist(), covering.end.tolist()) == ([5, 1], [40, 2])
    assert (listed.start.tolist(), listed.end.tolist()) == ([30, 1], [9, 2])
    path = write(tmp_path, "d1\tD\tA01.0\tref\t1 2;1234567890123456789 1234567890123456790\n")
    with pytest.raises(InputError, match=r"line 1: reference position .* has an offset of more than 18 digits"):
        columns_reader.read_reference_columns(path)
