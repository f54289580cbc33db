"""``nlpbench demo`` end to end on a few notes: two data sites, a centre, a ranked table, the leaderboard."""

import json
import posixpath
import re
import subprocess
import sys
import urllib.parse

import httpx
import pytest

TYPES = ("contact", "date", "id", "location", "person_name")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """One run of ``nlpbench demo --no-serve`` on 8 notes: its output folder and its result."""
    from typer.testing import CliRunner

    from nlpbench.cli import app

    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(app, ["demo", "--notes", "8", "--tools", "phi", "--out", str(out), "--no-serve"])
    assert result.exit_code == 0, result.stderr
    return out, result


def test_demo_submits_scores_ranks_and_writes_the_leaderboard(cli, demo):
    out, result = demo
    assert "site north:\ndataset synthetic: 4 notes of 4 patients" in result.stdout  # the notes, split
    assert "site south:\ndataset synthetic: 4 notes of 4 patients" in result.stdout
    assert "submission 1: phi, run at north, south" in result.stderr
    assert "south: run 2: SCORED sent" in result.stderr and "north: run 1: SCORED sent" in result.stderr
    assert "token F1 (standard), 95 % intervals, rank groups" in result.stdout
    printed = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] in TYPES:
            printed[fields[0]] = fields
    assert sorted(printed) == list(TYPES)
    # the store holds one scored submission of the tool, the one the table names
    listed = cli("submissions", "list", "--db", f"sqlite:///{out / 'nlpbench.db'}", "--format", "json")
    # the centre's store holds no note: the notes are in the sites' stores only
    assert cli("dataset", "list", "--db", f"sqlite:///{out / 'nlpbench.db'}").stdout.strip() == ""
    (submission,) = json.loads(listed.stdout)
    assert (submission["id"], submission["status"], submission["team"]) == (1, "SCORED", "phi")
    # the static site: its task table has the printed F1 and interval of every type, its links lead to files
    (row,) = json.loads((out / "site" / "tasks" / "phi.json").read_text())
    at_sites = {line.split()[1]: float(line.split()[2]) for line in result.stdout.splitlines() if line[2:6] == "phi "}
    assert at_sites == {name: round(row[f"site {name}"], 4) for name in ("north", "south")}  # each site's own F1
    assert row["synthetic/overall ci_low"] <= row["synthetic/overall"] <= row["synthetic/overall ci_high"]
    for name, (_, rank, team, _tool, f1, low, high, shown) in printed.items():
        assert (rank, team, shown) == ("1", "phi", "1")
        key = f"synthetic/{name}"
        assert [float(f1), float(low), float(high)] == [round(row[key + s], 4) for s in ("", " ci_low", " ci_high")]
        assert float(low) <= float(f1) <= float(high)
    page = (out / "site" / "tasks" / "phi.html").read_text()
    assert 'href="../submissions/1.html"' in page and 'href="../static/site.css"' in page
    assert (out / "site" / "submissions" / "1.html").is_file() and (out / "site" / "index.html").is_file()


def test_every_link_of_the_static_site_leads_to_a_written_file(demo):
    site = demo[0] / "site"
    pages = sorted(site.rglob("*.html"))
    linked = set()
    for page in pages:
        for link in re.findall(r'(?:href|src)="([^"]*)"', page.read_text()):
            if link.startswith("#") or re.match(r"[a-z][a-z0-9+.-]*:", link):
                continue  # within the page, or another site's
            assert not link.startswith(("/", "?")) and "?" not in link, (page, link)  # nothing a server would answer
            target = posixpath.normpath(posixpath.join(page.parent.relative_to(site).as_posix(), link.split("#")[0]))
            assert (site / urllib.parse.unquote(target)).is_file(), (page, link)
            linked.add(target)
    # each variant a query selected is a file of its own: a task's latest pick, its every submission under
    # each pick, the exports of each pick; the site's own pick (best) is the page without a suffix
    assert {f"tasks/phi{variant}" for variant in ("-latest.html", "-latest-all.html", "-all.html", "-latest.csv",
                                                  "-latest.json", ".csv", ".json")} <= linked  # fmt: skip
    assert not list(site.rglob("*best*"))
    latest = (site / "tasks" / "phi-latest.html").read_text()
    assert "latest scored submission" in latest and "best scored submission" not in latest
    assert "best scored submission" in (site / "tasks" / "phi.html").read_text()


def test_demo_serves_the_leaderboard_at_the_url_it_prints(tmp_path):
    command = [sys.executable, "-m", "nlpbench", "demo", "--notes", "5", "--tools", "phi", "--out", str(tmp_path)]
    process = subprocess.Popen([*command, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in process.stderr:
            found = re.match(r"leaderboard at (http://127\.0\.0\.1:\d+/)", line)
            if found:
                break
        else:
            raise AssertionError(f"no leaderboard URL; exit status {process.wait()}")
        page = httpx.get(found.group(1) + "tasks/phi", timeout=30)
        assert page.status_code == 200 and "nlpbench-phi-annotator" in page.text
        assert 'href="/submissions/1"' in page.text
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_unknown_tool_is_one_line(cli, tmp_path):
    result = cli("demo", "--tools", "phi,nonesuch", "--out", tmp_path)
    assert result.exit_code == 2
    assert result.stderr.startswith("nlpbench: error: unknown annotator 'nonesuch'; known:")


def test_fewer_notes_than_sites_is_one_line(cli, tmp_path):
    result = cli("demo", "--notes", "1", "--tools", "phi", "--out", tmp_path)
    assert (result.exit_code, result.stderr) == (
        2,
        "nlpbench: error: --notes 1: at least 2, a note for each data site\n",
    )


def test_run_benchmarks_a_running_tool_on_any_dataset(cli, tmp_path):
    from nlpbench.runner.services import local_tools

    assert cli("synth", "--notes", "8", "--seed", "3", tmp_path / "notes.json").exit_code == 0
    with local_tools(["phi"], tmp_path / "logs") as urls:
        result = cli(
            "run", "--notes", tmp_path / "notes.json", "--tool", f"baseline={urls['phi']}", "--out", tmp_path / "o"
        )
    assert result.exit_code == 0, result.stderr
    assert any(line.strip().startswith("baseline") for line in result.stdout.splitlines())
    assert "8 notes of" in (tmp_path / "o" / "report.html").read_text()
    assert (tmp_path / "o" / "baseline.json").is_file()


def test_run_refuses_a_tool_without_a_url(cli, tmp_path):
    result = cli("run", "--notes", tmp_path / "x.json", "--tool", "phi")
    assert result.exit_code == 2 and "give NAME=URL" in result.stderr


def test_adapter_without_its_extra_names_the_extra(cli, tmp_path, monkeypatch):
    from nlpbench.annotators import REGISTRY, load_all

    load_all()
    monkeypatch.delitem(REGISTRY._items, "philter", raising=False)  # as on an install without the extra
    result = cli("demo", "--tools", "philter", "--out", tmp_path)
    assert result.exit_code == 2
    assert result.stderr == "nlpbench: error: annotator 'philter' needs its package: pip install 'nlpbench[philter]'\n"
