from nlpbench import formats
from tests.formats.helpers import note, spans_and_types


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
