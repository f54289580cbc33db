"""Bad input, class by class, through every command that reads it: one line naming the file, exit status 2.

The fuzz test (tests/fuzz) throws these classes at every reader and checks the shape of the outcome; these
tests check what the line says, and the cases the issue named.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from nlpbench.files import MAX_LINE
from tests.cli.errors import one_line_error
from tests.conformance.i2b2_cases import GOLD, TEXT, xml
from tests.fuzz.cases import CASES, write_seeds
from tests.runner.unprivileged import Unprivileged


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return write_seeds(tmp_path_factory.mktemp("seeds"))


def filled(argv, folder):
    return [str(folder / word[1:-1]) if word.startswith("{") else word for word in argv]


def copied(case, seeds, folder):
    folder.mkdir()
    for name in case.seeds:
        (shutil.copytree if seeds[name].is_dir() else shutil.copy)(seeds[name], folder / name)


def _loop(path):
    path.symlink_to(path.name)


def _folder(path):
    path.mkdir()


def _under_a_file(path):
    (path.parent / "a-file").write_text("")
    path.symlink_to("a-file/inside")


def _dangling(path):
    path.symlink_to("nowhere")


OS_ERRORS = [
    ("a loop of symbolic links", _loop, "too many levels of symbolic links (a loop?)"),
    ("a directory", _folder, "is a directory, not a file"),
    ("a path under a file", _under_a_file, "a part of the path is not a directory"),
    ("a dangling symbolic link", _dangling, "no such file"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_an_os_error_on_any_input_is_one_line_naming_it(cli, case, seeds, tmp_path):
    """Every file a command reads, replaced by a path the system cannot open as a file."""
    for number, name in enumerate(case.seeds):
        for kind, (description, make, reason) in enumerate(OS_ERRORS):
            folder = tmp_path / f"{number}-{kind}"
            copied(case, seeds, folder)
            target = folder / name
            if target.is_dir():  # a folder of notes: break one file in it
                target = sorted(target.iterdir())[0]
            if description == "a directory" and seeds[name].is_dir():
                continue  # a folder where a folder is read is no error
            (shutil.rmtree if target.is_dir() else os.unlink)(target)
            make(target)
            message = one_line_error(cli(*filled(case.argv, folder)))
            assert reason in message and str(folder) in message, f"{case.name}, {name} as {description}: {message}"


def test_an_unreadable_file_is_one_line_not_a_usage_panel(seeds, tmp_path):
    """Mode 000 as an unprivileged user: Typer's own check printed a five-line usage panel."""
    runner = Unprivileged.ready(tmp_path / "home")
    for case in [c for c in CASES if not c.name.startswith("score-linking-omin")][::3]:
        folder = runner.base / case.name
        copied(case, seeds, folder)
        for path in [folder, *folder.rglob("*")]:
            runner.own(path)
        unreadable = folder / case.seeds[0]
        if unreadable.is_dir():
            unreadable = sorted(unreadable.iterdir())[0]
        unreadable.chmod(0)
        done = runner.nlpbench(*filled(case.argv, folder))
        assert (done.returncode, done.stderr) == (2, f"nlpbench: error: {unreadable}: permission denied\n"), case.name


def test_bytes_that_are_not_utf8_inside_a_record_or_a_timeline(cli, seeds, tmp_path):
    records = tmp_path / "records.json"
    records.write_bytes(seeds["records.json"].read_bytes().replace(b'"2020-01-02"', b'"2020-01-\xff2"', 1))
    assert one_line_error(cli("validate", "--format", "sandbox", records)).startswith(f"{records}: record 0: not UTF-8")
    gold = tmp_path / "timelines.json"
    gold.write_bytes(seeds["timelines.json"].read_bytes().replace(b"taxol", b"tax\xffol", 1))
    score = ("score", "timelines", "-g", gold, "-p", seeds["timelines-pred.json"], "--all-ids", seeds["ids.txt"])
    assert one_line_error(cli(*score, "--mode", "strict")).startswith(f"{gold}: ")


def test_a_byte_order_mark_on_a_conll_prediction_changes_nothing(cli, seeds, tmp_path):
    marked = tmp_path / "pred.txt"
    marked.write_bytes(b"\xef\xbb\xbf" + seeds["conll.txt"].read_bytes())
    plain = cli("score", "ner", "-g", seeds["conll.txt"], "-p", seeds["conll.txt"], "-f", "json")
    with_bom = cli("score", "ner", "-g", seeds["conll.txt"], "-p", marked, "-f", "json")
    assert with_bom.exit_code == 0, with_bom.stderr
    assert json.loads(with_bom.stdout)["scores"] == json.loads(plain.stdout)["scores"]


def test_a_conll2012_key_of_one_huge_line_is_refused_before_it_is_parsed(cli, seeds, tmp_path):
    key = tmp_path / "key.conll"
    key.write_text("#begin document (d); part 000\nd 0 0 w " + "(1)" * (MAX_LINE // 3 + 1) + "\n#end document\n")
    result = cli("score", "coref", "-k", key, "-r", seeds["key.conll"])
    assert one_line_error(result) == f"{key}: line 2: a line longer than {MAX_LINE:,} characters"


def test_a_coreference_response_in_another_format_is_an_error_naming_the_format(cli, seeds):
    result = cli("score", "coref", "-k", seeds["key.conll"], "-r", seeds["coref.jsonl"])
    assert one_line_error(result) == (
        f"{seeds['coref.jsonl']}: no #begin document line: not CoNLL-2012 (1 lines, none inside a document)"
    )


EMPTY_GOLD = [
    ("score-sandbox-records", "bundles.json", '{"patient_bundles": []}', "notes"),
    ("score-ner-jsonl", "ner.jsonl", "", "documents"),
    ("score-ner-conll", "conll.txt", "\n", "documents"),
    ("score-linking-jsonl", "links-gold.jsonl", "", "documents"),
    (
        "score-relations-omin",
        "re.csv",
        "id,subject,subject_type,relation,relation_type,object,object_type\n",
        "documents",
    ),
    ("score-coref-conll", "key.conll", "", "documents"),
    ("score-coref-jsonl", "coref.jsonl", "", "documents"),
    ("score-codiesp-d", "gold-d.tsv", "", "codes"),
    ("score-codiesp-x", "gold-x.tsv", "\n", "codes"),
]


@pytest.mark.parametrize(("name", "seed", "content", "unit"), EMPTY_GOLD, ids=[row[0] for row in EMPTY_GOLD])
def test_an_empty_gold_is_an_error_in_every_task(cli, seeds, tmp_path, name, seed, content, unit):
    (case,) = [c for c in CASES if c.name == name]
    copied(case, seeds, tmp_path / "in")
    gold = tmp_path / "in" / seed
    gold.write_text(content)
    argv = filled(case.argv, tmp_path / "in")
    assert one_line_error(cli(*argv)) == f"{gold}: the gold holds no {unit}: there is nothing to score against"


def test_an_empty_gold_folder_and_timeline(cli, seeds, tmp_path):
    (tmp_path / "gold").mkdir()
    result = cli("score", "i2b2", "-g", tmp_path / "gold", "-p", seeds["i2b2"])
    assert one_line_error(result) == f"{tmp_path / 'gold'}: the gold holds no notes: there is nothing to score against"
    gold, ids = tmp_path / "t.json", tmp_path / "ids.txt"
    gold.write_text("{}")
    ids.write_text("")
    result = cli("score", "timelines", "-g", gold, "-p", gold, "--all-ids", ids, "--mode", "strict")
    assert one_line_error(result) == f"{gold}: the gold holds no patients: there is nothing to score against"


@pytest.mark.parametrize("extra", [2, 7])
def test_notes_without_a_gold_file_are_named_by_their_files(cli, tmp_path, extra):
    for side in ("system", "gold"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "100-01.xml").write_text(xml(TEXT, GOLD), encoding="utf-8")
    for number in range(extra):
        (tmp_path / "system" / f"{200 + number}-01.xml").write_text(xml(TEXT, GOLD), encoding="utf-8")
    result = cli("score", "i2b2", "-p", tmp_path / "system", "-g", tmp_path / "gold", "-f", "json")
    (warning,) = [w for w in json.loads(result.stdout)["warnings"] if "have no gold file" in w]
    named = ", ".join(f"{200 + number}-01.xml" for number in range(min(extra, 5)))
    assert warning == f"{extra} notes from the system have no gold file ({named}{', …' * (extra > 5)}): not scored"
