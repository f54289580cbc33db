import json

import pytest

from nlpbench.errors import InputError, InputWarning
from nlpbench.formats import omin
from nlpbench.formats import ontology as ontology_format


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_ner_gold_untyped_and_typed_and_tool_files(tmp_path):
    gold = write(tmp_path, "ner.csv", 'id,sample,entities\nA,"X, Y",X\nB,Z,Z\nA,"X, Y",Y\n')
    docs = list(omin.read_ner(gold))
    assert [(d.id, [(m.text, m.label) for m in d.metadata["mentions"]]) for d in docs] == [
        ("A", [("X", None), ("Y", None)]),
        ("B", [("Z", None)]),
    ]
    typed = write(tmp_path, "ner_conll.csv", "id,sample,entities,labels\nA,s,X,PER\nB,s,,\n")
    assert [len(d.metadata["mentions"]) for d in omin.read_ner(typed)] == [1, 0]  # B is there, without mentions
    tool = write(tmp_path, "tool.csv", "index,c5_unique_id,c119_text,entities,labels\n1,A,s,x,PERSON\n")
    (doc,) = omin.read_ner(tool)
    assert doc.metadata["mentions"][0].label == "PERSON"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("sample,entities\ns,X\n", "header: no document-id column"),
        ("id,entities,labels\nA,X,\n", "row 1 \\(line 2\\): a mention \\(1 characters\\) without a label"),
        ("id,entities,labels\nA,,PER\n", "row 1 \\(line 2\\): label 'PER' without a mention"),
        ("id,entities\nA,X,extra\n", "more cells than header columns"),
    ],
)
def test_bad_ner_rows(tmp_path, content, message):
    with pytest.raises(InputError, match=message):
        list(omin.read_ner(write(tmp_path, "bad.csv", content)))


def test_token_source(tmp_path):
    line = {"doc_key": "faa/3_19750315005389A_0", "sentences": [["tailwheel", "cocked"], ["tkof", "."]]}
    (doc,) = omin.read_token_source(write(tmp_path, "t.jsonlines", json.dumps(line) + "\n"))
    assert (doc.id, doc.text, doc.metadata["tokens"][2]) == ("19750315005389A", "tailwheel cocked tkof .", (17, 21))
    with pytest.raises(InputError, match="line 1: doc_key 'x' is not"):
        list(omin.read_token_source(write(tmp_path, "bad.jsonlines", '{"doc_key": "x", "sentences": []}\n')))


def test_links(tmp_path):
    gold = write(
        tmp_path, "nel.csv", "id,sample,entity,qid\nA,s,\"['FUEL TANK', 'TANK', None]\",\"[None, 'Q2', None]\"\n"
    )
    (entity,) = omin.read_gold_links(gold)
    assert entity.choices == (("FUEL TANK", None), ("TANK", "Q2"), (None, None))
    bad = write(tmp_path, "bad.csv", 'id,sample,entity,qid\nA,s,FUEL,"[None]"\n')
    with pytest.raises(InputError, match="entity is not a Python list literal \\(4 characters\\)"):
        list(omin.read_gold_links(bad))
    tool = write(tmp_path, "tool.csv", "c5_id,mentions,bi_qid\nA,fuel,Q1\nA,tank,\n")
    with pytest.warns(InputWarning, match="1 rows have no bi_qid"):
        links = list(omin.read_predicted_links(tool, "bi_qid"))
    assert [(link.mention, link.identifier) for link in links] == [("fuel", "Q1")]


def test_triples_skip_empty_rows(tmp_path):
    path = write(
        tmp_path,
        "re.csv",
        "id,subject,subject_type,relation,relation_type,object,object_type\nA,Aircraft,Object,struck,Collision,Tree,\nB,,,,,,\n",
    )
    with pytest.warns(InputWarning, match="skipped 1 empty rows"):
        (triple,) = omin.read_triples(path)
    assert (triple.head.text, triple.label, triple.tail.text, triple.tail.label) == ("Aircraft", "struck", "Tree", None)


def test_ontology_file(tmp_path):
    path = write(
        tmp_path,
        "o.json",
        json.dumps(
            {
                "total": 10,
                "nodes": {"E": {"count": 10}, "A": {"subclass_of": ["E"], "count": 3}, "x": {"instance_of": ["A"]}},
            }
        ),
    )
    ontology = ontology_format.read(path)
    assert (ontology.total, ontology.count("A"), ontology.count("x"), ontology.nodes["x"].parents) == (10, 3, 1, ("A",))
    bad = write(tmp_path, "bad.json", json.dumps({"total": 10, "nodes": {"x": {"instance_of": ["A"]}}}))
    with pytest.raises(InputError, match="node x: parent A is not a node"):
        ontology_format.read(bad)
    with pytest.raises(InputError, match="positive integer total"):
        ontology_format.read(write(tmp_path, "bad2.json", '{"nodes": {}}'))
