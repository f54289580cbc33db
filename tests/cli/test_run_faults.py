"""``nlpbench run`` with tools that fail in every way at once: the others are scored, the failed ones reported.

A date annotator is scored on dates only and its other types shown as not
served; each failing tool (unreachable, 400, 500, hanging, non-JSON, outside
the schema) is a row marked failed with a one-line reason, in the table and
the report; no note text reaches any output; the same command, once the tools
are fixed, resumes each tool from its checkpoint and writes what a clean run
writes.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

import pytest

from nlpbench.api.tool import create_app
from tests.cli.errors import one_line_error
from tests.cli.test_annotate_faults import CANARY, no_canary, notes_file
from tests.runner.faulty import TIMEOUT, faulty
from tests.toolkit import DatesOnly, served

FAULTS = {"bad400": "400", "bad500": "500", "hangs": "hang", "notjson": "not_json", "schema": "schema"}
REASONS = {
    "bad400": "HTTP 400 Bad Request, application/problem+json",
    "bad500": "HTTP 500 Internal Server Error, application/problem+json",
    "hangs": f"no answer within {TIMEOUT} s (2 attempts)",
    "notjson": "the response is not JSON (HTTP 200 OK, application/json",
    "schema": "does not follow the 1.2.0 TextDateAnnotationResponse schema",
    "gone": "GET /healthCheck: cannot reach the tool",
}
OPTIONS = ("--concurrency", "2", "--timeout", str(TIMEOUT), "--retries", "1")


def rows(stdout: str) -> dict[str, list[str]]:
    """The first table's rows by tool: its cells split on runs of spaces."""
    lines = stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "───" in line) + 1
    found = {}
    for line in lines[first:]:
        if not line.strip():
            break
        cells = [cell.strip() for cell in line.strip().split("  ") if cell.strip()]
        found[cells[0]] = cells[1:]
    return found


def test_failing_tools_are_reported_and_the_fixed_ones_resume(cli, tmp_path):
    notes, out = notes_file(tmp_path), tmp_path / "out"
    with ExitStack() as stack:
        good = stack.enter_context(faulty())
        bad = {name: stack.enter_context(faulty()) for name in FAULTS}
        dates = stack.enter_context(served(create_app(DatesOnly())))
        tools = [f"good={good.url}", f"dates={dates}", *(f"{name}={tool.url}" for name, tool in bad.items())]
        tools.append("gone=http://127.0.0.1:9")
        for name, tool in bad.items():
            tool.reset(FAULTS[name], notes={"note-2"})
        command = ["run", "--notes", notes, "--notes-format", "sandbox-bundles", "--out", out, *OPTIONS]
        for tool in tools:
            command += ["--tool", tool]
        result = cli(*command)
        assert result.exit_code == 0, result.stderr
        table = rows(result.stdout)
        assert table["dates"][2:6] == ["—"] * 4 and table["dates"][1] != "—"  # speed, date, then not served
        assert all(cell != "—" for cell in table["good"])
        for name in [*FAULTS, "gone"]:
            assert table[f"{name} (failed)"] == ["—"] * 7
            reason = next(line for line in result.stdout.splitlines() if line.startswith(f"{name}: failed: "))
            assert REASONS[name] in reason
        assert "dates: regex-date 0.1.0 serves date only (—: not served)" in result.stdout
        assert "6 of 8 tools failed; each tool's finished notes are kept in" in result.stderr
        page = (out / "report.html").read_text()
        assert "bad500 (failed)" in page and "hangs: failed: " in page and "not served by this tool" in page
        no_canary(result, tmp_path, notes=notes)
        for name in FAULTS:
            lines = (out / f"{name}.checkpoint.jsonl").read_text().splitlines()[1:]
            finished = [json.loads(line)["id"] for line in lines]
            assert "note-2" not in finished and "note-0" in finished

        for tool in bad.values():  # fixed; gone stays gone
            tool.settle()
            tool.reset()
        again = cli(*command)
        assert again.exit_code == 0, again.stderr
        assert "1 of 8 tools failed" in again.stderr and "gone: failed: " in again.stdout
        for name, tool in bad.items():
            assert "note-0" not in tool.seen  # resumed from the checkpoint, not sent again
            records = json.loads((out / f"{name}.json").read_text())
            assert [r["name"] for r in records] == ["note-0", "note-1", "note-2", "note-3"]
            assert (out / f"{name}.json").read_bytes() == (out / "good.json").read_bytes()
        assert set(rows(again.stdout)) == {"good", "dates", *FAULTS, "gone (failed)"}
        no_canary(again, tmp_path, notes=notes)


def test_every_tool_failing_is_one_line_and_exit_2(cli, tmp_path):
    notes = notes_file(tmp_path)
    result = cli("run", "--notes", notes, "--out", tmp_path / "o", "--retries", "0",
                 "--tool", "a=http://127.0.0.1:9", "--tool", "b=http://127.0.0.1:9/api/v1")  # fmt: skip
    message = one_line_error(result)
    assert message.startswith("every tool failed: a: http://127.0.0.1:9/api/v1: GET /healthCheck: cannot reach")
    assert "; b: http://127.0.0.1:9/api/v1: GET /healthCheck" in message and "kept in" not in message


@pytest.mark.parametrize(
    "url",
    ["127.0.0.1:8080", "ftp://127.0.0.1/tool", "file:///etc/passwd", "http://", "http:x", "http://[::1",
     "http://127.0.0.1:99999", "http://127.0.0.1:8080/\udcff", "http://127.0.0.1:8080/?q=1"],
)  # fmt: skip
def test_a_url_that_is_not_http_is_refused_at_once(cli, tmp_path, url):
    notes = notes_file(tmp_path)
    annotated = cli("annotate", "--tool", url, "--notes", notes, "--out", tmp_path / "o.json")
    ran = cli("run", "--notes", notes, "--tool", f"t={url}", "--out", tmp_path / "o")
    assert one_line_error(annotated).startswith(f"--tool: {url!r}")
    assert one_line_error(ran).startswith(f"--tool t: {url!r}")
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.json").exists()


def test_run_shows_note_text_in_its_report_only_with_show_text(cli, tmp_path):
    notes = notes_file(tmp_path)
    with faulty() as tool:
        hidden = cli("run", "--notes", notes, "--tool", f"t={tool.url}", "--out", tmp_path / "hidden")
        shown = cli("run", "--notes", notes, "--tool", f"t={tool.url}", "--out", tmp_path / "shown", "--show-text")
    assert hidden.exit_code == 0 and shown.exit_code == 0
    assert CANARY not in (tmp_path / "hidden" / "report.html").read_text()
    assert CANARY in (tmp_path / "shown" / "report.html").read_text()  # errors in context, asked for
    assert not list((tmp_path / "hidden").glob("*.checkpoint.jsonl"))  # every tool finished: nothing to resume


def test_a_password_in_a_tool_url_is_never_shown(cli, tmp_path):
    notes = notes_file(tmp_path)
    with faulty() as tool:
        url = tool.url.replace("http://", "http://someone:s3cret@")
        ran = cli("run", "--notes", notes, "--tool", f"t={url}", "--tool", "down=http://me:s3cret@127.0.0.1:9",
                  "--out", tmp_path / "o", "--retries", "0")  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    assert "down: failed: http://127.0.0.1:9/api/v1: GET /healthCheck: cannot reach" in ran.stdout
    assert f"t at {tool.url}" in ran.stderr
    assert all("s3cret" not in text for text in (ran.stdout, ran.stderr, *map(Path.read_text, tmp_path.rglob("*.*"))))


def checkpointed(path: Path) -> list[str]:
    """The ids of the notes a checkpoint holds as finished."""
    return [json.loads(line)["id"] for line in path.read_text().splitlines()[1:]]


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("mismatch", None),  # answered, with a warning: not finished, so asked again
        ("many", "25000 annotations for the note, more than the 10000 one note may have (--max-annotations)"),
    ],
)
def test_answers_that_failed_a_check_are_not_kept_for_the_rerun(cli, tmp_path, fault, reason):
    """A tool's text that disagrees with its offsets, or 25,000 annotations a note (the default bound is 10,000):
    the run ends at once, nothing of those notes is checkpointed, and the same command once the tool is fixed
    (same URL, name and version) writes what a clean tool writes."""
    notes, out = notes_file(tmp_path), tmp_path / "out"
    with faulty() as good, faulty() as tool:
        tool.reset(fault, notes={"note-1", "note-2"}, many=25_000)
        command = ["run", "--notes", notes, "--out", out, "--concurrency", "1", "--retries", "0"]
        command += ["--tool", f"good={good.url}", "--tool", f"t={tool.url}", "--tool", "gone=http://127.0.0.1:9"]
        first = cli(*command)
        assert first.exit_code == 0, first.stderr
        if reason is None:
            assert "annotations whose text is not the note's text at their offsets" in first.stderr
            assert "2 notes with them are not checkpointed, a rerun asks the tool again" in first.stderr
            assert checkpointed(out / "t.checkpoint.jsonl") == ["note-0", "note-3"]
        else:
            assert f"t: failed: {tool.url}/api/v1: POST /text" in first.stdout and f"note-1: {reason}" in first.stdout
            assert checkpointed(out / "t.checkpoint.jsonl") == ["note-0"] and not (out / "t.json").exists()
        no_canary(first, tmp_path, notes=notes)

        tool.settle()
        tool.reset()  # fixed
        again = cli(*command)
        assert again.exit_code == 0, again.stderr
        assert "warning" not in again.stderr and "t: failed" not in again.stdout
        assert (out / "t.json").read_bytes() == (out / "good.json").read_bytes()
        assert {"note-1", "note-2"} <= set(tool.seen) and "note-0" not in tool.seen
        no_canary(again, tmp_path, notes=notes)
