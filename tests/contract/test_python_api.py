"""The Python API (``import nlpbench``) scores through the same task contract as the command line: same bytes."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

import nlpbench
from nlpbench import python_api
from nlpbench.errors import InputError
from nlpbench.registry import UnknownName

INPUTS = Path(__file__).parent / "inputs"
EXAMPLES = python_api.example("gold.json").parent

#: (task, CLI arguments, the same run through the API: gold, pred, options), paths relative to INPUTS.
SAME_RUNS = [
    ("ner", ["-g", "ner/gold.conll", "-p", "ner/pred.conll", "--labels", "PER"],
     ("ner/gold.conll", "ner/pred.conll", {"labels": "PER"})),
    ("coref", ["--key", "coref/key.conll", "--response", "coref/response.conll", "--profile", "conll2012"],
     ("coref/key.conll", "coref/response.conll", {"profile": "conll2012"})),
    ("i2b2", ["-p", "i2b2/system", "-g", "i2b2/gold", "--profile", "i2b2-2014"],
     ("i2b2/gold", "i2b2/system", {"profile": "i2b2-2014"})),
    ("codiesp", ["--track", "D", "-g", "codiesp/gold_d.tsv", "-p", "codiesp/pred_d.tsv", "-c", "codiesp/codes.tsv"],
     ("codiesp/gold_d.tsv", "codiesp/pred_d.tsv", {"track": "D", "valid_codes": ["codiesp/codes.tsv"]})),
    ("relations", ["-g", "relations/gold", "-p", "relations/pred", "--profile", "rebel"],
     ("relations/gold", "relations/pred", {"profile": "rebel"})),
    ("deid", ["--gold", f"{EXAMPLES}/gold.json", "--pred", f"{EXAMPLES}/shifted.jsonl",
              "--config", f"{EXAMPLES}/deid-steps.json"],
     (f"{EXAMPLES}/gold.json", f"{EXAMPLES}/shifted.jsonl", {"config": f"{EXAMPLES}/deid-steps.json"})),
]  # fmt: skip


@pytest.mark.parametrize(("task", "arguments", "api"), SAME_RUNS, ids=[run[0] for run in SAME_RUNS])
def test_score_prints_the_cli_json_and_table(cli, monkeypatch, task, arguments, api):
    monkeypatch.chdir(INPUTS)
    gold, pred, options = api
    report = nlpbench.score(task, gold, pred, **options)
    assert report.to_json() == cli("score", task, *arguments, "--format", "json").stdout
    assert str(report) == cli("score", task, *arguments).stdout


def test_in_memory_documents_score_as_their_file_does(monkeypatch, cli):
    monkeypatch.chdir(EXAMPLES)
    gold, pred = nlpbench.read("sandbox", "gold.json"), nlpbench.read("sandbox", "pred.json")
    from_memory = nlpbench.score("sandbox", gold, pred, profile="nlpsandbox")
    from_files = json.loads(cli("score", "sandbox", "-g", "gold.json", "-p", "pred.json", "--profile", "nlpsandbox",
                                "-f", "json").stdout)  # fmt: skip
    assert from_memory.inputs["gold"] == "(in memory)"
    assert (from_memory.scores, from_memory.per_document) == (from_files["scores"], from_files["per_document"])


def test_compare_is_the_cli_compare(monkeypatch, cli):
    monkeypatch.chdir(EXAMPLES)
    compared = nlpbench.compare("sandbox", "gold.json", "pred.json", "gold.json", annotation_type="date", trials=200)
    printed = cli("compare", "pred.json", "gold.json", "-T", "sandbox", "-g", "gold.json", "--trials", "200",
                  "-f", "json", "--", "-t", "date").stdout  # fmt: skip
    assert compared.to_json() == printed


def test_tasks_profiles_and_report_fields():
    assert nlpbench.tasks() == [
        "codiesp", "coref", "deid", "i2b2", "linking", "ner", "relations", "sandbox", "timelines"
    ]  # fmt: skip
    assert nlpbench.profiles("sandbox") == ["nlpsandbox", "nlpsandbox-legacy", "standard"]
    report = nlpbench.score("sandbox", python_api.example("gold.json"), python_api.example("pred.json"))
    assert report.warnings == [] and report.per_document and report.scores[0]["metric"] == "instance_strict"
    frame = report.to_frame()
    assert list(frame.columns[:2]) == ["annotation_type", "metric"] and len(frame) == len(report.scores)
    assert len(report.to_frame("per_document")) == len(report.per_document)


def test_to_frame_without_pandas_says_what_to_install(monkeypatch):
    report = nlpbench.score("sandbox", python_api.example("gold.json"), python_api.example("pred.json"))
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'nlpbench\[frame\]'"):
        report.to_frame()


def test_bad_calls_are_clear_errors(tmp_path):
    gold = python_api.example("gold.json")
    with pytest.raises(UnknownName, match="unknown task 'nope'; known: codiesp, coref"):
        nlpbench.score("nope", gold, gold)
    with pytest.raises(UnknownName, match="unknown profile 'nope' for spans"):
        nlpbench.score("sandbox", gold, gold, profile="nope")
    with pytest.raises(TypeError, match="task sandbox has no option relaxed; its options: annotation_type, relax"):
        nlpbench.score("sandbox", gold, gold, relaxed=1)
    with pytest.raises(TypeError, match="task coref reads its sides from files: give paths"):
        nlpbench.score("coref", [], [])
    with pytest.raises(InputError, match="no such file"):
        nlpbench.score("ner", tmp_path / "missing.conll", tmp_path / "missing.conll")


def test_the_docstring_examples_run():
    assert doctest.testmod(python_api, raise_on_error=False).failed == 0


def test_import_nlpbench_loads_nothing_else():
    """Only the package and its version: every API name loads on first use."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import nlpbench, sys; print(sorted(m for m in sys.modules if 'nlpbench' in m))"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert loaded.strip() == "['nlpbench', 'nlpbench.version']"
