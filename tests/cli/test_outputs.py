"""Nothing lost: every command writes its output whole or not at all, and never over one of its inputs.

An input is known by device and inode, not by spelling: ``x/../x/gold.json``, a symbolic link and a hard
link to it are the same file. A refused output is one line, exit status 2, and the input's bytes are as
they were.
"""

from __future__ import annotations

import os
import socket
import stat

import pytest

from nlpbench import formats
from nlpbench.model import Annotation, Document, Span
from tests.cli.errors import one_line_error
from tests.cli.test_annotate_command import write_notes

TEXT = "Seen 2020-01-02 by Dr. John Lee in Paris."


def document(doc_id: str = "n1") -> Document:
    annotations = [Annotation(doc_id, Span(5, 15), "date", "2020-01-02", {"dateFormat": "YYYY-MM-DD"})]
    return Document(doc_id, TEXT, annotations, metadata={"patientId": "p-1"})


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.json"
    formats.get("sandbox").write([document()], path)
    return path


def spellings(path):
    """The same file as ``path`` three other ways: through ``..``, a symbolic link and a hard link."""
    folder = path.parent
    symbolic, hard = folder / "symbolic.json", folder / "hard.json"
    symbolic.symlink_to(path.name)
    os.link(path, hard)
    return [folder / ".." / folder.name / path.name, symbolic, hard]


def refused(result, target, option, source) -> None:
    message = one_line_error(result)
    assert message.startswith(f"{target}: {option} is the same file as "), message
    assert message.endswith(f"{source}: writing it would lose that input"), message


def no_partials(folder) -> None:
    assert not [name for name in os.listdir(folder) if name.endswith(".partial")]


@pytest.mark.parametrize("to_format", ["sandbox", "conll", "jsonl"])
def test_convert_never_writes_over_its_source(cli, gold, to_format):
    before = gold.read_bytes()
    for target in [gold, *spellings(gold)]:
        result = cli("convert", "--from", "sandbox", "--to", to_format, gold, target)
        refused(result, target, "TARGET", f"SOURCE {gold}")
        assert gold.read_bytes() == before
    no_partials(gold.parent)


def test_convert_never_writes_over_a_text_it_reads(cli, tmp_path):
    """brat writes <id>.txt: into the --text-dir it reads them from, that would replace the notes."""
    records, texts = tmp_path / "records.json", tmp_path / "texts"
    formats.get("sandbox").write([document()], records)
    texts.mkdir()
    (texts / "n1.txt").write_text(TEXT)
    refused(cli("convert", "--from", "sandbox", "--to", "brat", "--text-dir", texts, records, texts),
            texts, "TARGET", f"--text-dir {texts}")  # fmt: skip
    assert (texts / "n1.txt").read_text() == TEXT
    elsewhere = tmp_path / "elsewhere"
    elsewhere.symlink_to(texts)
    result = cli("convert", "--from", "sandbox", "--to", "brat", "--text-dir", texts, records, elsewhere)
    refused(result, elsewhere, "TARGET", f"--text-dir {texts}")


def test_a_file_read_inside_a_folder_is_not_replaced(cli, tmp_path):
    """brat into the brat folder it reads: refused before the first file is replaced."""
    folder = tmp_path / "brat"
    formats.get("brat").write([document()], folder)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    result = cli("convert", "--from", "brat", "--to", "brat", folder, tmp_path / "." / "brat")
    refused(result, tmp_path / "." / "brat", "TARGET", f"SOURCE {folder}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.link(folder / "n1.txt", elsewhere / "n1.txt")  # a hard link to a note read from the folder
    message = one_line_error(cli("convert", "--from", "brat", "--to", "brat", folder, elsewhere))
    assert message == (
        f"{elsewhere / 'n1.txt'}: the same file as the input {folder / 'n1.txt'}: writing it would lose that input"
    )
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    no_partials(folder)
    no_partials(elsewhere)


def test_convert_that_fails_half_way_leaves_the_old_target_whole(cli, tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.json"
    good = '{"id": "a", "text": "John", "entities": [{"start": 0, "end": 4, "label": "PER"}]}'
    source.write_text(good + "\n" + good.replace('"a"', '"b"').replace('"end": 4', '"end": 40') + "\n")
    target.write_text("the previous output")
    target.chmod(0o640)
    result = cli("convert", "--from", "jsonl", "--to", "jsonl", source, target)
    assert "line 2: entity 0 at 0-40" in one_line_error(result)  # after the first document was written
    assert target.read_text() == "the previous output"
    no_partials(tmp_path)
    source.write_text(good + "\n")
    assert cli("convert", "--from", "jsonl", "--to", "jsonl", source, target).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the new file keeps the old one's permissions


def test_score_and_compare_output_is_never_an_input(cli, gold):
    before = gold.read_bytes()
    for target in [gold, *spellings(gold)]:
        score = cli("score", "sandbox", "-g", gold, "-p", gold, "-t", "date", "--output", target)
        refused(score, target, "--output", f"--gold {gold}")
        compare = cli("compare", gold, gold, "-T", "sandbox", "-g", gold, "--output", target, "--", "-t", "date")
        refused(compare, target, "--output", f"A {gold}")
    assert gold.read_bytes() == before
    written = gold.parent / "report.json"
    assert cli("score", "sandbox", "-g", gold, "-p", gold, "-t", "date", "-o", written, "-f", "json").exit_code == 0
    assert '"f1": 1.0' in written.read_text()
    no_partials(gold.parent)


def test_i2b2_official_output_is_never_an_input(cli, tmp_path):
    folder = tmp_path / "gold"
    formats.get("i2b2").write([document("100-01")], folder)
    target = folder / "100-01.xml"
    before = target.read_bytes()
    result = cli("score", "i2b2", "-g", folder, "-p", folder, "--official", "--output", target)
    assert one_line_error(result) == f"{target}: the same file as the input {target}: writing it would lose that input"
    assert target.read_bytes() == before


def test_synth_writes_whole_or_not_at_all_through_a_link(cli, tmp_path, monkeypatch):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real.name)
    assert cli("synth", link, "-n", "2", "-f", "sandbox").exit_code == 0
    assert link.is_symlink() and real.read_text().startswith("[")  # the link stays, the file it names is new
    written = real.read_text()

    def broken(notes, seed):
        yield from formats.get("sandbox").read(real)
        raise KeyboardInterrupt

    monkeypatch.setattr("nlpbench.cli.synth.generate", broken)
    interrupted = cli("synth", real, "-n", "2", "-f", "sandbox")
    assert interrupted.exit_code != 0
    assert real.read_text() == written
    no_partials(tmp_path)


def test_dataset_export_is_never_written_over_the_store(cli, tmp_path, gold):
    store = tmp_path / "store.db"
    db = f"sqlite:///{store}"
    bundles = tmp_path / "bundles.json"
    formats.get("sandbox-bundles").write([document("note-1")], bundles)
    assert cli("dataset", "import", bundles, "-f", "sandbox-bundles", "--name", "example", "--db", db).exit_code == 0
    before = store.read_bytes()
    result = cli("dataset", "export", "example", tmp_path / "." / "store.db", "--db", db)
    refused(result, tmp_path / "." / "store.db", "OUTPUT", f"--db {store}")
    assert store.read_bytes() == before
    assert cli("dataset", "export", "example", tmp_path / "out.json", "--db", db).exit_code == 0


def test_annotate_and_run_never_write_over_the_notes(cli, tmp_path):
    notes = write_notes(tmp_path)
    before = notes.read_bytes()
    hard = tmp_path / "hard.json"
    os.link(notes, hard)
    result = cli("annotate", "--tool", "http://127.0.0.1:9", "--notes", notes, "--out", hard)
    assert one_line_error(result) == f"--output {hard} is --notes too; give it another path"
    out = tmp_path / "run"
    out.mkdir()
    os.link(notes, out / "phi.json")
    result = cli("run", "--notes", notes, "--tool", "phi=http://127.0.0.1:9", "--out", out)
    refused(result, out / "phi.json", "--output", f"--notes {notes}")
    assert notes.read_bytes() == before


def test_demo_never_rebuilds_the_users_own_store(cli, tmp_path, monkeypatch):
    store = tmp_path / "mine" / "nlpbench.db"
    store.parent.mkdir()
    store.write_bytes(b"the user's store")
    monkeypatch.setenv("NLPBENCH_DB", f"sqlite:///{store}")
    result = cli("demo", "--out", tmp_path / "mine", "--no-serve", "--tools", "phi", "--notes", "2")
    refused(result, tmp_path / "mine" / "nlpbench.db", "--output's store", f"the store {store}")
    assert store.read_bytes() == b"the user's store"


def test_demo_on_a_busy_port_fails_before_any_work(cli, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("demo", "--out", tmp_path / "demo", "--port", port, "--tools", "phi")
    assert one_line_error(result).startswith(f"cannot listen on 127.0.0.1:{port}: ")
    assert result.stdout == "" and not (tmp_path / "demo").exists()  # nothing imported, submitted or scored


SAID = [
    "wrote /tmp/report.json",
    "wrote " + "r" * 73,  # 79 characters: written as it is
    "wrote " + "r" * 74,
    "wrote " + "r" * 90,  # Rich wraps it at 80 columns
    "wrote /tmp/a b/" + "long name " * 9,  # wrapped between words
    "wrote :smile:.json",  # an emoji code
    "wrote C:/report.json",
    "wrote /tmp/[b]report[/b].json",  # markup is never read
    "wrote /tmp/é.json",
    "wrote /tmp/tab\there.json",
    "wrote /tmp/trailing ",
]


@pytest.mark.parametrize("columns", [None, "30", "200", "wide"])
@pytest.mark.parametrize("line", SAID)
def test_a_line_said_is_what_rich_prints(line, columns, monkeypatch, capsys):
    """``said`` writes a line itself only when Rich's console would print it unchanged; a line Rich wraps or
    changes is printed by Rich, so every line on standard error is what Rich prints."""
    from nlpbench.cli import common

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    common.stderr.cache_clear()
    common.stderr().print(line, markup=False)
    by_rich = capsys.readouterr().err
    common.stderr.cache_clear()
    common.said(line)
    assert capsys.readouterr().err == by_rich
    common.stderr.cache_clear()
