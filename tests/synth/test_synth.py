"""Synthetic notes: determinism, valid gold, every format, the shipped dataset, the CLI."""

import json
import tomllib
from collections import Counter
from datetime import date
from importlib import resources
from importlib.metadata import version

import pytest

from nlpbench import formats
from nlpbench.annotators.dateformat import render
from nlpbench.synth import EMBEDDED_NOTES, EMBEDDED_SEED, dump, embedded, embedded_header, generate
from nlpbench.synth.templates import NOTE_TYPES
from tests.conftest import ROOT
from tests.formats.helpers import spans_and_types


@pytest.fixture(scope="module")
def notes():
    return list(generate(40, seed=11))


def test_same_seed_same_bytes_other_seed_other_notes(tmp_path):
    assert dump(generate(10, 3), 3, 10) == dump(generate(10, 3), 3, 10)
    assert dump(generate(10, 3), 3, 10) != dump(generate(10, 4), 4, 10)
    assert [d.text for d in generate(3, 3)] == [d.text for d in generate(10, 3)][:3]


def test_gold_spans_fit_their_text(notes):
    for note in notes:
        assert note.span_problem() is None
        assert all(a.text == note.text[a.start : a.end] for a in note.annotations)


def test_every_type_subtype_kind_and_hard_negative_occurs(notes):
    labels = Counter(a.label for n in notes for a in n.annotations)
    assert {"date", "person_name", "location", "id", "contact", "profession", "age"} <= set(labels)
    subtypes = {
        (a.label, v) for n in notes for a in n.annotations for k, v in a.attributes.items() if k != "dateFormat"
    }
    for expected in [("location", t) for t in ("hospital", "department", "street", "city", "state", "zip", "room")]:
        assert expected in subtypes
    for expected in [("id", "medical_record"), ("id", "account"), ("contact", "phone"), ("contact", "fax")]:
        assert expected in subtypes
    assert {("person_name", "patient"), ("person_name", "doctor")} <= subtypes
    assert {n.metadata["kind"] for n in notes} == set(NOTE_TYPES)
    text = "\n".join(n.text for n in notes)
    for negative in ("5/325 mg", "Parkinson's disease", "Foley catheter", "Strength 5/5"):
        assert negative.lower() in text.lower()
    assert any(n.text.isupper() for n in notes) or any("\t" in n.text for n in notes)


def test_date_formats_are_what_the_text_shows(notes):
    for note in notes:
        for annotation in note.of_label("date"):
            assert annotation.attributes["dateFormat"]
    assert render(date(2069, 3, 3), "MMMM Do, YYYY") == ("March 3rd, 2069", "MMMM Do, YYYY")
    assert render(date(2069, 12, 5), "M/D/YYYY") == ("12/5/2069", "MM/D/YYYY")
    assert render(date(2069, 5, 1), "MMM D") == ("May 1", "MMMM D")


@pytest.mark.parametrize("name", formats.names())
def test_round_trip_through_every_format(tmp_path, notes, name):
    if name == "sandbox-response":
        documents, target = notes[:1], tmp_path / "note.json"
    else:
        documents, target = notes[:5], tmp_path / ("out.json" if name.startswith("sandbox") else "out")
    if name.startswith("conll"):  # CoNLL sentences are lines: an entity cannot span a line break
        documents = [d for d in notes if not any("\n" in a.text for a in d.annotations)][:5]
    if name.startswith("sandbox"):
        documents = [
            type(d)(d.id, d.text, [a for a in d.annotations if a.label not in ("age", "profession")]) for d in documents
        ]
    with pytest.warns() if name == "brat" else _nothing():
        formats.get(name).write(documents, target)
    back = list(formats.get(name).read(target))
    assert len(back) == len(documents)
    for original, read in zip(documents, back, strict=True):
        if read.text is not None:
            assert "".join(read.text.split()) == "".join(original.text.split())
        assert _spans(read, name) == _spans(original, name)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _spans(document, name):
    """What a format keeps: spans, labels and subtypes; CoNLL rebuilds the text, so there the words and labels."""
    if name.startswith("conll"):
        return sorted((" ".join(a.span.covered_text(document.text).split()), a.label) for a in document.annotations)
    kept = spans_and_types(document)
    dropped = {"i2b2": lambda key, value: key == "dateFormat", "brat": lambda key, value: " " in value}.get(name)
    if dropped:  # i2b2 XML has no dateFormat; brat attribute values cannot hold spaces
        return sorted((parts, label, tuple(kv for kv in typed if not dropped(*kv))) for parts, label, typed in kept)
    return kept


def test_embedded_dataset_is_shipped_and_reproducible():
    documents = embedded()
    header = embedded_header()
    assert len(documents) == EMBEDDED_NOTES >= 300
    assert header == {"seed": EMBEDDED_SEED, "notes": EMBEDDED_NOTES, "faker": header["faker"]}
    assert all(d.span_problem() is None for d in documents)
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert f"faker=={header['faker']}" in test_extra  # the test extra pins the Faker the set was made with
    if header["faker"] != version("faker"):
        pytest.skip(f"Faker {version('faker')} installed; the dataset was made with Faker {header['faker']}: "
                    "pip install -e '.[test]' installs it")  # fmt: skip
    shipped = (resources.files("nlpbench.synth") / "data" / "embedded.jsonl.gz").read_bytes()
    assert dump(generate(EMBEDDED_NOTES, EMBEDDED_SEED), EMBEDDED_SEED, EMBEDDED_NOTES) == shipped


def test_cli_writes_the_same_file_for_the_same_seed(cli, tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    result = cli("synth", "--notes", "6", "--seed", "5", "--format", "sandbox-bundles", first)
    assert result.exit_code == 0, result.output
    assert "wrote 6 notes" in result.stdout and "profession and age annotations left out" in result.stdout
    cli("synth", "--notes", "6", "--seed", "5", second)
    assert first.read_bytes() == second.read_bytes()
    bundles = json.loads(first.read_text())["patient_bundles"]
    assert sum(len(b["note_bundles"]) for b in bundles) == 6


def test_cli_i2b2_keeps_profession_and_age_and_embedded_writes_300(cli, tmp_path):
    result = cli("synth", "-n", "3", "-s", "1", "-f", "i2b2", tmp_path / "xml")
    assert result.exit_code == 0 and "age" in result.stdout
    assert len(list((tmp_path / "xml").glob("*.xml"))) == 3
    result = cli("synth", "--embedded", tmp_path / "embedded.json")
    assert result.exit_code == 0 and f"wrote {EMBEDDED_NOTES} notes" in result.stdout


def test_cli_bad_format_is_one_line_error(cli, tmp_path):
    result = cli("synth", "-f", "nope", tmp_path / "x")
    assert result.exit_code == 2 and "unknown format 'nope'" in result.stderr
