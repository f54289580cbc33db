"""Start-up: ``nlpbench score TASK`` imports its own task's modules and no other task's; help imports none.

Each run is ``python -m nlpbench …`` in a fresh interpreter, which then lists the
modules it holds (``-X importtime`` would miss those imported with
``importlib.import_module``, as the registries import tasks), so an eager import
anywhere on the way (the command line, the registries, a task, a format) fails
these tests.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nlpbench.python_api import example

#: Each task's own modules: the task, its profiles, its metrics and readers.
OWN = {
    "sandbox": {"nlpbench.tasks.sandbox", "nlpbench.profiles.spans", "nlpbench.metrics.spans"},
    "timelines": {
        "nlpbench.tasks.timelines",
        "nlpbench.profiles.timelines",
        "nlpbench.metrics.timelines",
        "nlpbench.metrics.timex",
        "nlpbench.formats.timelines",
    },
    "codiesp": {
        "nlpbench.tasks.codiesp",
        "nlpbench.profiles.codiesp",
        "nlpbench.metrics.coding",
        "nlpbench.metrics.ranking",
        "nlpbench.formats.codiesp",
    },
    "coref": {
        "nlpbench.tasks.coref",
        "nlpbench.profiles.coref",
        "nlpbench.metrics.coref",
        "nlpbench.metrics.coref_e2e",
        "nlpbench.formats.coref",
    },
    "ner": {"nlpbench.tasks.ner", "nlpbench.profiles.ner", "nlpbench.metrics.ner"},
    "linking": {"nlpbench.tasks.linking", "nlpbench.profiles.linking", "nlpbench.metrics.linking"},
    "relations": {"nlpbench.tasks.relations", "nlpbench.profiles.relations", "nlpbench.metrics.relations"},
    "i2b2": {"nlpbench.tasks.i2b2", "nlpbench.profiles.i2b2", "nlpbench.metrics.deid", "nlpbench.formats.i2b2"},
}
#: What no score command needs: the services, the store, the data frames, the note generator, BioC.
NEVER = {"fastapi", "uvicorn", "sqlalchemy", "pandas", "scipy", "faker", "bioc"} | {
    "nlpbench.store.engine",
    "nlpbench.synth",
}
#: What no one-note score of any task loads: pydantic (Typer's conversion of option values is done without it,
#: :mod:`nlpbench.cli.values`), hashlib (a temporary file's name was drawn by ``secrets``), tempfile (the embedded
#: example's path), Rich (a table that fits is laid out without it), the store and the services (i2b2's XML writer
#: alone imports ``xml.sax.saxutils``, whose ``urllib.request`` loads hashlib, tempfile, ssl and email).
NO_TASK_NEEDS = {"pydantic", "pydantic_core", "hashlib", "tempfile", "rich", "sqlalchemy", "fastapi"}
#: The parts of the model a task reads (:mod:`nlpbench.model` loads each on first use): no other is loaded.
MODEL = {
    "sandbox": {"annotation", "document", "span", "phi", "columns", "align"},
    "timelines": {"timelines"},
    "codiesp": {"coding"},
    "coref": {"coref", "align"},
    "ner": {"annotation", "document", "span", "mention", "tokens", "triple", "align"},
    "linking": {"mention", "ontology", "tokens", "triple", "align"},
    "relations": {"annotation", "document", "span", "mention", "tokens", "triple", "align"},
    "i2b2": {"annotation", "document", "span", "phi", "align"},
}
#: The model's modules every score command loads: PHI types and the code cutoffs and timeline modes of its options,
#: the spans, annotations and documents of the report.
MODEL_SHARED = {"annotation", "document", "span", "phi", "coding", "timelines"}


def imported(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``python -m nlpbench ARGV…`` to its end."""
    script = (
        "import json, runpy, sys\n"
        "sys.argv = ['nlpbench', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('nlpbench', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as stopped:\n    assert stopped.code in (None, 0), stopped.code\n"
        "print('MODULES', json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.rsplit("MODULES ", 1)[1]))


def others(task: str) -> set[str]:
    """The modules of every task but ``task`` that ``task`` does not share."""
    return set().union(*(modules for name, modules in OWN.items() if name != task)) - OWN[task]


def test_scoring_sandbox_imports_its_modules_and_no_other_tasks():
    """The one-note example's table fits on the screen and holds plain texts: it is laid out without Rich; its few
    annotations are counted in plain Python, without numpy."""
    gold, pred = example("gold.json"), example("pred.json")
    loaded = imported("score", "sandbox", "--gold", str(gold), "--pred", str(pred))
    assert OWN["sandbox"] <= loaded
    unwanted = (others("sandbox") | NEVER | {"rich", "numpy", "nlpbench.metrics.span_batch"}) & loaded
    assert not unwanted


def test_scoring_one_note_under_the_official_profile_needs_no_numpy():
    """Treebank tokens are cut one text at a time below a batch: numpy is loaded by batches only."""
    gold, pred = example("gold.json"), example("pred.json")
    loaded = imported("score", "sandbox", "--gold", str(gold), "--pred", str(pred), "--profile", "nlpsandbox")
    assert not ({"numpy", "rich"} & loaded)


def test_scoring_timelines_imports_its_modules_and_no_other_tasks(tmp_path):
    (tmp_path / "gold.json").write_text('{"p1": [["taxol", "contains-1", "2013-02-22"]]}', encoding="utf-8")
    (tmp_path / "pred.json").write_text('{"p1": [["taxol", "contains-1", "2013-02-22"]]}', encoding="utf-8")
    (tmp_path / "ids.txt").write_text("p1\n", encoding="utf-8")
    loaded = imported(
        "score", "timelines", "--gold", str(tmp_path / "gold.json"), "--pred", str(tmp_path / "pred.json"),
        "--all-ids", str(tmp_path / "ids.txt"), "--mode", "strict", "--format", "json",
    )  # fmt: skip
    assert OWN["timelines"] <= loaded
    unwanted = (others("timelines") | NEVER | {"rich", "numpy"}) & loaded
    assert not unwanted


def test_a_report_written_to_a_file_is_said_without_rich(tmp_path, monkeypatch):
    """The ``wrote`` line Rich would print unchanged is written as it is (see tests/cli/test_outputs.py). The
    files are named relative to the test's folder: a line wider than the console is Rich's to wrap, and a
    worker's temporary folder (``…/popen-gw0/test_a_report_written_to_a_fil0/``) made it that wide."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gold.json").write_text('{"p1": [["taxol", "contains-1", "2013-02-22"]]}', encoding="utf-8")
    (tmp_path / "ids.txt").write_text("p1\n", encoding="utf-8")
    loaded = imported(
        "score", "timelines", "--gold", "gold.json", "--pred", "gold.json", "--all-ids", "ids.txt",
        "--mode", "strict", "--format", "json", "--output", "report.json",
    )  # fmt: skip
    assert (tmp_path / "report.json").exists() and not ({"rich", "numpy"} & loaded)


def test_scoring_timelines_in_a_table_needs_neither_rich_nor_numpy(tmp_path):
    """A small JSON file is checked without numpy (it follows a text byte by byte only when it must), and a
    table that fits is laid out without Rich."""
    (tmp_path / "gold.json").write_text('{"p1": [["taxol", "contains-1", "2013-02-22"]]}', encoding="utf-8")
    (tmp_path / "pred.json").write_text('{"p1": [["taxol", "begins-on", "2013-02-22"]]}', encoding="utf-8")
    (tmp_path / "ids.txt").write_text("p1\n", encoding="utf-8")
    loaded = imported(
        "score", "timelines", "--gold", str(tmp_path / "gold.json"), "--pred", str(tmp_path / "pred.json"),
        "--all-ids", str(tmp_path / "ids.txt"), "--mode", "day",
    )  # fmt: skip
    assert OWN["timelines"] <= loaded
    assert not ({"rich", "numpy"} & loaded)


# ``score --help`` is not among them: it lists every task with its summary, so it loads every task
@pytest.mark.parametrize("argv", [["--help"], ["score", "sandbox", "--help"]])
def test_help_imports_no_task_and_no_heavy_library(argv):
    """Help lists every command (``synth`` shows its constants, hence its light package) and parses nothing."""
    loaded = imported(*argv)
    unwanted = ((set().union(*OWN.values()) | NEVER | {"numpy"}) - {"nlpbench.synth"}) & loaded
    assert not unwanted


def test_score_help_lists_every_task_even_those_no_command_was_written_for(cli):
    from nlpbench import tasks

    shown = cli("score", "--help").stdout
    assert all(f" {name} " in shown for name in tasks.load_all()), shown


def test_scoring_a_small_ner_file_needs_no_numpy(tmp_path):
    """A few entities are matched one document at a time in plain Python: numpy and the batch engine are
    loaded by batches of many entities only."""
    line = {"id": "d", "tokens": ["Dr.", "Lee", "saw", "him"], "entities": [{"start": 0, "end": 2, "label": "PER"}]}
    (tmp_path / "ner.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    path = str(tmp_path / "ner.jsonl")
    loaded = imported("score", "ner", "--gold", path, "--pred", path, "--gold-format", "jsonl", "--format", "json")
    assert OWN["ner"] <= loaded
    assert not ((others("ner") | NEVER | {"numpy", "nlpbench.metrics.ner_batch"}) & loaded)


@pytest.mark.parametrize("track", ["D", "X"])
def test_scoring_a_small_codiesp_file_needs_no_numpy(track, tmp_path):
    """Ranked codes are scored in plain Python, and a CodiEsp-X prediction file below
    :data:`~nlpbench.formats.codiesp.SMALL` bytes is read and matched one document at a time: numpy and the
    columns reader are loaded by large prediction files only."""
    if track == "D":
        (tmp_path / "gold.tsv").write_text("S1\tn39.0\nS1\tr52\n", encoding="utf-8")
        (tmp_path / "pred.tsv").write_text("S1\tR52\nS1\tA53.9\n", encoding="utf-8")
    else:
        (tmp_path / "gold.tsv").write_text("S1\tDIAGNOSTICO\tn39.0\tinfección\t10 20;30 35\n", encoding="utf-8")
        pred = "S1\t8 36\tDIAGNOSTICO\tN39.0\nS1\t1 5\tDIAGNOSTICO\tr52\n"
        (tmp_path / "pred.tsv").write_text(pred, encoding="utf-8")
    (tmp_path / "codes.tsv").write_text("N39.0\tdesc\nR52\tdesc\n", encoding="utf-8")
    loaded = imported(
        "score", "codiesp", "--track", track, "--gold", str(tmp_path / "gold.tsv"), "--pred",
        str(tmp_path / "pred.tsv"), "--valid-codes", str(tmp_path / "codes.tsv"), "--format", "json",
    )  # fmt: skip
    assert OWN["codiesp"] <= loaded
    assert not ({"numpy", "nlpbench.formats.codiesp_columns", "rich"} & loaded)


def one_note(task: str, folder) -> list[str]:
    """The arguments of ``nlpbench score TASK`` on one small note (or patient, or case) of each side."""
    if task == "sandbox":
        return ["--gold", str(example("gold.json")), "--pred", str(example("pred.json"))]
    if task == "timelines":
        (folder / "gold.json").write_text('{"p1": [["taxol", "contains-1", "2013-02-22"]]}', encoding="utf-8")
        (folder / "ids.txt").write_text("p1\n", encoding="utf-8")
        return ["--gold", str(folder / "gold.json"), "--pred", str(folder / "gold.json"), "--all-ids",
                str(folder / "ids.txt"), "--mode", "day", "--reference-date", "2026-11-29"]  # fmt: skip
    if task == "codiesp":
        (folder / "gold.tsv").write_text("S1\tn39.0\nS1\tr52\n", encoding="utf-8")
        (folder / "codes.tsv").write_text("N39.0\tdesc\nR52\tdesc\n", encoding="utf-8")
        tsv, codes = str(folder / "gold.tsv"), str(folder / "codes.tsv")
        return ["--track", "D", "--gold", tsv, "--pred", tsv, "--valid-codes", codes]
    if task == "coref":
        (folder / "key.conll").write_text(
            "#begin document (doc); part 000\nw 0 0 Mary (1)\nw 0 1 saw -\nw 0 2 her (1)\n#end document\n",
            encoding="utf-8",
        )
        return ["--key", str(folder / "key.conll"), "--response", str(folder / "key.conll")]
    if task == "ner":
        (folder / "ner.conll").write_text("Dr. B-PER\nLee I-PER\nsaw O\n\n", encoding="utf-8")
        return ["--gold", str(folder / "ner.conll"), "--pred", str(folder / "ner.conll")]
    if task == "linking":
        line = {"id": "d1", "entities": [{"mention": "CAT", "qid": "cat"}]}
        (folder / "nel.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
        return ["--gold", str(folder / "nel.jsonl"), "--pred", str(folder / "nel.jsonl"), "--gold-format", "jsonl"]
    if task == "relations":
        (folder / "doc1.txt").write_text("John works for Acme.", encoding="utf-8")
        (folder / "doc1.ann").write_text(
            "T1\tPER 0 4\tJohn\nT2\tORG 15 19\tAcme\nR1\tworks_for Arg1:T1 Arg2:T2\n", encoding="utf-8"
        )
        return ["--gold", str(folder), "--pred", str(folder)]
    assert task == "i2b2"
    from tests.conformance.i2b2_cases import GOLD, TEXT, xml

    (folder / "100-01.xml").write_text(xml(TEXT, GOLD), encoding="utf-8")
    return ["--gold", str(folder / "100-01.xml"), "--pred", str(folder / "100-01.xml"), "--format", "json"]


@pytest.mark.parametrize("task", sorted(OWN))
def test_a_one_note_score_loads_no_pydantic_and_only_its_part_of_the_model(task, tmp_path):
    """Each task's one-note table (i2b2's is wider than a console: JSON) loads its own modules, none of
    :data:`NO_TASK_NEEDS`, and of the model only what the task reads and what every command shares."""
    loaded = imported("score", task, *one_note(task, tmp_path))
    assert OWN[task] <= loaded
    unwanted = (others(task) | NO_TASK_NEEDS) & loaded
    assert not unwanted
    model = {name.removeprefix("nlpbench.model.") for name in loaded if name.startswith("nlpbench.model.")}
    assert model <= MODEL[task] | MODEL_SHARED, model - MODEL[task] - MODEL_SHARED


@pytest.mark.parametrize(
    ("task", "profile"), [("coref", "conll2012"), ("coref", "e2e"), ("linking", "standard"), ("i2b2", "standard")]
)
def test_a_one_note_score_needs_neither_numpy_nor_scipy(task, profile, tmp_path):
    """Where a large input computes with numpy and scipy, one note is computed in plain Python: CEAF's (v8.01's
    and e2e's) and linking's assignments (:mod:`nlpbench.metrics.assignment`), a CoNLL file under 8 kB read line
    by line, i2b2's macro mean and deviation of fewer than 8 notes (:func:`nlpbench.metrics.deid.mean_sd`)."""
    loaded = imported("score", task, *one_note(task, tmp_path), "--profile", profile)
    assert OWN[task] <= loaded
    assert not ({"numpy", "scipy", "xml.sax.saxutils"} & loaded)
