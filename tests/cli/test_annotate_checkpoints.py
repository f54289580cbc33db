"""``nlpbench annotate``'s checkpoint and output can be trusted: identity, changed notes, hand edits, atomic writes."""

from __future__ import annotations

import json

import pytest

from nlpbench import formats
from tests.cli.errors import one_line_error
from tests.cli.test_annotate_faults import TEXTS, names, notes_file
from tests.runner.faulty import faulty
from tests.toolkit import DatesOnly


@pytest.fixture(scope="module")
def tool():
    with faulty() as served_tool:
        yield served_tool


@pytest.fixture(autouse=True)
def _healthy(tool):
    tool.settle()
    tool.reset()


def interrupted(cli, tool, notes, out, *more):
    """A run stopped by a tool failing note-2: its checkpoint holds the notes before it."""
    tool.reset("500", notes={"note-2"})
    message = one_line_error(cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out,
                                 "--concurrency", "1", "--retries", "0", *more))  # fmt: skip
    tool.settle()
    tool.reset()
    return message


def test_a_checkpoint_of_another_tool_is_refused_in_one_line_unless_restart(cli, tool, tmp_path):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    interrupted(cli, tool, notes, out)
    header = json.loads(checkpoint.read_text().splitlines()[0])
    assert header == {
        "checkpoint": "nlpbench-annotate-checkpoint",
        "format": 2,
        "url": f"{tool.url}/api/v1",
        "tool": "regex-phi",
        "version": "1.0.0",
        "type": "nlpsandbox:phi-annotator",
        "labels": ["date", "person_name", "location", "id", "contact"],
    }
    with faulty(DatesOnly()) as other:
        refused = cli("annotate", "--tool", other.url, "--notes", notes, "--out", out)
        message = one_line_error(refused)
        assert message == (
            f"{checkpoint}: line 1: made for regex-phi 1.0.0 at {tool.url}/api/v1 for date, person_name, location, "
            f"id, contact, not regex-date 0.1.0 at {other.url}/api/v1 for date; --restart starts it again"
        )
        assert other.requests == 1  # the probe note, for dates; no note was sent
        restarted = cli("annotate", "--tool", other.url, "--notes", notes, "--out", out, "--restart")
    assert restarted.exit_code == 0, restarted.stderr
    assert "from the checkpoint" not in restarted.stderr
    assert {key for record in json.loads(out.read_text()) for key, value in record.items() if value} == {
        "name", "annotationSource", "textDateAnnotations"
    }  # fmt: skip


def test_a_checkpoint_of_the_first_format_is_refused(cli, tool, tmp_path):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    labels = ["date", "person_name", "location", "id", "contact"]
    first = {"checkpoint": "nlpbench-annotate-checkpoint", "tool": "regex-phi", "version": "1.0.0", "labels": labels}
    checkpoint.write_text(json.dumps(first) + "\n" + json.dumps({"id": "note-0", "annotations": []}) + "\n")
    message = one_line_error(cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out))
    assert message == f"{checkpoint}: line 1: made by an older nlpbench, without note hashes; --restart starts it again"


def test_a_note_whose_text_changed_is_annotated_again(cli, tool, tmp_path):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    interrupted(cli, tool, notes, out)
    changed = notes_file(tmp_path, [TEXTS[0], "Seen on 1/2/2021 by Mary.", *TEXTS[2:]])
    result = cli("annotate", "--tool", tool.url, "--notes", changed, "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "warning: 1 notes changed since" in result.stderr and "they were annotated again" in result.stderr
    assert tool.seen.count("note-1") == 5 and "note-0" not in tool.seen
    record = json.loads(out.read_text())[1]
    assert record["textDateAnnotations"][0]["start"] == 8 and record["textPersonNameAnnotations"][0]["text"] == "Mary"


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ({"start": 10**9}, "note note-0: annotations[0]: ends at 1000000010, beyond the note (82 chars)"),
        ({"start": -1}, "note note-0: annotations[0]: negative offset (start -1, length 10)"),
        ({"start": "3"}, "annotations[0]: start is missing or of the wrong type"),
        ({"label": "profession"}, "annotations[0]: a type that was not asked for"),
    ],
)
def test_a_resumed_record_is_checked_against_its_note_like_a_fresh_one(cli, tool, tmp_path, edit, problem):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    interrupted(cli, tool, notes, out)
    lines = checkpoint.read_text().splitlines()
    record = json.loads(lines[1])
    record["annotations"][0].update(edit)
    lines[1] = json.dumps(record)
    checkpoint.write_text("\n".join(lines) + "\n")
    message = one_line_error(cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out))
    assert message.startswith(f"{checkpoint}: line 2: ") and message.endswith(problem)
    assert not out.exists()


def test_a_line_cut_by_a_kill_is_sent_again_and_a_file_cut_before_its_header_starts_over(cli, tool, tmp_path):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    checkpoint = tmp_path / "pred.json.checkpoint.jsonl"
    interrupted(cli, tool, notes, out)
    text = checkpoint.read_text()
    checkpoint.write_text(text[: len(text) - 7])
    result = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "was cut short (the run was interrupted); that note is sent again" in result.stderr
    assert names(out) == ["note-0", "note-1", "note-2", "note-3"]
    checkpoint.write_text('{"checkpoint": "nlpbench-ann')
    assert cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out).exit_code == 0


def test_out_is_written_whole_or_not_at_all_and_never_over_the_notes(cli, tool, tmp_path):
    notes, out = notes_file(tmp_path), tmp_path / "pred.json"
    before = notes.read_bytes()
    message = one_line_error(cli("annotate", "--tool", tool.url, "--notes", notes, "--out", notes))
    assert message == f"--output {notes} is --notes too; give it another path"
    message = one_line_error(cli("annotate", "--tool", tool.url, "--notes", notes, "--out", out, "--checkpoint", notes))
    assert message == f"--checkpoint {notes} is --notes too; give it another path"
    assert notes.read_bytes() == before and tool.requests == 0
    out.write_text("the previous output\n")
    interrupted(cli, tool, notes, out)
    assert out.read_text() == "the previous output\n"  # a failed run leaves it as it was


def test_an_out_format_that_cannot_hold_the_output_is_refused_before_any_request(cli, tool, tmp_path):
    notes = notes_file(tmp_path)
    result = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", tmp_path / "o.json",
                 "--out-format", "sandbox-bundles")  # fmt: skip
    assert one_line_error(result) == (
        "--out-format sandbox-bundles cannot hold a tool's annotations without the note texts "
        "(patient bundles need each note's text)"
    )
    assert tool.requests == 0 and not (tmp_path / "o.json.checkpoint.jsonl").exists()
    unknown = cli("annotate", "--tool", tool.url, "--notes", notes, "--out", tmp_path / "o", "--out-format", "nope")
    assert "nope" in one_line_error(unknown) and tool.requests == 0
    assert formats.get("sandbox")  # the default holds them
