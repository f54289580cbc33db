import json

import pytest

KEY = """#begin document (doc); part 000
w 0 0 Mary (1)
w 0 1 saw -
w 0 2 her (1)
w 0 3 brother (2
w 0 4 Tom 2)

w 0 5 . -
#end document
#begin document (doc); part 001
w 1 0 He (2)
w 1 1 left (3)
#end document
"""
RESPONSE = KEY.replace("her (1)", "her (2)")

COUNTED = ("mentions", "muc", "bcub", "ceafm", "ceafe", "lea")


def files(tmp_path, key=KEY, response=RESPONSE, suffix="conll"):
    key_path, response_path = tmp_path / f"key.{suffix}", tmp_path / f"response.{suffix}"
    key_path.write_text(key)
    response_path.write_text(response)
    return key_path, response_path


def score_json(cli, key, response, *options):
    result = cli("score", "coref", "--key", key, "--response", response, "--format", "json", *options)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_json_follows_the_output_contract(cli, tmp_path):
    report = score_json(cli, *files(tmp_path), "--profile", "conll2012")
    assert list(report) == ["task", "profile", "inputs", "scores", "per_document", "warnings"]
    assert (report["task"], report["profile"]) == ("coref", "conll2012")
    overall = [row for row in report["scores"] if "label" not in row]
    assert [row["metric"] for row in overall] == [*COUNTED[:5], "blanc", "lea", "conll"]
    for row in overall:
        if row["metric"] in COUNTED:
            assert list(row) == [
                "metric", "recall_num", "recall_den", "precision_num", "precision_den", "recall", "precision", "f1",
            ]  # fmt: skip
        elif row["metric"] == "blanc":
            assert list(row) == ["metric", "recall", "precision", "f1"]
        else:
            assert list(row) == ["metric", "f1"]
    parts = [row["label"] for row in report["scores"] if row["metric"] == "blanc" and "label" in row]
    assert parts == ["coreference", "non-coreference"]


def test_parts_are_documents_and_per_document_counts_add_up(cli, tmp_path):
    report = score_json(cli, *files(tmp_path))
    documents = [row["document"] for row in report["per_document"]]
    assert list(dict.fromkeys(documents)) == ["(doc); part 000", "(doc); part 001"]
    for metric in COUNTED:
        total = next(row for row in report["scores"] if row["metric"] == metric)
        rows = [row for row in report["per_document"] if row["metric"] == metric]
        for field in ("recall_num", "recall_den", "precision_num", "precision_den"):
            assert sum(row[field] for row in rows) == pytest.approx(total[field])
    muc = next(row for row in report["scores"] if row["metric"] == "muc")
    # key links: Mary-her (1); response links: brother Tom-her (1); no common link
    assert [muc[f] for f in ("recall_num", "recall_den", "precision_num", "precision_den")] == [0, 1, 0, 1]


def test_same_input_same_bytes(cli, tmp_path):
    key, response = files(tmp_path)
    args = ("score", "coref", "--key", key, "--response", response, "--format", "json")
    assert cli(*args).stdout == cli(*args).stdout


def test_perfect_response_and_table(cli, tmp_path):
    key, _ = files(tmp_path)
    result = cli("score", "coref", "--key", key, "--response", key)
    assert result.exit_code == 0
    assert "profile standard" in result.stdout and "conll" in result.stdout


FIRST, SECOND = "document (doc); part 000", "document (doc); part 001"
MALFORMED = {
    "unclosed mention": (
        KEY.replace("Tom 2)", "Tom -"),
        f"{FIRST}, line 9: chain 2 opens a mention at token 3 (line 5) that never closes",
    ),
    "close without open": (
        KEY.replace("brother (2", "brother -"),
        f"{FIRST}, line 6: chain 2 closes a mention at token 4 that was never opened",
    ),
    "missing end before the next document": (
        KEY.replace("#end document\n#begin", "#begin", 1),
        f"{FIRST}, line 9: the document begun at line 1 has no #end document before this line begins another",
    ),
    "missing end at the end of the file": (
        KEY.rsplit("#end document", 1)[0],
        f"{SECOND}, line 12: the document begun at line 10 has no #end document",
    ),
    "document begun twice": (
        KEY.replace("part 001", "part 000"),
        f"{FIRST}, line 10: the document is begun a second time (first at line 1)",
    ),
}


@pytest.mark.parametrize(("broken", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_conll_is_one_line_and_exit_2(cli, tmp_path, broken, message):
    key, response = files(tmp_path, key=broken)
    result = cli("score", "coref", "--key", key, "--response", response)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr == f"nlpbench: error: {key}: {message}\n"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"doc_key": "a", "clusters": [[[0, 1]]', "line 2: malformed JSON: Input data was truncated"),
        ('["a"]', "line 2: a line must be a JSON object"),
        ('{"clusters": []}', 'line 2: "doc_key" must be a string'),
        ('{"doc_key": "b", "clusters": [[[2, 1]]]}', 'line 2 (doc_key b): "clusters"[0]: mention [2, 1] ends before'),
        ('{"doc_key": "b", "clusters": [[[0, "1"]]]}', "line 2 (doc_key b): \"clusters\"[0]: mention [0, '1'] has an"),
        ('{"doc_key": "b", "sentences": [["x"]], "clusters": [[[0, 1]]]}', "line 2 (doc_key b): mention [0, 1] ends"),
    ],
)
def test_bad_jsonl_is_one_line_and_exit_2(cli, tmp_path, line, message):
    good = '{"doc_key": "a", "clusters": [[[0, 1], [3, 3]]]}\n'
    key, response = files(tmp_path, key=good + line + "\n", response=good, suffix="jsonl")
    result = cli("score", "coref", "--key", key, "--response", response, "--key-format", "jsonl")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"nlpbench: error: {key}: {message}")


def test_jsonl_response_reads_predicted_clusters(cli, tmp_path):
    key = '{"doc_key": "a", "sentences": [["A", "b", "c", "d"]], "clusters": [[[0, 0], [2, 3]]]}\n'
    response = '{"doc_key": "a", "clusters": [[[0, 0], [2, 3]]], "predicted_clusters": [[[0, 0], [1, 1]]]}\n'
    report = score_json(cli, *files(tmp_path, key, response, "jsonl"), "--key-format", "jsonl")
    mentions = next(row for row in report["scores"] if row["metric"] == "mentions")
    assert (mentions["recall_num"], mentions["recall_den"]) == (1, 2)


def test_mixed_formats_and_csv_columns(cli, tmp_path):
    (tmp_path / "key.jsonl").write_text('{"doc_key": "d1", "clusters": [[[0, 0], [2, 3]], [[5, 5], [7, 7]]]}\n')
    (tmp_path / "tool.csv").write_text('doc,clusters_out\nd1,"[[[0,0],[2,3]]]"\nd2,[]\n')
    args = ("--key", tmp_path / "key.jsonl", "--key-format", "jsonl", "--response", tmp_path / "tool.csv")
    result = cli("score", "coref", *args, "--response-format", "omin-csv")
    assert result.exit_code == 2
    assert "header: no id column" in result.stderr
    columns = ("--id-column", "doc", "--clusters-column", "clusters_out")
    result = cli("score", "coref", *args, "--response-format", "omin-csv", *columns, "--format", "json")
    report = json.loads(result.stdout)
    muc = next(row for row in report["scores"] if row["metric"] == "muc")
    assert (muc["recall"], muc["precision"]) == (0.5, 1.0)
    assert report["warnings"] == ["response documents not in the key, not scored: 1 (d2)"]
    result = cli("score", "coref", *args, "--response-format", "jsonl", "--id-column", "doc")
    assert result.exit_code == 2 and "applies to omin-csv files, not to jsonl" in result.stderr


def test_unknown_format_and_profile(cli, tmp_path):
    key, response = files(tmp_path)
    result = cli("score", "coref", "--key", key, "--response", response, "--key-format", "conll")
    assert result.exit_code == 2 and "unknown coreference format 'conll'; known: conll2012, jsonl, omin-csv" in (
        result.stderr
    )
    result = cli("score", "coref", "--key", key, "--response", response, "--profile", "v8")
    assert result.exit_code == 2 and "unknown profile 'v8' for coref; known: conll2012, e2e, standard" in result.stderr


def test_remove_singletons_and_nested(cli, tmp_path):
    key = "#begin document d\nx (1\nx (1)\nx 1)\nx (2)\nx (2)\nx (3)\n#end document\n"
    response = key.replace("x (3)", "x -")
    key_path, response_path = files(tmp_path, key, response)
    plain = score_json(cli, key_path, response_path)
    options = ("--remove-singletons", "--remove-nested")
    trimmed = score_json(cli, key_path, response_path, *options)
    mentions = {r["metric"]: r for r in plain["scores"]}["mentions"]
    assert (mentions["recall_num"], mentions["recall_den"]) == (4, 5)
    # chain 1 = {0-2, 1-1}: 1-1 nests in 0-2 and goes, leaving a singleton that goes too; chain 3 is a singleton
    trimmed_mentions = {r["metric"]: r for r in trimmed["scores"]}["mentions"]
    assert (trimmed_mentions["recall_num"], trimmed_mentions["recall_den"]) == (2, 2)
    assert trimmed["warnings"] == [
        "nested mentions removed: 1 in the key, 1 in the response",
        "singleton clusters removed: 2 in the key, 1 in the response",
    ]
    assert trimmed["inputs"]["remove_singletons"] and trimmed["inputs"]["remove_nested"]


def test_missing_and_extra_documents_are_reported(cli, tmp_path):
    response = KEY.split("#begin document (doc); part 001")[0] + "#begin document other\nx (1)\n#end document\n"
    report = score_json(cli, *files(tmp_path, KEY, response))
    assert report["warnings"] == [
        "key documents missing from the response, scored against no clusters: 1 ((doc); part 001)",
        "response documents not in the key, not scored: 1 (other)",
    ]
    assert {row["document"] for row in report["per_document"]} == {"(doc); part 000", "(doc); part 001"}


def test_too_many_repeats_refused_by_conll2012_only(cli, tmp_path):
    key = "#begin document d\nx (1)\nx (1)\n#end document\n"
    response = "#begin document d\nx (1)" + "|(1)" * 11 + "\nx (1)\n#end document\n"
    key_path, response_path = files(tmp_path, key, response)
    result = cli("score", "coref", "--key", key_path, "--response", response_path, "--profile", "conll2012")
    assert result.exit_code == 2
    assert "more than 10 repeated response mentions: the reference scorer refuses to score" in result.stderr
    report = score_json(cli, key_path, response_path)
    assert report["warnings"] == ["repeated mentions removed, the first kept (rule merge): 11"]
    assert {r["metric"]: r for r in report["scores"]}["muc"]["f1"] == 1.0
