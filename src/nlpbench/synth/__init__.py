"""Seeded synthetic clinical notes with gold PHI annotations.

:func:`generate` writes discharge summaries, progress notes, radiology and
pathology reports and referral letters (:mod:`~nlpbench.synth.templates`)
with values from Faker (:mod:`~nlpbench.synth.values`), then adds layout
noise: a whole note in capitals, lines wrapped at a column, doubled spaces.
Note ``i`` of seed ``s`` depends on nothing else, so a longer run starts with
the notes of a shorter one.

Faker's output for a seed changes between Faker versions, so the fixed
dataset that ``nlpbench demo`` uses is not regenerated on the user's
machine: :func:`embedded` reads the notes generated once with
:data:`EMBEDDED_SEED` and shipped in ``data/embedded.jsonl.gz``, and a test
checks that the generator still reproduces them byte for byte under the
Faker version recorded in that file.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import re
from collections.abc import Iterable, Iterator
from importlib import resources

from nlpbench.model import Annotation, Document, Span

EMBEDDED_SEED = 20260
EMBEDDED_NOTES = 300
EMBEDDED_FILE = "embedded.jsonl.gz"


def generate(notes: int, seed: int = 0) -> Iterator[Document]:
    """``notes`` synthetic notes with gold annotations, the same for the same seed and Faker version."""
    from faker import Faker  # Faker takes a tenth of a second to load: only generating needs it

    from nlpbench.synth.templates import NOTE_TYPES
    from nlpbench.synth.values import LOCALES, Values

    if notes < 0:
        raise ValueError(f"the number of notes must not be negative, not {notes}")
    fake = Faker(sorted(set(LOCALES)))
    kinds = sorted(NOTE_TYPES)
    for index in range(notes):
        rng = random.Random(f"nlpbench-synth:{seed}:{index}")
        fake.seed_instance(rng.getrandbits(64))
        kind = rng.choice(kinds)
        loinc, template = NOTE_TYPES[kind]
        note = template(Values(fake, rng))
        text = _noise(note.b.text, rng)
        doc_id = f"synth-{seed}-{index:05d}"
        yield note.b.document(
            doc_id, text, {"patientId": f"patient-{seed}-{index:05d}", "noteType": loinc, "kind": kind}
        )


def _noise(text: str, rng: random.Random) -> str:
    """The same text with its layout disturbed, every character at its place.

    Some notes are all capitals (as old systems print them), some wrapped at a
    column (a space becomes a line break), some have tabs for spaces.
    """
    if rng.random() < 0.12:
        text = text.upper()
    if rng.random() < 0.3:
        width = rng.randint(60, 90)
        chars, column = list(text), 0
        for position, char in enumerate(chars):
            column = 0 if char == "\n" else column + 1
            if char == " " and column >= width:
                chars[position], column = "\n", 0
        text = "".join(chars)
    if rng.random() < 0.1:
        text = re.sub(r"(?<=:) ", "\t", text)
    return text


def embedded() -> list[Document]:
    """The fixed dataset of :data:`EMBEDDED_NOTES` notes shipped with nlpbench (seed :data:`EMBEDDED_SEED`)."""
    raw = (resources.files("nlpbench.synth") / "data" / EMBEDDED_FILE).read_bytes()
    lines = gzip.decompress(raw).decode("utf-8").splitlines()
    return [from_json(json.loads(line)) for line in lines[1:]]


def embedded_header() -> dict:
    """The first line of the shipped dataset: seed, number of notes, Faker version."""
    raw = (resources.files("nlpbench.synth") / "data" / EMBEDDED_FILE).read_bytes()
    return json.loads(gzip.decompress(raw).decode("utf-8").split("\n", 1)[0])


def dump(documents: Iterable[Document], seed: int, notes: int) -> bytes:
    """Documents as the gzipped JSON lines of ``data/embedded.jsonl.gz`` (no timestamp: the bytes are stable)."""
    from importlib.metadata import version  # 20 ms of start-up that only writing the dataset needs

    header = {"seed": seed, "notes": notes, "faker": version("faker")}
    lines = [json.dumps(header, sort_keys=True)] + [json.dumps(to_json(d), sort_keys=True) for d in documents]
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as handle:
        handle.write(("\n".join(lines) + "\n").encode("utf-8"))
    return buffer.getvalue()


def to_json(document: Document) -> dict:
    return {
        "id": document.id,
        "text": document.text,
        "metadata": document.metadata,
        "annotations": [
            {"id": a.id, "label": a.label, "start": a.start, "end": a.end, "attributes": a.attributes}
            for a in document.annotations
        ],
    }


def from_json(record: dict) -> Document:
    doc_id, text = record["id"], record["text"]
    annotations = [
        Annotation(
            doc_id, Span(a["start"], a["end"]), a["label"], text[a["start"] : a["end"]], a["attributes"], id=a["id"]
        )
        for a in record["annotations"]
    ]
    return Document(doc_id, text, annotations, metadata=record["metadata"])
