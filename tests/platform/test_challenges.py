"""Challenges and phases through the command line and the platform API, on SQLite and PostgreSQL.

A spec is checked field by field (one line naming the file and the field, exit 2); a submission to a phase
is refused outside its window, of a kind it does not take, over its quota (across its tasks unless per
task) and after its freeze; a worker runs it under the phase's limits; and a team — an adversary — never
sees a private or blind phase's scores before it closes, another team's submissions in a blind phase, nor
an organiser's action.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from nlpbench.web.app import create_app as create_site
from tests.platform.arena import problem

NOW = datetime.now(UTC)


def when(days: float) -> str:
    return (NOW + timedelta(days=days)).isoformat(timespec="seconds").replace("+00:00", "Z")


def phase(name: str = "dev", **fields: Any) -> dict[str, Any]:
    """A phase open from yesterday to next week, taking prediction files of ``date`` and ``phi`` on ``open``."""
    return {
        "name": name,
        "tasks": ["date", "phi"],
        "datasets": ["open@1"],
        "queue": "default",
        "opens": when(-1),
        "closes": when(7),
        "kinds": ["predictions", "tool"],
        **fields,
    }


def spec(*phases: dict[str, Any], name: str = "c1") -> dict[str, Any]:
    return {"name": name, "title": "A challenge", "phases": list(phases) or [phase()]}


def written(tmp_path: Path, data: dict[str, Any], suffix: str = ".yaml") -> Path:
    path = tmp_path / f"spec{suffix}"
    path.write_text(json.dumps(data) if suffix == ".json" else yaml.safe_dump(data))
    return path


def created(arena, tmp_path: Path, data: dict[str, Any]) -> None:
    """The challenge made from ``data``, and teams team-a and team-b registered by the organisers."""
    made = arena.nb("challenge", "create", written(tmp_path, data))
    assert made.exit_code == 0, made.stderr
    for team in ("team-a", "team-b"):
        assert arena.nb("challenge", "team", team, "--contact", f"{team}@example.org").exit_code == 0


def refusal(result) -> str:
    """The one line of a refusal (exit 2, nothing on standard output)."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def perfect(arena, tmp_path: Path) -> str:
    return json.dumps(arena.exported("open", tmp_path))


# --- the spec ---------------------------------------------------------------------------------


def test_create_and_show_a_two_phase_challenge(arena, tmp_path):
    test = phase("test", opens=when(8), closes=when(9), kinds=["command"], visibility="blind", freeze_at_close=True)
    test |= {"quota": {"submissions": 2, "window": "week", "per_task": True}, "limits": {"memory_mb": 512}}
    made = arena.nb("challenge", "create", written(tmp_path, spec(phase(), test), ".json"))
    assert made.exit_code == 0, made.stderr
    assert "phase dev: open" in made.stdout and "phase test: scheduled" in made.stdout
    shown = json.loads(arena.nb("challenge", "show", "c1", "--format", "json").stdout)
    dev, blind = shown["phases"]
    assert dev["state"] == "open" and dev["quota"] is None and dev["visibility"] == "public"
    assert dev["limits"] == {"memoryMb": 2048, "cpuSeconds": 3600.0, "processes": 64, "wallSeconds": 7200.0}
    assert blind["quota"] == {"submissions": 2, "window": "week", "perTask": True}
    assert blind["limits"]["memoryMb"] == 512 and blind["freezeAtClose"] and blind["datasets"] == ["open@1"]
    assert refusal(arena.nb("challenge", "create", tmp_path / "spec.json")).endswith("a challenge c1 exists already")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"extra": 1}, "extra: should be one of the fields description, name, phases, title (an unknown field)"),
        ({"name": "no spaces"}, "name: should be a name"),
        ({"phases": []}, "phases: should be a list of at least one phase"),
        ({"phases": [phase(kinds=["fax"])]}, "phases[0].kinds[0]: should be one of tool, command"),
        ({"phases": [phase(tasks=["nope"])]}, "phases[0].tasks[0]: should be a task nlpbench scores"),
        ({"phases": [phase(datasets=["open"])]}, "phases[0].datasets[0]: should be NAME@VERSION, not 'open'"),
        ({"phases": [phase(opens="2026-12-01T00:00:00")]}, "phases[0].opens: should be a time with its offset"),
        ({"phases": [phase(closes=when(-2))]}, "phases[0].closes: should be after opens"),
        ({"phases": [phase(visibility="secret")]}, "phases[0].visibility: should be one of public, private, blind"),
        ({"phases": [phase(quota={"submissions": 0})]}, "phases[0].quota.submissions: should be a whole number of"),
        ({"phases": [phase(quota={"submissions": 2, "window": "year"})]}, "phases[0].quota.window: should be one of"),
        ({"phases": [phase(limits={"memory_mb": "lots"})]}, "phases[0].limits.memory_mb: should be a whole number"),
        ({"phases": [phase(limits={"disk": 1})]}, "phases[0].limits.disk: should be one of the fields"),
        ({"phases": [phase(), phase()]}, "phases[1].name: should be a name no other phase has"),
        ({"phases": [phase(datasets=["open@2"])]}, "no dataset open@2 in the store"),
    ],
)
def test_a_wrong_spec_is_one_line_naming_the_file_and_the_field(arena, tmp_path, change, said):
    path = written(tmp_path, spec() | change)
    line = refusal(arena.nb("challenge", "create", path))
    assert str(path) in line or "no dataset" in line
    assert said in line
    assert refusal(arena.nb("challenge", "show", "c1")).endswith("no challenge 'c1'")  # nothing was written


def test_a_spec_that_is_not_yaml_or_repeats_a_key_is_refused(arena, tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("name: c1\nname: c2\nphases: []\n")
    assert "the key 'name' is given twice" in refusal(arena.nb("challenge", "create", path))
    path.write_text("name: [c1\n")
    assert "not YAML" in refusal(arena.nb("challenge", "create", path))


# --- submissions to a phase --------------------------------------------------------------------


def submit(arena, *args: str, team: str = "team-a", task: str = "date"):
    return arena.nb(
        "submit", "--team", team, "--task", task, "--dataset", "open", "--challenge", "c1", *args
    )  # fmt: skip


def test_a_phase_refuses_outside_its_window_an_unaccepted_kind_and_after_its_freeze(arena, tmp_path):
    later = phase("later", opens=when(2), closes=when(3))
    created(arena, tmp_path, spec(phase(), later))
    url = "--tool", "http://127.0.0.1:9"
    assert "phase later of challenge c1 opens at" in refusal(submit(arena, "--phase", "later", *url))
    said = refusal(submit(arena, "--phase", "dev", "--command", "x"))
    assert said.endswith("phase dev of challenge c1 accepts predictions, tool submissions, not command")
    assert "scores date, phi, not location" in refusal(submit(arena, "--phase", "dev", *url, task="location"))
    assert "scores open@1, not version 2" in refusal(
        arena.nb("submit", "--team", "t", "--task", "date", "--dataset", "open@2", "--challenge", "c1",
                 "--phase", "dev", *url)
    )  # fmt: skip
    assert submit(arena, "--phase", "dev", *url).exit_code == 0
    assert "phase dev: closed" in arena.nb("challenge", "close", "c1", "dev").stdout
    assert "phase dev of challenge c1 closed at" in refusal(submit(arena, "--phase", "dev", *url))
    assert "phase dev: open" in arena.nb("challenge", "open", "c1", "dev", "--until", "3").stdout
    assert submit(arena, "--phase", "dev", *url).exit_code == 0
    assert "phase dev: frozen" in arena.nb("challenge", "freeze", "c1", "dev").stdout
    said = refusal(submit(arena, "--phase", "dev", *url))
    assert said == "nlpbench: error: phase dev of challenge c1 is frozen: it takes no more submissions"
    assert refusal(arena.nb("challenge", "open", "c1", "dev", "--until", "3")).endswith(
        "phase dev is frozen: it can no longer be opened"
    )


def test_a_phase_that_freezes_at_close_refuses_as_frozen_once_closed(arena, tmp_path):
    created(arena, tmp_path, spec(phase(freeze_at_close=True)))
    assert "phase dev: frozen" in arena.nb("challenge", "close", "c1", "dev").stdout
    assert "is frozen" in refusal(submit(arena, "--phase", "dev", "--tool", "http://127.0.0.1:9"))


@pytest.mark.parametrize("per_task", [False, True])
def test_the_quota_counts_across_the_phases_tasks_unless_per_task(arena, tmp_path, per_task):
    created(arena, tmp_path, spec(phase(quota={"submissions": 2, "window": "day", "per_task": per_task})))
    url = "--phase", "dev", "--tool", "http://127.0.0.1:9"
    assert submit(arena, *url, task="date").exit_code == 0
    assert submit(arena, *url, task="phi").exit_code == 0
    third = submit(arena, *url, task="date")
    if per_task:
        assert third.exit_code == 0
        said = refusal(submit(arena, *url, task="date"))
        assert "team team-a has used its 2 submissions of date in phase dev this day" in said
    else:
        said = refusal(third)
        assert "team team-a has used its 2 submissions of the phase's tasks in phase dev this day" in said
    assert submit(arena, *url, team="team-b").exit_code == 0  # another team has its own


def test_a_phase_runs_under_its_own_time_budget_and_a_failed_run_goes_again_without_quota(arena, tmp_path, tool):
    created(arena, tmp_path, spec(phase(limits={"wall_seconds": 3}, quota={"submissions": 1})))
    tool.reset(delay=1.0)
    made = submit(arena, "--phase", "dev", "--tool", tool.url)
    assert made.exit_code == 0, made.stderr
    submission = int(made.stdout)
    arena.work()
    shown = arena.shown(submission, "organiser")
    assert shown["status"] == "FAILED"
    assert shown["reason"].startswith("time budget of 0.05 min exceeded after")  # the queue's is 120 min
    assert "has used its 1 submissions" in refusal(submit(arena, "--phase", "dev", "--tool", tool.url))
    problem(arena.call("POST", f"/submissions/{submission}/rerun"), 403, "the organisers' to do")
    tool.reset()
    rerun = arena.nb("submissions", "rerun", str(submission))
    assert (
        rerun.stdout
        == f"submission {submission}: RECEIVED — run again by organiser (command line): it costs no quota\n"
    )
    arena.work()
    assert arena.shown(submission)["status"] == "SCORED"
    assert "has used its 1 submissions" in refusal(submit(arena, "--phase", "dev", "--tool", tool.url))
    said = refusal(arena.nb("submissions", "rerun", str(submission)))
    assert said.endswith(f"submission {submission} is SCORED: only a FAILED one runs again")


# --- the platform API and what a team sees ------------------------------------------------------


def test_teams_cannot_make_or_move_a_challenge(arena, tmp_path):
    problem(arena.call("POST", "/challenges", json=spec()), 403, "making a challenge is the organisers' to do")
    said = problem(arena.call("POST", "/challenges", "organiser", json=spec() | {"name": 3}), 400)
    assert said == "the request's spec: name: should be a name (letters, digits, '_', '.', '-'; at most 60), not 3"
    made = arena.call("POST", "/challenges", "organiser", json=spec())
    assert made.status_code == 201, made.text
    assert made.json()["phases"][0]["state"] == "open"
    for move in ("open", "close", "freeze"):
        problem(arena.call("POST", f"/challenges/c1/phases/dev/{move}", "other"), 403, "the organisers' to do")
    assert arena.call("GET", "/challenges/c1").json()["phases"][0]["state"] == "open"
    closed = arena.call("POST", "/challenges/c1/phases/dev/close", "organiser")
    assert closed.json()["state"] == "closed"
    assert arena.call("POST", "/teams", json={"contact": "ana@example.org"}).status_code == 201
    late = arena.submit(challenge="c1", phase="dev", dataset="open", predictions="[]", predictionsName="p.json")
    problem(late, 409, "phase dev of challenge c1 closed at")
    reopened = arena.call(
        "POST", "/challenges/c1/phases/dev/open", "organiser", json={"until": when(1)}
    )  # fmt: skip
    assert reopened.json()["state"] == "open"
    problem(arena.call("GET", "/challenges/nope"), 404, "no challenge 'nope'")
    problem(arena.call("POST", "/challenges", "organiser", json=spec()), 409, "exists already")


def scored_pair(arena, tmp_path, visibility: str) -> tuple[int, int]:
    """Phase ``dev`` of ``visibility``; team-a and team-b each submit the perfect predictions; scored."""
    made = arena.call("POST", "/challenges", "organiser", json=spec(phase(visibility=visibility)))
    assert made.status_code == 201, made.text
    for who in ("team", "other"):  # each team registers itself
        assert arena.call("POST", "/teams", who, json={"contact": f"{who}@example.org"}).status_code == 201
    text = perfect(arena, tmp_path)
    body = {"challenge": "c1", "phase": "dev", "dataset": "open", "predictions": text, "predictionsName": "p.json"}
    mine, theirs = arena.submitted("team", **body), arena.submitted("other", **body)
    arena.work()
    assert arena.shown(mine, "organiser")["status"] == "SCORED"
    return mine, theirs


@pytest.mark.parametrize("visibility", ["private", "blind"])
def test_a_team_sees_no_score_of_a_hidden_phase_until_it_closes(arena, tmp_path, visibility):
    mine, theirs = scored_pair(arena, tmp_path, visibility)
    site = TestClient(create_site(arena.store))
    own = arena.shown(mine)
    assert own["status"] == "SCORED" and own["results"] == []
    problem(arena.call("GET", f"/submissions/{mine}/documents"), 403, "organisers only until it closes")
    problem(arena.call("GET", f"/submissions/{theirs}"), 404)
    board = arena.call("GET", "/challenges/c1/phases/dev/leaderboard").json()
    assert board["scoresHidden"] and "rows" not in board
    teams = {row["team"] for row in board["submissions"]}
    assert teams == ({"team-a"} if visibility == "blind" else {"team-a", "team-b"})
    assert all(set(row) == {"id", "team", "task", "dataset", "status"} for row in board["submissions"])
    organisers = arena.call("GET", "/challenges/c1/phases/dev/leaderboard", "organiser").json()
    assert {row["team"] for row in organisers["rows"]} == {"team-a", "team-b"}
    assert all(row["value"] == 1.0 for row in organisers["rows"])
    as_team = arena.nb("challenge", "leaderboard", "c1", "dev", "--as-team", "team-b")
    assert f"is {visibility}: scores are the organisers' until it closes" in as_team.stdout
    assert "1.0000" not in as_team.stdout
    # the public site shows none of it: no table cell, no submission page, no team page
    assert site.get(f"/submissions/{mine}").status_code == 404
    assert "team-a" not in site.get("/tasks/date").text
    assert site.get("/teams/team-a").status_code == 404
    home = site.get("/").text
    assert 'id="challenge-c1"' in home and "scores hidden until the phase closes" in home and "team-a" not in home

    arena.call("POST", "/challenges/c1/phases/dev/close", "organiser")
    assert arena.shown(mine)["results"][0]["scores"]
    board = arena.call("GET", "/challenges/c1/phases/dev/leaderboard", "other").json()
    assert not board["scoresHidden"] and {row["team"] for row in board["rows"]} == {"team-a", "team-b"}
    assert site.get(f"/submissions/{mine}").status_code == 200
    assert "team-b" in site.get("/tasks/date").text
    home = site.get("/").text.split('id="tasks"')[0]  # the challenge's section: its phase's leaders
    assert "scores hidden" not in home and "team-a" in home and "1.000" in home


def test_a_public_phase_shows_scores_as_they_come(arena, tmp_path):
    mine, _ = scored_pair(arena, tmp_path, "public")
    assert arena.shown(mine)["results"][0]["scores"]
    board = arena.call("GET", "/challenges/c1/phases/dev/leaderboard", "other").json()
    assert not board["scoresHidden"]
    assert [(row["team"], row["value"]) for row in board["rows"]] == [("team-a", 1.0), ("team-b", 1.0)]
    table = arena.nb("challenge", "leaderboard", "c1", "dev")
    assert table.exit_code == 0 and "1.0000 [1.0000, 1.0000]  1\n" in table.stdout


def test_organisers_disqualify_or_hide_a_submission_with_the_reason_kept(arena, tmp_path):
    mine, theirs = scored_pair(arena, tmp_path, "public")
    site = TestClient(create_site(arena.store))
    for move in ("disqualify", "hide"):
        refused = arena.call("POST", f"/submissions/{theirs}/{move}", json={"reason": "mine now"})
        problem(refused, 403, "the organisers' to do")
    done = arena.call("POST", f"/submissions/{mine}/disqualify", "organiser", json={"reason": "tuned on the test set"})
    assert done.status_code == 200, done.text
    assert arena.shown(mine)["removal"] == {"removal": "disqualified", "reason": "tuned on the test set"}
    board = arena.call("GET", "/challenges/c1/phases/dev/leaderboard", "other").json()
    assert {row["team"] for row in board["rows"]} == {"team-b"}
    assert site.get(f"/submissions/{mine}").status_code == 404
    assert "team-a" not in site.get("/tasks/date").text and "team-b" in site.get("/tasks/date").text
    problem(arena.call("POST", f"/submissions/{mine}/hide", "organiser", json={"reason": "x"}), 409, "already")
    hidden = arena.nb("submissions", "hide", str(theirs), "--reason", "a duplicate")
    assert hidden.stdout == f"submission {theirs}: hidden — a duplicate\n"
    assert arena.call("GET", "/challenges/c1/phases/dev/leaderboard", "organiser").json()["rows"] == []
    assert "nlpbench: error: reason: say why" in refusal(arena.nb("submissions", "hide", str(mine), "--reason", " "))


def test_a_submission_carries_a_description_and_links_shown_on_its_page(arena, tmp_path):
    links = {"paperUrl": "https://arxiv.org/abs/2601.00001", "codeUrl": "https://example.org/u:p@x/code?token=1"}
    text = perfect(arena, tmp_path)
    body = {"dataset": "open", "predictions": text, "predictionsName": "p.json", **links}
    made = arena.submitted(description="<b>rules</b> and a CRF", **body)
    arena.work()
    shown = arena.shown(made)
    assert shown["description"] == "<b>rules</b> and a CRF" and shown["paperUrl"] == links["paperUrl"]
    html = TestClient(create_site(arena.store)).get(f"/submissions/{made}").text
    assert "&lt;b&gt;rules&lt;/b&gt; and a CRF" in html and "<b>rules" not in html
    assert f'href="{links["paperUrl"]}"' in html
    assert 'href="https://example.org/u:p@x/code"' in html  # no query: it may carry a credential
    for bad in ("javascript:alert(1)", "ftp://example.org/x", "http://[::1", "https://"):
        problem(arena.submit(paperUrl=bad, predictions="[]", predictionsName="p.json"), 400, "not an http(s) URL")
    said = refusal(arena.nb("submit", "--team", "t", "--task", "date", "--dataset", "open", "--predictions",
                            tmp_path / "open.json", "--code", "file:///etc/passwd"))  # fmt: skip
    assert said == "nlpbench: error: --code: not an http(s) URL of at most 500 characters"


def test_only_a_registered_team_submits_to_a_phase_and_its_contact_is_the_organisers(arena, tmp_path):
    made = arena.call("POST", "/challenges", "organiser", json=spec())
    assert made.status_code == 201, made.text
    body = {"challenge": "c1", "phase": "dev", "dataset": "open", "predictions": "[]", "predictionsName": "p.json"}
    problem(arena.submit(**body), 404, "team team-a is not registered: register it first")
    problem(arena.call("POST", "/teams", json={"name": "team-b", "contact": "x@example.org"}), 403, "its own team")
    mine = {"contact": "ana@example.org", "affiliation": "A University"}
    assert arena.call("POST", "/teams", json=mine).json() == {"name": "team-a", **mine}
    assert arena.submit(**body).status_code == 201
    assert arena.call("GET", "/teams", "other").json() == {"teams": [{"name": "team-a", "affiliation": "A University"}]}
    assert arena.call("GET", "/teams", "team").json()["teams"][0]["contact"] == "ana@example.org"
    listed = arena.nb("challenge", "teams", "--format", "json")
    assert json.loads(listed.stdout) == [{"name": "team-a", **mine}]
    said = refusal(arena.nb("challenge", "team", "team-c", "--contact", " "))
    assert said == "nlpbench: error: contact: how to reach the team's members (an e-mail address)"
