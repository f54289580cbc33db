"""What the fuzz test feeds: a valid seed for every format, and every command that reads them.

Seeds are small valid files; a :class:`Case` names the files one command reads
(as ``{name}`` placeholders in its arguments) and the fuzz test damages one of
them. The document formats' seeds are written by nlpbench's own writers from
two documents, so that each starts out valid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nlpbench import formats
from nlpbench.model import Annotation, Document, Relation, Span

NER_TEXT = "John lives in Paris. He met Mary."
PHI_TEXT = "Seen 2020-01-02 by Dr. John Lee in Paris."


def _ner_document() -> Document:
    annotations = [
        Annotation("n1", Span(0, 4), "PER", "John", {"Negated": True}, id="T1"),
        Annotation("n1", Span(14, 19), "LOC", "Paris", id="T2"),
        Annotation("n1", Span(28, 32), "PER", "Mary", id="T3"),
    ]
    return Document("n1", NER_TEXT, annotations, relations=[Relation("lives_in", "T1", "T2", id="R1")])


def _phi_document(doc_id: str = "n2") -> Document:
    annotations = [
        Annotation(doc_id, Span(5, 15), "date", "2020-01-02", {"dateFormat": "YYYY-MM-DD"}),
        Annotation(doc_id, Span(23, 31), "person_name", "John Lee", {"personType": "doctor"}),
        Annotation(doc_id, Span(35, 40), "location", "Paris", {"locationType": "city"}),
    ]
    return Document(doc_id, PHI_TEXT, annotations)


TIMELINES = {"p1": [["taxol", "contains-1", "2013-01-02"], ["taxol", "begins-on", "2013-01"]], "p2": []}
TIMELINES_PRED = {"p1": [["taxol", "contains-1", "2013-01-02"]], "p2": [["cisplatin", "ends-on", "2014"]]}
TSV_COLUMNS = (
    "DCT patient_id chemo_text chemo_annotation_id normed_timex timex_annotation_id tlink note_name tlink_inst"
)
TSV_HEADER = "\t".join(TSV_COLUMNS.split()) + "\n"
TSV_ROW = "2013-01-01\tp1\ttaxol\t1@e@p1_note1@system\t2013-01-05\t2@e@p1_note1@system\tcontains-1\tp1_note1\tx\n"
CONLL2012 = (
    "#begin document (d1); part 000\nd1\t0\t0\tJohn\t(1)\nd1\t0\t1\tsaw\t-\nd1\t0\t2\thim\t(1)\n\n#end document\n"
)
COREF_JSONL = json.dumps({"doc_key": "d1", "sentences": [["John", "saw", "him"]], "clusters": [[[0, 0], [2, 2]]]})
ALTERNATIVES = [{"mention": "TANK", "qid": "Q2"}]
LINKS_GOLD = {"id": "d1", "entities": [{"mention": "FUEL TANK", "qid": "Q1", "alternatives": ALTERNATIVES}]}
LINKS_PRED = {"id": "d1", "entities": [{"mention": "FUEL TANK", "qid": "Q2"}]}
ONTOLOGY = {"total": 10, "nodes": {"Q1": {"subclass_of": ["Q2"], "count": 2}, "Q2": {"count": 5}}}
CODES = "N39.0\tdesc\nR52\tdesc\nA53.9\tdesc\nBW40ZZZ\tdesc\n"
GOLD_D, PRED_D = "S1\tn39.0\nS1\tr52\nS2\ta53.9\n", "S1\tR52\nS1\tn39.0\nS3\ta53.9\n"
GOLD_X = "S1\tDIAGNOSTICO\tn39.0\tinfección urinaria\t10 30\nS1\tPROCEDIMIENTO\tbw40zzz\teco\t50 55;60 70\n"
PRED_X = "S1\t8 31\tDIAGNOSTICO\tn39.0\nS1\t50 70\tPROCEDIMIENTO\tbw40zzz\n"
FAA_IDS = ("19990101000001A", "19990101000002B")  # OMIn's documents are 15-character FAA ids
OMIN_NER = f'id,sample,entities,labels\n{FAA_IDS[0]},"X, Y",X,PER\n{FAA_IDS[1]},Z,Z,LOC\n'
OMIN_TOKENS = "".join(
    json.dumps({"doc_key": f"faa/{row}_{faa}_0", "sentences": [words]}) + "\n"
    for row, (faa, words) in enumerate(zip(FAA_IDS, (["X", ",", "Y"], ["Z"]), strict=True))
)
OMIN_NEL = "id,sample,entity,qid\nA,s,\"['FUEL TANK', 'TANK']\",\"['Q1', None]\"\n"
OMIN_NEL_PRED = "c5_id,mentions,qids\nA,FUEL TANK,Q1\nA,TANK,\n"
OMIN_RE = "id,subject,subject_type,relation,relation_type,object,object_type\nA,Aircraft,V,struck,R,Tree,O\n"
OMIN_COREF = 'id,coreferences\nd1,"[[[0,0],[2,2]]]"\n'
#: Lines of tokens, which ``score ner`` reads straight into entity columns (the JSONL reader's fast path).
NER_TOKENS = "".join(
    json.dumps({"id": doc_id, "tokens": tokens, "entities": entities}) + "\n"
    for doc_id, tokens, entities in (
        (
            "t1",
            NER_TEXT.replace(".", " .").split(),
            [{"start": 0, "end": 1, "label": "PER"}, {"start": 3, "end": 4, "label": "LOC"}],
        ),
        ("t2", ["Seen", "by", "Dr.", "Lee"], [{"start": 2, "end": 4, "label": "PER"}]),
    )
)
TRIPLES = {"id": "d1", "triples": [{"head": "John", "head_type": "PER", "label": "lives_in", "tail": "Paris"}]}


def write_seeds(directory: Path) -> dict[str, Path]:
    """Write every seed file (or folder) into ``directory``; their paths by seed name."""
    ner, phi = _ner_document(), _phi_document()
    paths: dict[str, Path] = {}

    def text(name: str, content: str) -> None:
        paths[name] = directory / name
        paths[name].write_text(content, encoding="utf-8")

    def written(name: str, fmt: str, documents: list[Document]) -> None:
        paths[name] = directory / name
        formats.get(fmt).write(documents, paths[name])

    written("records.json", "sandbox", [phi])
    written("bundles.json", "sandbox-bundles", [phi])
    written("n2.json", "sandbox-response", [phi])
    written("brat", "brat", [ner])
    written("bioc.xml", "bioc", [ner])
    written("bioc.json", "bioc", [ner])
    written("conll.txt", "conll", [ner])
    written("i2b2", "i2b2", [phi])
    written("ner.jsonl", "jsonl", [ner])
    written("ner-pred.jsonl", "jsonl", [ner])
    text("timelines.json", json.dumps(TIMELINES))
    text("timelines-pred.json", json.dumps(TIMELINES_PRED))
    text("ids.txt", "p1\np2\n")
    text("system.tsv", TSV_HEADER + TSV_ROW)
    text("key.conll", CONLL2012)
    text("response.conll", CONLL2012.replace("him\t(1)", "him\t-"))
    text("coref.jsonl", COREF_JSONL + "\n")
    text("coref.csv", OMIN_COREF)
    text("links-gold.jsonl", json.dumps(LINKS_GOLD) + "\n")
    text("links-pred.jsonl", json.dumps(LINKS_PRED) + "\n")
    text("ontology.json", json.dumps(ONTOLOGY))
    text("codes.tsv", CODES)
    text("gold-d.tsv", GOLD_D)
    text("pred-d.tsv", PRED_D)
    text("gold-x.tsv", GOLD_X)
    text("pred-x.tsv", PRED_X)
    text("ner.csv", OMIN_NER)
    text("tokens.jsonlines", OMIN_TOKENS)
    text("nel.csv", OMIN_NEL)
    text("nel-pred.csv", OMIN_NEL_PRED)
    text("re.csv", OMIN_RE)
    text("triples.jsonl", json.dumps(TRIPLES) + "\n")
    text("ner-tokens.jsonl", NER_TOKENS)
    written("i2b2-system", "i2b2", [_phi_document("100-01")])
    written("i2b2-gold", "i2b2", [_phi_document("100-01")])
    return paths


@dataclass(frozen=True)
class Case:
    """One command: its arguments with ``{seed}`` placeholders, and the seeds it reads (the damaged one among them)."""

    name: str
    argv: tuple[str, ...]

    @property
    def seeds(self) -> list[str]:
        """The seeds the command reads, once each (``{out}`` is where it writes)."""
        named = [word[1:-1] for word in self.argv if word.startswith("{") and word.endswith("}")]
        return [seed for seed in dict.fromkeys(named) if seed != OUT]


OUT = "out"


def _validate(fmt: str, seed: str) -> Case:
    return Case(f"validate-{fmt}-{seed}", ("validate", "--format", fmt, f"{{{seed}}}"))


def _convert(source: str, from_format: str, to_format: str) -> Case:
    argv = ("convert", f"{{{source}}}", "{out}", "--from", from_format, "--to", to_format)
    return Case(f"convert-{from_format}-{to_format}", argv)


CASES: list[Case] = [
    _validate("sandbox", "records.json"),
    _validate("sandbox", "bundles.json"),
    _validate("sandbox-response", "n2.json"),
    _validate("brat", "brat"),
    _validate("bioc", "bioc.xml"),
    _validate("bioc", "bioc.json"),
    _validate("conll", "conll.txt"),
    _validate("i2b2", "i2b2"),
    _validate("jsonl", "ner.jsonl"),
    _validate("timelines", "timelines.json"),
    _validate("timelines-tsv", "system.tsv"),
    _convert("bundles.json", "sandbox", "brat"),
    _convert("brat", "brat", "sandbox"),
    _convert("ner.jsonl", "jsonl", "bioc"),
    _convert("bioc.json", "bioc", "jsonl"),
    _convert("i2b2", "i2b2", "sandbox-bundles"),
    _convert("conll.txt", "conll", "brat"),
    _convert("system.tsv", "timelines-tsv", "timelines"),
    _convert("timelines.json", "timelines", "timelines"),
    Case(
        "score-sandbox-records",
        (
            "score",
            "sandbox",
            "-g",
            "{bundles.json}",
            "-p",
            "{records.json}",
            "--annotation-type",
            "date",
            "--errors",
            "2",
        ),
    ),
    Case(
        "score-sandbox-response",
        ("score", "sandbox", "-g", "{records.json}", "-p", "{n2.json}", "--annotation-type", "person_name"),
    ),
    Case("score-ner-jsonl", ("score", "ner", "-g", "{ner.jsonl}", "-p", "{ner.jsonl}", "--gold-format", "jsonl")),
    Case(
        "score-ner-tokens",
        ("score", "ner", "-g", "{ner-tokens.jsonl}", "-p", "{ner-tokens.jsonl}", "--gold-format", "jsonl"),
    ),
    Case("score-ner-conll", ("score", "ner", "-g", "{conll.txt}", "-p", "{conll.txt}", "--gold-format", "conll")),
    Case(
        "score-ner-omin",
        (
            "score",
            "ner",
            "-g",
            "{ner.csv}",
            "-p",
            "{ner.csv}",
            "--gold-format",
            "omin",
            "--tokens",
            "{tokens.jsonlines}",
        ),
    ),
    Case(
        "score-linking-jsonl",
        (
            "score",
            "linking",
            "-g",
            "{links-gold.jsonl}",
            "-p",
            "{links-pred.jsonl}",
            "--gold-format",
            "jsonl",
            "--ontology",
            "{ontology.json}",
        ),
    ),
    Case("score-linking-omin", ("score", "linking", "-g", "{nel.csv}", "-p", "{nel-pred.csv}")),
    Case("score-relations-brat", ("score", "relations", "-g", "{brat}", "-p", "{brat}", "--gold-format", "brat")),
    Case(
        "score-relations-jsonl",
        ("score", "relations", "-g", "{ner.jsonl}", "-p", "{ner.jsonl}", "--gold-format", "jsonl"),
    ),
    Case(
        "score-relations-omin", ("score", "relations", "-g", "{re.csv}", "-p", "{re.csv}", "--gold-format", "omin-re")
    ),
    Case("score-coref-conll", ("score", "coref", "-k", "{key.conll}", "-r", "{response.conll}")),
    Case(
        "score-coref-jsonl", ("score", "coref", "-k", "{coref.jsonl}", "-r", "{coref.jsonl}", "--key-format", "jsonl")
    ),
    Case(
        "score-coref-omin",
        ("score", "coref", "-k", "{key.conll}", "-r", "{coref.csv}", "--response-format", "omin-csv"),
    ),
    Case(
        "score-codiesp-d",
        ("score", "codiesp", "--track", "D", "-g", "{gold-d.tsv}", "-p", "{pred-d.tsv}", "-c", "{codes.tsv}"),
    ),
    Case(
        "score-codiesp-x",
        ("score", "codiesp", "--track", "X", "-g", "{gold-x.tsv}", "-p", "{pred-x.tsv}", "-c", "{codes.tsv}"),
    ),
    Case(
        "score-relations-triples",
        ("score", "relations", "-g", "{triples.jsonl}", "-p", "{triples.jsonl}", "--gold-format", "jsonl-triples"),
    ),
    Case("score-i2b2", ("score", "i2b2", "-g", "{i2b2-gold}", "-p", "{i2b2-system}", "--profile", "i2b2-2014")),
    Case("score-i2b2-standard", ("score", "i2b2", "-g", "{i2b2-gold}", "-p", "{i2b2-system}")),
    Case(
        "compare-ner",
        (
            "compare",
            "{ner.jsonl}",
            "{ner-pred.jsonl}",
            "-T",
            "ner",
            "-g",
            "{ner.jsonl}",
            "--trials",
            "100",
            "--",
            "--gold-format",
            "jsonl",
        ),
    ),
    Case(
        "score-timelines",
        (
            "score",
            "timelines",
            "-g",
            "{timelines.json}",
            "-p",
            "{timelines-pred.json}",
            "--all-ids",
            "{ids.txt}",
            "--mode",
            "strict",
        ),
    ),
]
