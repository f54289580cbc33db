"""The scoring runs whose JSON output the contract test pins: every task under every profile.

Each case is ``(name, root, arguments)``: the arguments of ``nlpbench score TASK``
(without ``--profile`` and ``--format``), with paths relative to ``root`` —
``inputs`` (this folder's committed inputs), ``examples`` (the example pair
embedded in the package) or ``vectors`` (the public vectors, skipped when
absent) — so that the reports' ``inputs`` name the same paths on every machine.
"""

from __future__ import annotations

OMIN = "omin/OMIn_dataset/gold_standard/processed"
TOKENS = "omin/coref/s2e-coref/data/test.english.jsonlines"
TIMELINES = ["--gold", "timelines/gold.json", "--pred", "timelines/pred.json", "--all-ids", "timelines/all_ids.txt"]
CODIESP_D = ["--gold", "codiesp/gold_d.tsv", "--pred", "codiesp/pred_d.tsv", "--valid-codes", "codiesp/codes.tsv"]
CODIESP_X = ["--gold", "codiesp/gold_x.tsv", "--pred", "codiesp/pred_x.tsv", "--valid-codes", "codiesp/codes.tsv"]

CASES: dict[str, tuple[str, str, list[str]]] = {
    "sandbox-example": ("sandbox", "examples", ["--gold", "gold.json", "--pred", "pred.json"]),
    "sandbox-example-all-errors": (
        "sandbox", "examples", ["--gold", "gold.json", "--pred", "pred.json", "-t", "all", "--errors", "3"],
    ),
    "sandbox-example-date-relax": (
        "sandbox", "examples", ["--gold", "gold.json", "--pred", "pred.json", "-t", "date", "--relax", "0"],
    ),
    "sandbox-client": (
        "sandbox", "vectors",
        ["--gold", "nlpsandbox-client/goldstandard.json", "--pred", "nlpsandbox-client/prediction.json"],
    ),
    "sandbox-example-ci": (
        "sandbox", "examples", ["--gold", "gold.json", "--pred", "pred.json", "--ci", "--resamples", "200"],
    ),
    "ner-conll": ("ner", "inputs", ["--gold", "ner/gold.conll", "--pred", "ner/pred.conll"]),
    "ner-conll-labels": ("ner", "inputs", ["--gold", "ner/gold.conll", "--pred", "ner/pred.conll", "--labels", "PER"]),
    "ner-omin": (
        "ner", "vectors",
        ["--gold-format", "omin", "--labels", "ace05", "--gold", f"{OMIN}/ner.csv", "--tokens", TOKENS,
         "--pred", "omin/tool_results/pl-marker/pl-marker_ace05_bert_NER_jun17.csv"],
    ),
    "linking-jsonl": (
        "linking", "inputs",
        ["--gold", "linking/gold.jsonl", "--pred", "linking/pred.jsonl", "--gold-format", "jsonl",
         "--ontology", "linking/zoo.json"],
    ),
    "linking-omin": (
        "linking", "vectors",
        ["--qid-column", "bi_qid", "--gold", f"{OMIN}/nel.csv", "--pred", "omin/tool_results/blink/blink.csv"],
    ),
    "relations-brat": ("relations", "inputs", ["--gold", "relations/gold", "--pred", "relations/pred"]),
    "relations-brat-types": (
        "relations", "inputs",
        ["--gold", "relations/gold", "--pred", "relations/pred", "--relation-types", "works_for,located_in"],
    ),
    "relations-omin": (
        "relations", "vectors", ["--gold", f"{OMIN}/re.csv", "--pred", f"{OMIN}/re.csv", "--gold-format", "omin-re"],
    ),
    "coref-conll": ("coref", "inputs", ["--key", "coref/key.conll", "--response", "coref/response.conll"]),
    "coref-conll-removed": (
        "coref", "inputs",
        ["--key", "coref/key.conll", "--response", "coref/response.conll", "--remove-singletons", "--remove-nested"],
    ),
    "coref-scorer-tc-a": (
        "coref", "vectors",
        ["--key", "conll-scorer-testcases/TC-A.key", "--response", "conll-scorer-testcases/TC-A-4.response"],
    ),
    "coref-omin": (
        "coref", "vectors",
        ["--key-format", "omin-csv", "--key", f"{OMIN}/cr.csv", "--response", "omin/tool_results/asp/asp_t0.csv"],
    ),
    "codiesp-d": ("codiesp", "inputs", ["--track", "D", *CODIESP_D]),
    "codiesp-d-k": ("codiesp", "inputs", ["--track", "D", *CODIESP_D, "--k", "1", "--k", "3"]),
    "codiesp-x": ("codiesp", "inputs", ["--track", "X", *CODIESP_X]),
    **{
        f"timelines-{mode}": ("timelines", "inputs", [*TIMELINES, "--mode", mode, "--reference-date", "2026-11-21"])
        for mode in ("strict", "day", "month", "year")
    },
    "deid-example": ("deid", "examples", ["--gold", "gold.json", "--pred", "deidentified.json"]),
    "deid-shifted": (
        "deid", "examples", ["--gold", "gold.json", "--pred", "shifted.jsonl", "--config", "deid-steps.json"],
    ),
    "i2b2": ("i2b2", "inputs", ["--pred", "i2b2/system", "--gold", "i2b2/gold"]),
    "i2b2-filter": (
        "i2b2", "inputs", ["--pred", "i2b2/system", "--gold", "i2b2/gold", "--filter", "NAME,DATE", "--invert"],
    ),
}  # fmt: skip

#: ``nlpbench compare A B -T TASK -g GOLD [-- OPTIONS]`` runs, paths relative to ``root`` as above.
COMPARISONS: dict[str, tuple[str, list[str]]] = {
    "sandbox": ("examples", ["pred.json", "gold.json", "-T", "sandbox", "-g", "gold.json", "--trials", "200"]),
    "sandbox-date-nlpsandbox": (
        "examples",
        ["pred.json", "gold.json", "-T", "sandbox", "-g", "gold.json", "--trials", "200",
         "--", "-t", "date", "--profile", "nlpsandbox"],
    ),
    "ner": ("inputs", ["ner/pred.conll", "ner/gold.conll", "-T", "ner", "-g", "ner/gold.conll", "--trials", "200"]),
    "coref": (
        "inputs",
        ["coref/response.conll", "coref/key.conll", "-T", "coref", "-g", "coref/key.conll", "--trials", "200",
         "--test", "bootstrap", "--", "--profile", "conll2012"],
    ),
    "timelines": (
        "inputs",
        ["timelines/pred.json", "timelines/gold.json", "-T", "timelines", "-g", "timelines/gold.json",
         "--trials", "200", "--", "--all-ids", "timelines/all_ids.txt", "--mode", "day",
         "--reference-date", "2026-11-21"],
    ),
}  # fmt: skip
