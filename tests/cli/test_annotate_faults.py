"""``nlpbench annotate`` against tools that misbehave on purpose, on 127.0.0.1.

Every note carries a canary string and every fault echoes the note back (in a
problem detail, an HTML page, a non-JSON body, an annotation's text): the
canary must reach no stdout, stderr, checkpoint or output. Each failing run
ends in bounded time with one line naming the note and what went wrong; once
the tool is fixed, the same command resumes and writes what a clean run writes,
every note exactly once.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nlpbench import formats
from nlpbench.model import Document
from tests.cli.errors import one_line_error
from tests.runner.faulty import FAILING, TIMEOUT, faulty
from tests.toolkit import local_cluster

CANARY = "QZX-CANARY-5150"
TEXTS = [
    "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle.",
    "Mary Williamson (SSN 123-45-6789) came back on March 3, 2021.",
    "Call (206) 555-0101 or write to mary@example.org before 1/2/2021.",
    "No PHI in this one.",
]
#: What each fault of note-2 must be reported as (after its retries, where it is retried).
REPORTED = {
    "400": r"for note note-2: HTTP 400 Bad Request, application/problem\+json, \d+ bytes$",
    "422": r"for note note-2: HTTP 422 Unprocessable (Entity|Content), application/problem\+json, \d+ bytes$",
    "500": r"for note note-2: HTTP 500 Internal Server Error, application/problem\+json, \d+ bytes$",
    "503": r"for note note-2: HTTP 503 Service Unavailable, application/problem\+json, \d+ bytes \(2 attempts\)$",
    "html": r"for note note-2: the response is not JSON \(HTTP 200 OK, text/html, \d+ bytes\)$",
    "not_json": r"for note note-2: the response is not JSON \(HTTP 200 OK, application/json, \d+ bytes\)$",
    "schema": r"for note note-2: the response does not follow the 1.2.0 Text\w+Response schema: text\w+\.0\.start: ",
    "past_end": r"for note note-2: text\w+Annotations\[\d+\]: ends at \d+, beyond the note \(\d+ chars\)$",
    "huge": r"for note note-2: HTTP 200 OK, application/json, over \d+ bytes: larger than the 65536 bytes",
    "many": r"for note note-2: 600 annotations for the note, more than the 500 one note may have \(--max-annot",
    "hang": rf"for note note-2: no answer within {TIMEOUT} s \(2 attempts\)$",
    "drip": rf"for note note-2: no answer within {TIMEOUT} s \(2 attempts\)$",
    "broken": r"for note note-2: the connection broke off \(\w+\) \(2 attempts\)$",
}
OPTIONS = ("--concurrency", "1", "--timeout", str(TIMEOUT), "--retries", "1", "--max-response-bytes", "65536",
           "--max-annotations", "500")  # fmt: skip
#: :data:`OPTIONS` for the comparison with a Dask worker, whose faults are none of a slow tool: a 5 s timeout,
#: because it also bounds how long the Dask scheduler may take to answer, and the test's scheduler runs in this
#: process, beside the command and under the suite's load (at 0.5 s it was once given up as stopped).
DASK_COMPARED = ("--concurrency", "1", "--timeout", "5", "--retries", "1", "--max-response-bytes", "65536",
                 "--max-annotations", "500")  # fmt: skip


@pytest.fixture(scope="module")
def tool():
    with faulty() as served_tool:
        yield served_tool


@pytest.fixture(autouse=True)
def _healthy(tool):
    tool.settle()
    tool.reset()


def notes_file(directory: Path, texts=TEXTS, name="notes.json") -> Path:
    documents = [
        Document(f"note-{i}", f"{text} {CANARY} {i}", metadata={"patientId": "p-1"}) for i, text in enumerate(texts)
    ]
    path = directory / name
    formats.get("sandbox-bundles").write(documents, path)
    return path


def no_canary(result, *directories: Path, notes: Path) -> None:
    """The canary is in no stdout, stderr, nor any file a run left (the notes aside)."""
    assert CANARY not in result.stdout and CANARY not in result.stderr
    for directory in directories:
        for path in directory.rglob("*"):
            if path.is_file() and path != notes:
                assert CANARY.encode() not in path.read_bytes(), path


def names(path: Path) -> list[str]:
    return [record["name"] for record in json.loads(path.read_text())]


def clean_run(tool, directory: Path, texts=TEXTS) -> bytes:
    """What a healthy tool's run writes for the notes."""
    from typer.testing import CliRunner

    from nlpbench.cli import app

    notes, out = notes_file(directory, texts), directory / "clean.json"
    tool.reset()
    assert (
        CliRunner().invoke(app, ["annotate", "--tool", tool.url, "--notes", str(notes), "--out", str(out)]).exit_code
        == 0
    )
    return out.read_bytes()


@pytest.fixture(scope="module")
def clean(tool, tmp_path_factory):
    return clean_run(tool, tmp_path_factory.mktemp("clean"))


@pytest.mark.parametrize("fault", FAILING)
def test_a_failing_note_is_one_line_without_phi_and_the_fixed_tool_resumes(cli, tool, tmp_path, clean, fault):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    tool.reset(fault, notes={"note-2"}, huge_bytes=2**20)
    failed = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out, *OPTIONS)
    message = one_line_error(failed)
    assert message.startswith(f"{tool.url}/api/v1: POST /text")
    assert message.endswith(f" (finished notes are kept in {checkpoint}; run again to resume)")
    assert re.search(REPORTED[fault], message[: message.rindex(" (finished")])
    assert not out.exists() and not list(tmp_path.glob(".pred.json*"))  # no half-written output
    finished = [json.loads(line)["id"] for line in checkpoint.read_text().splitlines()[1:]]
    assert {"note-0", "note-1"} <= set(finished) and "note-2" not in finished
    no_canary(failed, tmp_path, notes=notes)

    tool.settle()
    tool.reset()  # fixed
    resumed = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out, *OPTIONS)
    assert resumed.exit_code == 0, resumed.stderr
    assert f"{len(finished)} from the checkpoint" in resumed.stderr
    assert out.read_bytes() == clean and names(out) == ["note-0", "note-1", "note-2", "note-3"]
    assert not checkpoint.exists()
    assert "note-0" not in tool.seen and tool.seen.count("note-2") == 5  # resumed notes are not sent again
    no_canary(resumed, tmp_path, notes=notes)


def test_show_text_is_the_local_opt_in_that_quotes_the_tool(cli, tool, tmp_path):
    notes = notes_file(tmp_path)
    tool.reset("html", notes={"note-1"})
    shown = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", tmp_path / "o.json", "--show-text",
                "--retries", "0")  # fmt: skip
    assert CANARY in one_line_error(shown)


@pytest.fixture(scope="module")
def dask_options():
    """``annotate``'s options that send the notes from the workers of a Dask cluster on 127.0.0.1."""
    pytest.importorskip("distributed")
    with local_cluster(n_workers=1, threads_per_worker=2, processes=False) as cluster:
        yield ("--executor", "dask", "--scheduler", cluster.scheduler_address, "--batch-size", "2")


@pytest.mark.parametrize(
    ("fault", "failing", "shown"),
    [("huge", "note-2", False), ("many", "note-2", False), ("html", "note-1", True), ("html", "note-1", False)],
    ids=["over-max-response-bytes", "over-max-annotations", "show-text", "hidden-text"],
)
def test_a_dask_worker_asks_the_tool_with_the_same_options(
    cli, tool, tmp_path, dask_options, fault, failing, shown, caplog, monkeypatch
):
    """--max-response-bytes, --max-annotations, --show-text, --timeout and --retries hold on a Dask worker as they
    do locally; the worker's log (in this process) names no note's text either."""
    monkeypatch.setattr(logging.getLogger("distributed"), "propagate", True)  # into caplog
    notes = notes_file(tmp_path)
    said = {}
    for executor, options in {"local": (), "dask": dask_options}.items():
        tool.settle()
        tool.reset(fault, notes={failing}, huge_bytes=2**17)  # over the cap, yet all in the socket buffers
        failed = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", tmp_path / f"{executor}.json",
                     *DASK_COMPARED, *(("--show-text",) if shown else ()), *options)  # fmt: skip
        message = one_line_error(failed)
        said[executor] = message[: message.rindex(" (finished")]
        if not shown:
            no_canary(failed, tmp_path, notes=notes)
            # no failed task either: a worker logs one, and some distributed releases log its arguments, the notes
            assert CANARY not in caplog.text and "Compute Failed" not in caplog.text
    assert said["dask"] == said["local"]
    assert said["local"].startswith(f"{tool.url}/api/v1: POST /text")
    if shown:
        assert CANARY in said["local"]
    else:
        assert re.search(REPORTED[fault].replace("note-2", failing), said["local"])


def test_text_that_disagrees_with_the_note_is_counted_not_quoted(cli, tool, tmp_path, clean):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    tool.reset("mismatch")
    result = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out)
    assert result.exit_code == 0, result.stderr
    warning = next(line for line in result.stderr.splitlines() if line.startswith("warning: "))
    assert "annotations whose text is not the note's text at their offsets; the note's text is kept" in warning
    assert ": start 3, length 10: a text of " in warning
    assert out.read_bytes() == clean  # the offsets are kept, with the note's own text
    no_canary(result, tmp_path, notes=notes)


def test_an_answer_that_failed_a_check_is_asked_again_once_the_tool_is_fixed(cli, tool, tmp_path, clean):
    """Text that disagrees with the note fails the answer's check: the run goes on (a warning) but the note is
    not checkpointed as finished, so the same command, once the tool is fixed, writes the fixed answer."""
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    tool.reset("mismatch", notes={"note-0", "note-1"}, fail_note="note-3")  # note-3 stops the run
    args = ("annotate", "--tool", tool.url, "--notes", notes, "--out", out, "--concurrency", "1", "--retries", "0")
    one_line_error(cli(*args))
    finished = [json.loads(line)["id"] for line in checkpoint.read_text().splitlines()[1:]]
    assert finished == ["note-2"]
    tool.reset()  # fixed: same URL, name and version
    again = cli(*args)
    assert again.exit_code == 0, again.stderr
    assert "1 from the checkpoint" in again.stderr and "warning" not in again.stderr
    assert out.read_bytes() == clean
    assert set(tool.seen) == {"awesome-note", "note-0", "note-1", "note-3"} and not checkpoint.exists()
    no_canary(again, tmp_path, notes=notes)


@pytest.mark.parametrize(
    ("fault", "delay", "outcome"),
    [
        ("broken", 0.0, "retries"),  # a flaky connection: two broken answers, then good ones
        ("503", 0.0, "retries"),
        (None, 0.05, "slow"),  # slow but within the timeout
        ("random", 0.0, "random"),  # a nondeterministic tool: valid answers that change from call to call
    ],
)
def test_tools_that_recover_or_are_merely_odd_finish(cli, tool, tmp_path, clean, fault, delay, outcome):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    tool.reset(fault, times=2 if outcome == "retries" else 10**9, delay=delay)
    result = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out, "--timeout", "2", "--retries", "3")
    assert result.exit_code == 0, result.stderr
    assert names(out) == ["note-0", "note-1", "note-2", "note-3"]
    if outcome == "retries":
        assert ", 2 retries in " in result.stderr and out.read_bytes() == clean
    elif outcome == "slow":
        assert out.read_bytes() == clean
    no_canary(result, tmp_path, notes=notes)


def test_a_nondeterministic_tool_resumed_keeps_each_notes_first_answer(cli, tool, tmp_path):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    tool.reset("random", fail_note="note-3")
    args = ("annotate", "--tool", tool.url, "--notes", notes, "--out", out, "--concurrency", "1", "--retries", "0")
    one_line_error(cli(*args))
    answers = {}
    for line in checkpoint.read_text().splitlines()[1:]:
        record = json.loads(line)
        answers[record["id"]] = sorted((a["label"], a["start"], a["length"]) for a in record["annotations"])
    assert {"note-0", "note-1", "note-2"} <= set(answers)
    tool.reset("random")
    assert cli(*args).exit_code == 0
    from nlpbench.formats.sandbox import read

    written = {d.id: sorted((a.label, a.start, a.span.length) for a in d.annotations) for d in read(out)}
    assert list(written) == ["note-0", "note-1", "note-2", "note-3"]
    assert all(written[note_id] == found for note_id, found in answers.items())


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT])
def test_killed_or_interrupted_in_the_middle_the_same_command_gives_the_clean_output(tool, tmp_path, stop):
    (tmp_path / "clean").mkdir()
    clean_all = clean_run(tool, tmp_path / "clean", TEXTS * 5)
    notes, out = notes_file(tmp_path, TEXTS * 5), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    command = [sys.executable, "-m", "nlpbench", "annotate", "--tool", tool.url, "--notes", str(notes)]
    # the notes after the first five hang, so that the stop always comes in the middle, however late the test
    # sees the checkpoint grow on a loaded machine (with every note slowed by 30 ms, the run once ended first)
    tool.reset("hang", notes={f"note-{i}" for i in range(5, 20)})
    process = subprocess.Popen([*command, "--out", str(out), "--concurrency", "1"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not checkpoint.exists() or checkpoint.read_text().count("\n") < 6:  # its header and five notes
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(process.pid, stop)
    process.wait(timeout=10)
    assert not out.exists()
    if stop == signal.SIGINT:  # Ctrl-C: the requests in flight are cancelled, and one line says so
        assert process.returncode == 130
        assert process.stderr.read().decode() == (
            f"nlpbench: error: interrupted (finished notes are kept in {checkpoint}; run again to resume)\n"
        )
    tool.reset()
    again = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "from the checkpoint" in again.stderr
    assert out.read_bytes() == clean_all
    assert names(out) == [f"note-{i}" for i in range(20)]
    assert not checkpoint.exists() and not list(tmp_path.glob(".pred.json*"))
