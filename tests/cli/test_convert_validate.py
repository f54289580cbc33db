import json
import shutil

import pytest

from nlpbench import formats
from tests.cli.errors import one_line_error
from tests.formats.helpers import note, spans_and_types
from tests.fuzz.cases import CASES, write_seeds


def test_round_trip_i2b2_sandbox_brat_bioc_keeps_every_span_and_type(cli, tmp_path):
    formats.get("i2b2").write([note("n1"), note("n2")], tmp_path / "xml")
    steps = [
        ("i2b2", tmp_path / "xml", "sandbox-bundles", tmp_path / "bundles.json"),
        ("sandbox", tmp_path / "bundles.json", "brat", tmp_path / "brat"),
        ("brat", tmp_path / "brat", "bioc", tmp_path / "c.xml"),
        ("bioc", tmp_path / "c.xml", "bioc", tmp_path / "c.json"),
        ("bioc", tmp_path / "c.json", "i2b2", tmp_path / "back"),
    ]
    for source_format, source, target_format, target in steps:
        result = cli("convert", "--from", source_format, "--to", target_format, source, target)
        assert result.exit_code == 0, result.stderr
        assert "wrote 2 documents, 14 annotations" in result.stdout
    back = list(formats.get("i2b2").read(tmp_path / "back"))
    assert [spans_and_types(d) for d in back] == [spans_and_types(note("n1")), spans_and_types(note("n2"))]
    assert [d.text for d in back] == [note().text] * 2


def test_sandbox_records_need_a_text_dir_for_brat(cli, tmp_path):
    formats.get("sandbox").write([note("n1")], tmp_path / "records.json")
    failed = cli("convert", "--from", "sandbox", "--to", "brat", tmp_path / "records.json", tmp_path / "brat")
    assert failed.exit_code == 2 and "brat needs the note text" in failed.stderr
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "n1.txt").write_text(note().text)
    ok = cli("convert", "--from", "sandbox", "--to", "brat", "--text-dir", tmp_path / "texts",
             tmp_path / "records.json", tmp_path / "brat")  # fmt: skip
    assert ok.exit_code == 0, ok.stderr


def test_validate_checks_spans_against_texts(cli, tmp_path):
    formats.get("sandbox").write([note("n1")], tmp_path / "records.json")
    unchecked = cli("validate", "--format", "sandbox", tmp_path / "records.json")
    assert unchecked.exit_code == 0
    assert "1 documents carry no text" in unchecked.stdout
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "n1.txt").write_text(note().text.replace("Seattle", "Tacoma!"))
    failed = cli("validate", "--format", "sandbox", "--text-dir", tmp_path / "texts", tmp_path / "records.json")
    assert failed.exit_code == 2
    assert (
        "document n1: annotation 3 (location) at 57-64: its text (7 characters) differs from the note's (7 characters)"
        in failed.stderr
    )


def test_formats_and_profiles_are_listed(cli):
    assert "i2b2" in cli("formats").stdout
    listing = cli("profiles", "sandbox").stdout
    assert "nlpsandbox-legacy" in listing and "collapse_by_start" in listing


# --- hostile and odd input: one line, exit 2, or a counted warning; never a traceback or note text ---------------

CANARY = "Zqxcanary"


def test_deep_nesting_is_one_line_in_every_json_reader(cli, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 200_000)
    line = tmp_path / "deep.jsonl"
    line.write_text('{"id": "a", "text": "x", "entities": ' + "[" * 50_000 + "\n")
    timelines = tmp_path / "timelines.json"
    timelines.write_text('{"p1": ' + "[" * 50_000)
    bioc = tmp_path / "deep.bioc.json"
    bioc.write_bytes(b"[" * 200_000)
    runs = [
        ("validate", "--format", "sandbox", deep),
        ("score", "sandbox", "-g", deep, "-p", deep, "--annotation-type", "date"),
        ("validate", "--format", "jsonl", line),
        ("validate", "--format", "bioc", bioc),
        ("score", "coref", "-k", line, "-r", line, "--key-format", "jsonl"),
        ("validate", "--format", "timelines", timelines),
    ]
    for args in runs:
        assert "JSON nested deeper than 128 levels" in one_line_error(cli(*args))


def test_a_huge_line_is_quoted_in_at_most_80_characters(cli, tmp_path):
    conll = tmp_path / "big.conll"
    conll.write_text("John B-PER\n" + "x" * 1_000_000 + "\n")
    message = one_line_error(cli("validate", "--format", "conll", conll))
    assert "got one field (1000000 characters)" in message and len(message) < 300
    conll.write_text("John Z-" + "Q" * 1_000_000 + "x\n")
    assert len(one_line_error(cli("validate", "--format", "conll", conll))) < 300


def test_timelines_unknown_labels_are_counted_and_a_repeated_patient_is_an_error(cli, tmp_path):
    gold, pred, ids = tmp_path / "gold.json", tmp_path / "pred.json", tmp_path / "ids.txt"
    gold.write_text('{"p1": [["taxol", "contains-1", "2013-01-02"]]}')
    pred.write_text('{"p1": [["taxol", "contains-1", "2013-01-02"], ["taxol", "given-on", "2013-01-02"]]}')
    ids.write_text("p1\n")
    scored = cli("score", "timelines", "-g", gold, "-p", pred, "--all-ids", ids, "--mode", "strict")
    assert scored.exit_code == 0
    assert "1 tuples whose label is not contains-1, begins-on, ends-on" in scored.stderr
    assert "(first: patient p1, tuple 1: 'given-on')" in scored.stderr
    validated = cli("validate", "--format", "timelines", pred)
    assert validated.exit_code == 0
    assert validated.stdout == f"{pred}: 1 patients, 1 contains-1, 1 given-on\n"
    assert "1 tuples whose label is not" in validated.stderr
    pred.write_text('{"p1": [["taxol", "contains-1", "2013-01-02"]], "p1": []}')
    for args in (("score", "timelines", "-g", gold, "-p", pred, "--all-ids", ids, "--mode", "strict"),
                 ("validate", "--format", "timelines", pred),
                 ("convert", pred, tmp_path / "out.json", "--from", "timelines", "--to", "timelines")):  # fmt: skip
        assert one_line_error(cli(*args)) == f"{pred}: top level: an object repeats the key 'p1'"


def _record(note_id: str, arrays: str) -> str:
    return '{"annotationSource": {"resourceSource": {"name": "notes/' + note_id + '"}}, ' + arrays + "}"


DATE = '{"start": 0, "length": 4, "text": "2020"}'


def _bundle(text: str) -> str:
    return json.dumps(
        {
            "patient_bundles": [
                {
                    "patient": {"identifier": "p1"},
                    "note_bundles": [
                        {
                            "note": {"identifier": "n1", "text": text, "type": ""},
                            "annotation": {"textDateAnnotations": []},
                        }
                    ],
                }
            ]
        }
    )


def test_predictions_are_checked_against_the_gold_text_without_quoting_it(cli, tmp_path):
    gold, pred = tmp_path / "gold.json", tmp_path / "pred.json"
    gold.write_text(_bundle(f"2020 {CANARY} was seen."))
    wrong = f'{{"start": 5, "length": 9, "text": "{CANARY[::-1]}"}}'
    pred.write_text("[\n" + _record("n1", f'"textDateAnnotations": [{wrong}]') + "\n]\n")
    scored = cli("score", "sandbox", "-g", gold, "-p", pred, "--annotation-type", "date", "--format", "json")
    assert scored.exit_code == 0
    assert (
        "1 predicted annotations whose text differs from what the gold note's text covers at their offsets, scored "
        "by their offsets (first: note n1, annotation at 5-14 (9 characters))" in scored.stderr
    )
    assert CANARY not in scored.stderr + scored.stdout and CANARY[::-1] not in scored.stderr
    past = f'{{"start": 20, "length": 9, "text": "{CANARY}"}}'
    pred.write_text("[\n" + _record("n1", f'"textDateAnnotations": [{past}]') + "\n]\n")
    message = one_line_error(cli("score", "sandbox", "-g", gold, "-p", pred, "--annotation-type", "date"))
    assert message == f"{pred}: note n1, annotation at 20-29: ends beyond the gold note's text (24 characters)"
    bundle = json.loads(_bundle(f"2020 {CANARY} was seen."))
    bundle["patient_bundles"][0]["note_bundles"][0]["annotation"]["textDateAnnotations"] = [json.loads(wrong)]
    gold.write_text(json.dumps(bundle))
    message = one_line_error(cli("validate", "--format", "sandbox", gold))
    assert "date) at 5-14: its text (9 characters) differs from the note's (9 characters)" in message
    assert CANARY not in message and CANARY[::-1] not in message


def test_coref_one_column_lines_are_reported_and_a_bom_changes_nothing(cli, tmp_path):
    key = tmp_path / "key.conll"
    key.write_text("#begin document d1\nd1 0 0 John (1)\nd1 0 1 him (1)\n\n#end document\n")
    one_column = tmp_path / "one.conll"
    one_column.write_text("#begin document d1\nJohn\nhim\n\n#end document\n")
    scored = cli("score", "coref", "-k", key, "-r", one_column)
    assert scored.exit_code == 0
    assert f"{one_column}: document d1: token lines of one column, read as the coreference column" in scored.stderr
    assert "(a file without that column has no mentions): 2" in scored.stderr
    bom = tmp_path / "bom.conll"
    bom.write_bytes(b"\xef\xbb\xbf" + key.read_bytes())
    plain = cli("score", "coref", "-k", key, "-r", key, "--format", "json")
    with_bom = cli("score", "coref", "-k", key, "-r", bom, "--format", "json")
    assert with_bom.exit_code == 0 and with_bom.stderr == ""
    assert json.loads(with_bom.stdout)["scores"] == json.loads(plain.stdout)["scores"]


def test_brat_repeated_ids_dangling_relations_and_dropped_relations(cli, tmp_path):
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "d.txt").write_text("John lives in Paris.")
    ann = folder / "d.ann"
    ann.write_text("T1\tPER 0 4\tJohn\nT1\tPER 0 4\tJohn\n")
    assert (
        one_line_error(cli("validate", "--format", "brat", folder))
        == f"{ann}: line 2: id T1 was already given at line 1"
    )
    ann.write_text("T1\tPER 0 4\tJohn\nR1\tlives_in Arg1:T1 Arg2:T9\n")
    message = one_line_error(cli("validate", "--format", "brat", folder))
    assert message == f"{ann}: line 2: the relation's Arg2 T9 is no T annotation of the file"
    ann.write_text(
        "T1\tPER 0 4\tJohn\nT2\tLOC 14 19\tParis\nR1\tlives_in Arg1:T1 Arg2:T2\nN1\tReference T2 Wikidata:Q90\n"
    )
    converted = cli("convert", folder, tmp_path / "out.json", "--from", "brat", "--to", "sandbox")
    assert converted.exit_code == 0
    assert f"{tmp_path / 'out.json'}: sandbox cannot hold them: left out 1 relations and 1 links" in converted.stderr


def test_ner_and_linking_jsonl_fields_are_required_and_typed(cli, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "d1", "text": "John"}\n')
    message = one_line_error(cli("score", "ner", "-g", gold, "-p", gold, "--gold-format", "jsonl"))
    assert message == f"{gold}: line 1: no 'entities' (write 'entities': [] for a document without any)"
    links, pred = tmp_path / "links.jsonl", tmp_path / "pred.jsonl"
    links.write_text('{"id": "d1", "entities": [{"mention": "FUEL TANK", "qid": "Q1"}]}\n')
    pred.write_text('{"id": "d1", "entities": [{"mention": "FUEL TANK", "qid": "Q1", "alternatives": "x"}]}\n')
    message = one_line_error(cli("score", "linking", "-g", links, "-p", pred, "--gold-format", "jsonl"))
    assert message == f"{pred}: line 1: entity 0: alternatives must be a list"
    pred.write_text('{"id": "d1", "entities": [{"mention": "FUEL TANK", "qid": "Q1", "alternatives": [{}]}]}\n')
    scored = cli("score", "linking", "-g", links, "-p", pred, "--gold-format", "jsonl")
    assert scored.exit_code == 0 and "1 predicted entities list alternatives" in scored.stderr


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return write_seeds(tmp_path_factory.mktemp("seeds"))


@pytest.mark.parametrize("case", [c for c in CASES if c.argv[0] == "validate"], ids=lambda c: c.name)
def test_a_byte_order_mark_is_accepted_by_every_reader(cli, seeds, tmp_path, case):
    fmt, (seed,) = case.argv[2], case.seeds
    plain = cli("validate", "--format", fmt, seeds[seed])
    assert plain.exit_code == 0, plain.stderr
    copy = tmp_path / seed
    (shutil.copytree if seeds[seed].is_dir() else shutil.copy)(seeds[seed], copy)
    for path in sorted(copy.iterdir()) if copy.is_dir() else [copy]:
        if path.suffix != ".txt":  # a note's text keeps its byte order mark: its offsets count it
            path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    marked = cli("validate", "--format", fmt, copy)
    assert marked.exit_code == 0, marked.stderr
    assert marked.stdout.replace(str(copy), "") == plain.stdout.replace(str(seeds[seed]), "")


def test_bytes_that_are_not_utf8_and_lone_surrogates_are_one_line(cli, tmp_path):
    surrogate = tmp_path / "s.jsonl"
    surrogate.write_text('{"id": "d", "text": "ab\\ud800", "entities": []}\n')
    message = one_line_error(cli("convert", surrogate, tmp_path / "brat", "--from", "jsonl", "--to", "brat"))
    assert message.startswith(f"{surrogate}: line 1: malformed JSON")
    timelines = tmp_path / "t.json"
    timelines.write_bytes(b'{"p1": [["taxol\xff", "contains-1", "2013"]]}')
    assert one_line_error(cli("validate", "--format", "timelines", timelines)).startswith(f"{timelines}: not UTF-8")
    timelines.write_text('{"p1": [["taxol\\udc00", "contains-1", "2013"]]}')
    convert = ("convert", timelines, tmp_path / "out.json", "--from", "timelines", "--to", "timelines")
    assert one_line_error(cli(*convert)).startswith(f"{timelines}: malformed JSON")
