"""Every page and export of the leaderboard over a store the platform seeded and scored."""

from __future__ import annotations

import csv
import html
import io
import re
from urllib import parse

import pytest

from tests.web.seeding import CANARY, PRIVATE, PUBLIC


def test_home_lists_every_task_with_its_scored_submissions(client):
    page = client.get("/")
    assert page.status_code == 200 and 'href="/static/site.css"' in page.text
    assert '<a href="/tasks/date">date</a>' in page.text
    rows = {row["task"]: row for row in client.get("/tasks.json").json()}
    assert rows["date"]["scored"] == 7 and rows["date"]["teams"] == 4  # three teams twice, the tool once
    assert rows["ner"]["scored"] == 1 and rows["coref"]["scored"] == 0
    exported = {row["task"]: row for row in csv.DictReader(io.StringIO(client.get("/tasks.csv").text))}
    assert exported.keys() == rows.keys() and exported["date"]["scored"] == "7"
    assert client.get("/static/site.css").status_code == 200
    assert exported["date"]["leader team"] == "alpha" and exported["ner"]["leader team"] == "alpha"


def test_home_shows_each_tasks_leaders_with_score_and_interval(client):
    """The leaders of each dataset column: rank group 1, with the stored score and interval of the table."""
    table = {row["team"]: row for row in client.get("/tasks/date.json").json()}
    page = client.get("/").text
    date_row = page.split('<a href="/tasks/date">date</a>')[1].split("</tr>")[0]
    for dataset in (PUBLIC, PRIVATE):
        leaders = [team for team, row in table.items() if row[f"{dataset} rank"] == 1]
        assert leaders and len(leaders) < len(table)  # not everyone leads
        for team in leaders:
            row = table[team]
            shown = f"{row[f'{dataset} ci_low']:.3f}, {row[f'{dataset} ci_high']:.3f}]"
            assert f'{dataset}</span>: <span class="tool">{row["tool"]}</span>' in date_row and shown in date_row
    losers = [team for team, row in table.items() if all(row[f"{d} rank"] not in (1, None) for d in (PUBLIC, PRIVATE))]
    assert all(f">{team}</a>" not in date_row for team in losers)
    coref = page.split('<a href="/tasks/coref">coref</a>')[1].split("</tr>")[0]
    assert coref.endswith("<td>—</td>")  # nothing scored: no leaders


def test_a_task_table_ranks_tools_by_token_f1_with_intervals_and_rank_groups(client):
    rows = client.get("/tasks/date.json").json()
    assert len(rows) == 4  # three teams' prediction files and the served tool
    for row in rows:
        value = row[PRIVATE]
        assert row[f"{PRIVATE} ci_low"] <= value <= row[f"{PRIVATE} ci_high"]
    public = sorted((row for row in rows if row[PUBLIC] is not None), key=lambda r: -r[PUBLIC])
    assert [row["team"] for row in public] == ["alpha", "beta", "gamma"]  # alpha drops fewest annotations
    assert public[0][f"{PUBLIC} rank"] == 1 and public[-1][f"{PUBLIC} rank"] > 1
    ranks = [row[f"{PUBLIC} rank"] for row in public]
    assert ranks == sorted(ranks)
    tool = next(row for row in rows if row["team"] == "delta")
    assert tool["apiVersion"] and tool["version"] and tool["url"] and tool["license"]  # from GET /tool
    page = client.get("/tasks/date")
    assert page.status_code == 200 and 'class="ci"' in page.text and 'title="rank group"' in page.text
    assert '<figure class="plot" id="best-over-time"><svg' in page.text


def test_an_empty_leaderboard_exports_its_header_row(client):
    assert client.get("/tasks/coref.json").json() == []  # nothing scored on it
    assert client.get("/tasks/coref.csv").text.splitlines() == [
        "team,tool,version,license,url,apiVersion,digest,submitted"
    ]
    header = client.get("/tasks/date.csv").text.splitlines()[0].split(",")
    assert header[:2] == ["team", "tool"] and f"{PRIVATE} ci_low" in header and header[-1] == "submitted"


def test_sorting_is_a_query_parameter(client):
    ascending = client.get("/tasks/date", params={"sort": PUBLIC, "order": "asc"}).text
    teams = re.findall(r'<td class="name"><a href="/teams/(\w+)">', ascending)
    assert teams[:3] == ["gamma", "beta", "alpha"] and teams[-1] == "delta"  # delta has no public score: last
    by_team = re.findall(
        r'<td class="name"><a href="/teams/(\w+)">', client.get("/tasks/date?sort=team&order=asc").text
    )
    assert by_team == sorted(by_team)
    csv_rows = list(csv.DictReader(io.StringIO(client.get(f"/tasks/date.csv?sort={PUBLIC}&order=asc").text)))
    assert [row["team"] for row in csv_rows][:3] == ["gamma", "beta", "alpha"]


def test_latest_instead_of_best_is_a_setting(client):
    best = client.get("/tasks/date.json").json()
    latest = client.get("/tasks/date.json?pick=latest").json()
    assert {row["team"] for row in best} == {row["team"] for row in latest}
    assert client.get("/tasks/date?pick=worst").status_code == 404


@pytest.mark.parametrize("rows", ["teams", "all"])
@pytest.mark.parametrize("pick", ["best", "latest"])
def test_every_link_of_a_task_page_to_itself_keeps_what_it_shows_but_what_it_changes(client, pick, rows):
    page = client.get("/tasks/date", params={"sort": "team", "order": "asc", "pick": pick, "rows": rows}).text
    shown = {"sort": "team", "order": "asc", "pick": pick, "rows": rows}
    links = {
        text: dict(parse.parse_qsl(html.unescape(query)))
        for query, text in re.findall(r'<a href="\?([^"]*)">([^<]*)</a>', page)
    }
    assert len(links) > 4, links
    for text, query in links.items():
        query.setdefault("rows", "teams")
        changed = {key for key in shown if query.get(key) != shown[key]}
        if text.startswith("show "):  # the other pick
            assert changed == {"pick"} and query["pick"] == text.removeprefix("show "), text
        elif text in ("One row per team", "Every submission"):
            assert changed == {"rows"}, text
        else:  # a column's heading: its own sort, descending first (the page is ascending)
            assert changed <= {"sort", "order"} and query["order"] == "desc", text


def test_a_submission_page_shows_every_metric_with_intervals_subtypes_and_plots(client, seeded):
    _, ids = seeded
    page = client.get(f"/submissions/{ids[f'alpha/phi/{PUBLIC}']}")
    assert page.status_code == 200
    for annotation_type in ("overall", "date", "person_name", "location", "id", "contact"):
        assert f">{annotation_type}</h3>" in page.text
    assert page.text.count("<svg") == 6  # a plot of the metrics with their intervals per type, and overall
    assert re.search(r"<td>token</td>.*?\[0\.\d{3}, [01]\.\d{3}\]", page.text, re.S)
    assert "Per subtype" in page.text and "<td>doctor</td>" in page.text
    assert 'li class="context"' in page.text  # public: errors in context
    data = client.get(f"/submissions/{ids[f'alpha/phi/{PUBLIC}']}.json").json()
    (result,) = data["results"]
    token = next(r for r in result["rows"] if r["type"] == "date" and r["metric"] == "token" and "label" not in r)
    assert token["f1_ci_low"] <= token["f1"] <= token["f1_ci_high"]
    # the overall (micro over types) row: the types' counts summed, its interval the task page's overall column's
    overall = next(r for r in result["rows"] if r["type"] == "overall" and r["metric"] == "token")
    typed = [r for r in result["rows"] if r["type"] != "overall" and r["metric"] == "token" and "label" not in r
             and "average" not in r]  # fmt: skip
    assert overall["tp"] == sum(r["tp"] for r in typed) and overall["fn"] == sum(r["fn"] for r in typed)
    (line,) = [row for row in client.get("/tasks/phi.json").json() if row[f"{PUBLIC}/overall submission"] == data["id"]]
    assert (overall["f1"], overall["f1_ci_low"], overall["f1_ci_high"]) == pytest.approx(
        (line[f"{PUBLIC}/overall"], line[f"{PUBLIC}/overall ci_low"], line[f"{PUBLIC}/overall ci_high"])
    )
    assert any(e["kind"] == "FN" for e in result["errors"])
    exported = list(csv.DictReader(io.StringIO(client.get(f"/submissions/{data['id']}.csv").text)))
    assert len(exported) == len(result["rows"])


def test_a_result_has_a_permanent_url_and_exports(client, seeded):
    _, ids = seeded
    data = client.get(f"/submissions/{ids[f'beta/date/{PUBLIC}']}.json").json()
    result_id = data["results"][0]["id"]
    page = client.get(f"/results/{result_id}")
    assert page.status_code == 200 and f'href="/results/{result_id}"' in page.text
    assert client.get(f"/results/{result_id}.json").json()["reproducibility"]["dataset"]["name"] == PUBLIC
    assert "metric" in client.get(f"/results/{result_id}.csv").text.splitlines()[0]


def test_a_file_task_is_ranked_by_its_primary_metric(client, seeded):
    _, ids = seeded
    (row,) = client.get("/tasks/ner.json").json()
    assert row["conll-demo"] == pytest.approx(0.4444444444444445)  # strict F1 of the NER example
    page = client.get(f"/submissions/{ids['alpha/ner/conll-demo']}")
    assert page.status_code == 200 and "private: counts only" in page.text


def test_team_pages_list_their_submissions(client, seeded):
    _, ids = seeded
    page = client.get("/teams/beta")
    assert page.status_code == 200 and f'href="/submissions/{ids[f"beta/phi/{PRIVATE}"]}"' in page.text
    assert len(client.get("/teams/beta.json").json()) == 4
    assert client.get("/teams/beta.csv").text.startswith("submission,task,dataset,tool,status,submitted")


@pytest.mark.parametrize("url", ["/submissions/99999", "/results/99999", "/teams/nobody", "/tasks/nothing"])
def test_unknown_ids_get_a_404_page(client, url):
    page = client.get(url)
    assert page.status_code == 404 and "<h1>Not found</h1>" in page.text


def test_no_page_or_export_quotes_a_private_note(client, seeded):
    _, ids = seeded
    urls = [
        "/",
        "/tasks/phi",
        "/tasks/date",
        "/tasks/date.json",
        "/teams/delta",
        f"/tasks/phi?rows=all&sort={PRIVATE}/date",
    ]
    for key, submission in ids.items():
        urls += [f"/submissions/{submission}", f"/submissions/{submission}.json", f"/submissions/{submission}.csv"]
        if key.endswith(PRIVATE):
            urls.append(f"/results/{client.get(f'/submissions/{submission}.json').json()['results'][0]['id']}.json")
    private = [ids[key] for key in ids if key.endswith(PRIVATE)]
    for url in urls:
        page = client.get(url)
        assert page.status_code == 200, url
        assert CANARY.split()[0] not in page.text, url
    for submission in private:
        assert client.get(f"/submissions/{submission}.json").json()["results"][0]["errors"] == []
