"""``nlpbench score sandbox`` against nlpsandbox-client 4.3.1's evaluator, in one run.

    python benchmarks/sandbox_bench.py --notes 50000
    python benchmarks/sandbox_bench.py --notes 50000 --one-pass

Generates seeded gold and prediction files (NLP Sandbox annotation records,
written as nlpbench writes them: notes of about 20 PHI mentions, a few of 60,
predictions mostly right with some boundary errors, misses and inventions; as in
real notes, some names are not ASCII, some addresses run over two lines, so that
their texts hold a newline escape, and a few names hold quotes; ``--plain-text``
writes the ASCII-only, escape-free notes of the earlier figures),
then scores every annotation type with both, each in its own process, and
prints wall time, peak memory (max RSS) and whether the numbers agree. It then
scores inputs of growing size with nlpbench alone to show how its memory
grows with the number of notes. nlpsandbox-client must be installed
(``pip install --no-deps --ignore-requires-python nlpsandbox-client==4.3.1``).

``--one-pass`` instead times ``-t all`` (the five types in one pass over the
files) against one type alone and the five single-type commands, and checks
that its rows are those of the single-type runs and (``--reference``) of
nlpsandbox-client; ``--rounds N`` then runs ``-t all`` and ``-t location`` in
turn N times and prints the medians and the ratio.

``--against SRC`` (a ``src`` directory of other code, such as ``git archive main src`` unpacked) times that
code too, in turn with this one, command for command: with ``--rounds``, each round runs ``-t all`` and
``-t location`` with each code; in the reference table, each type runs with each code, and its output must
be the same; ``--rounds N`` then runs each type N times with each code, in turn, and gives medians.

``--checks`` instead reads both files in process as ``score sandbox`` does and
prints the CPU seconds of the read and of the checks inside it (repeated keys,
depth, the note-counting pre-pass) and their share.

``--stages`` instead scores in process, ``-t all`` and ``-t location`` in turn, and prints the CPU seconds of
each stage and what they say of the ``-t all`` / one-type goal: with ``S`` the work any run does once and ``p``
a type's own, ``-t all`` costs ``S + 5p`` and one type ``S + p``, so ``p = (all - one) / 4`` and
``S = one - p``; the ratio is within 1.5 only when ``p <= S / 7`` (start-up, about 0.35 s of CPU, counts in
``S`` and is not in these in-process figures).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIRST = "Ana Ben Chloe David Elena Farid Grace Hiro Ines Jon Kwame Lena Marcus Nadia Omar Priya Quinn Rosa".split()
LAST = "Price Smith O'Neil Villegas Tavares Nguyen Okafor Ruiz Kowalski Haddad Lee Brennan Costa Patel".split()
#: What real notes hold and the plain names above do not: names that are not ASCII, an address over two
#: lines (a newline escape in its text), a nickname in quotes (an escaped quote).
REAL_FIRST = [*FIRST, "Zoë", "José", "Łukasz", "Søren", "Ngọc", "Renée"]
REAL_LAST = [*LAST, "Núñez", "Müller", "Çelik", "Ødegaard", "Nakamura-Sánchez"]
REAL_PATTERNS = {  # type: (pattern, subtype, how often a mention of the type is written so)
    "person_name": ('{first} "{nick}" {last}', "patient", 0.01),
    "location": ("{num} {last} Street\n{city}, {state} {zip}", "street", 0.1),
}
PHI = {
    "date": (
        "textDateAnnotations",
        "dateFormat",
        [
            ("{m}/{d}/{y}", "MM/DD/YYYY"),
            ("{y}-{m:02d}-{d:02d}", "YYYY-MM-DD"),
            ("{month} {d}, {y}", "MMMM D, YYYY"),
            ("{m}/{d}", "M/D"),
            ("{y}", "YYYY"),
        ],
    ),
    "person_name": (
        "textPersonNameAnnotations",
        "personType",
        [("{first} {last}", "patient"), ("Dr. {last}", "doctor")],
    ),
    "location": (
        "textLocationAnnotations",
        "locationType",
        [
            ("{city}", "city"),
            ("{state}", "state"),
            ("{num} {last} Street", "street"),
            ("St. {last}'s Hospital", "hospital"),
            ("{zip}", "zip"),
            ("Room {num}", "room"),
        ],
    ),
    "id": ("textIdAnnotations", "idType", [("{num}-{zip}", "medical_record"), ("{ssn}", "ssn")]),
    "contact": (
        "textContactAnnotations",
        "contactType",
        [("({num}) 555-{zip4}", "phone"), ("{first}.{last}@example.org", "email")],
    ),
}
CITIES = "Boston Seattle Denver Austin Portland Omaha Tucson Fresno".split()
STATES = "MA WA CO TX OR NE AZ CA".split()
MONTHS = "January March May July September November".split()
FILLER = "The patient reports improvement . Vitals stable , plan to continue current therapy and follow up .".split()
REFERENCE_CLASSES = {
    "date": "DateEvaluation",
    "person_name": "PersonNameEvaluation",
    "location": "LocationEvaluation",
    "id": "IdEvaluation",
    "contact": "ContactEvaluation",
}
REFERENCE_DRIVER = """
import contextlib, io, json, sys
from nlpsandboxclient import evaluation
evaluator = getattr(evaluation, sys.argv[1])()
evaluator.convert_dict(sys.argv[3], sys.argv[2])
with contextlib.redirect_stdout(io.StringIO()):
    result = evaluator.eval()
json.dump(result, sys.stdout)
"""


def phi_text(rng: random.Random, pattern: str, real: bool = True) -> str:
    first, last = (REAL_FIRST, REAL_LAST) if real else (FIRST, LAST)
    return pattern.format(
        first=rng.choice(first), last=rng.choice(last), nick=rng.choice(first), city=rng.choice(CITIES),
        state=rng.choice(STATES),
        month=rng.choice(MONTHS), m=rng.randint(1, 12), d=rng.randint(1, 28), y=rng.randint(2060, 2080),
        num=rng.randint(1, 999), zip=rng.randint(10000, 99999), zip4=rng.randint(1000, 9999),
        ssn=f"{rng.randint(100, 899)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
    )  # fmt: skip


def note(rng: random.Random, real: bool = True) -> tuple[str, dict[str, list[dict]]]:
    """A note of filler words with about 20 PHI mentions (one note in eight 60 when ``real``), and the gold
    annotations; ``real`` adds what plain ASCII notes lack (:data:`REAL_PATTERNS`, names not in ASCII)."""
    text, gold = "", {name: [] for name in PHI}
    for _ in range(60 if real and rng.random() < 0.125 else 20):
        text += " ".join(rng.choices(FILLER, k=rng.randint(4, 14))) + ("\n" if real and rng.random() < 0.3 else " ")
        name = rng.choice(list(PHI))
        _array, attribute, patterns = PHI[name]
        odd = REAL_PATTERNS.get(name) if real else None
        pattern, subtype = odd[:2] if odd and rng.random() < odd[2] else rng.choice(patterns)
        value = phi_text(rng, pattern, real)
        gold[name].append(
            {"start": len(text), "length": len(value), "text": value, "confidence": 100, attribute: subtype}
        )
        text += value + " "
    return text, gold


def predict(rng: random.Random, text: str, gold: list[dict]) -> list[dict]:
    """A system's output: mostly right, some boundaries off by a few characters, some missed or invented."""
    pred = []
    for item in gold:
        roll = rng.random()
        if roll < 0.1:
            continue
        start, length = item["start"], item["length"]
        if roll < 0.2:
            start, length = max(0, start + rng.choice([-1, 1])), length + rng.choice([-2, -1, 1, 3])
        pred.append(dict(item, start=start, length=length, text=text[start : start + length], confidence=90))
    if rng.random() < 0.3:
        start = rng.randrange(len(text) - 12)
        pred.append({"start": start, "length": 8, "text": text[start : start + 8], "confidence": 40})
    return pred


def generate(path_gold: Path, path_pred: Path, notes: int, seed: int, real: bool = True) -> None:
    """Write ``notes`` annotation records per side, one record a line, as nlpbench writes them (UTF-8, not
    ASCII escapes); ``real=False`` writes the plain notes of earlier figures."""
    rng = random.Random(seed)
    with open(path_gold, "w", encoding="utf-8") as gold_file, open(path_pred, "w", encoding="utf-8") as pred_file:
        gold_file.write("[")
        pred_file.write("[")
        for n in range(notes):
            text, gold = note(rng, real)
            source = {"resourceSource": {"name": f"dataset/bench/fhirStores/s/fhir/Note/note-{n}"}}
            gold_record = {"name": f"note-{n}", "annotationSource": source}
            pred_record = dict(gold_record)
            for name, (array, _, _) in PHI.items():
                gold_record[array] = gold[name]
                pred_record[array] = predict(rng, text, gold[name])
            separator = ",\n" if n else "\n"
            gold_file.write(separator + json.dumps(gold_record, ensure_ascii=not real))
            pred_file.write(separator + json.dumps(pred_record, ensure_ascii=not real))
        gold_file.write("\n]\n")
        pred_file.write("\n]\n")


def measure(command: list[str], source: Path | None = None) -> tuple[float, float, str, float]:
    """Run a command (with ``source`` first on ``PYTHONPATH``, when given); its wall seconds, peak RSS in MiB,
    standard output and CPU seconds (user + system)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(source or ""), os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryFile(mode="w+") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, text=True, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        if status:
            raise SystemExit(f"{' '.join(command)} failed: {process.stderr.read()}")
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, out.read(), usage.ru_utime + usage.ru_stime


def nlpbench_command(gold: Path, pred: Path, annotation_type: str) -> list[str]:
    """The command scoring ``annotation_type`` (``all``: the five types in one pass)."""
    return [sys.executable, "-m", "nlpbench", "score", "sandbox", "--gold", str(gold), "--pred", str(pred),
            "-t", annotation_type, "--profile", "nlpsandbox", "-f", "json", "--no-per-document"]  # fmt: skip


def nlpbench_values(output: str, annotation_type: str | None = None) -> dict[str, tuple]:
    rows = json.loads(output)["scores"]
    if annotation_type is not None:  # the rows of one type in a one-pass report
        rows = [r for r in rows if r.pop("annotation_type") == annotation_type]
    return {
        r["metric"]: (r["f1"], r["precision"], r["recall"]) for r in rows if "label" not in r and "average" not in r
    }


def nlpbench_rows(output: str, annotation_type: str | None = None) -> list[dict]:
    """Every score row (slices and macro rows too), without the annotation_type label."""
    rows = json.loads(output)["scores"]
    if annotation_type is None:
        return rows
    return [
        {k: v for k, v in r.items() if k != "annotation_type"} for r in rows if r["annotation_type"] == annotation_type
    ]


def one_pass(gold: Path, pred: Path, with_reference: bool) -> None:
    """``-t all`` against each type alone: time, and the same rows."""
    print("| command | seconds | peak MiB | identical rows |")
    print("|---|---|---|---|")
    all_s, all_mb, all_out, _ = measure(nlpbench_command(gold, pred, "all"))
    singles = 0.0
    for annotation_type, reference_class in REFERENCE_CLASSES.items():
        seconds, peak, out, _ = measure(nlpbench_command(gold, pred, annotation_type))
        singles += seconds
        same = nlpbench_rows(out) == nlpbench_rows(all_out, annotation_type)
        if with_reference:
            _, _, ref_out, _ = measure([sys.executable, "-c", REFERENCE_DRIVER, reference_class, str(gold), str(pred)])
            same = same and nlpbench_values(all_out, annotation_type) == reference_values(ref_out)
        print(f"| -t {annotation_type} | {seconds:.1f} | {peak:.0f} | {'yes' if same else 'NO'} |")
    print(f"| five -t commands | {singles:.1f} | | |")
    print(f"| -t all (one pass) | {all_s:.1f} | {all_mb:.0f} | |")


def alternate(gold: Path, pred: Path, rounds: int, one: str = "location", against: Path | None = None) -> None:
    """``-t all`` and ``-t one`` run in turn ``rounds`` times (each with this code, then with ``against``'s when
    given): the median wall and CPU seconds and their ratios; each command's output must be the same with both.

    On a shared machine wall time follows the load; CPU time (user + system of the
    command) and a ratio of two commands run side by side follow it much less.
    """
    codes = {"this": None} if against is None else {"against": against, "this": None}
    times: dict[tuple[str, str], list[tuple[float, float]]] = {(c, t): [] for c in codes for t in ("all", one)}
    loads = [os.getloadavg()[0]]
    for _ in range(rounds):
        for annotation_type in ("all", one):
            outputs = set()
            for code, source in codes.items():
                seconds, _, out, cpu = measure(nlpbench_command(gold, pred, annotation_type), source)
                times[code, annotation_type].append((seconds, cpu))
                outputs.add(out)
            if len(outputs) > 1:
                raise SystemExit(f"-t {annotation_type}: the two codes' outputs differ")
        loads.append(os.getloadavg()[0])
    print(f"\nalternating -t all and -t {one}, {rounds} rounds, load average {min(loads):.1f}–{max(loads):.1f}:\n")
    print("| code | -t all wall / CPU s | -t location wall / CPU s | ratio wall | ratio CPU |")
    print("|---|---|---|---|---|")
    for code, source in codes.items():
        medians = {t: [statistics.median(column) for column in zip(*times[code, t], strict=True)] for t in ("all", one)}
        wall_ratio, cpu_ratio = (a / b for a, b in zip(medians["all"], medians[one], strict=True))
        name = "this" if source is None else str(source)
        (all_wall, all_cpu), (one_wall, one_cpu) = medians["all"], medians[one]
        print(
            f"| {name} | {all_wall:.2f} / {all_cpu:.2f} | {one_wall:.2f} / {one_cpu:.2f} "
            f"| {wall_ratio:.2f}× | {cpu_ratio:.2f}× |"
        )


def checks_share(gold: Path, pred: Path, one: str = "location", rounds: int = 3) -> None:
    """In process, both files read as ``score sandbox`` reads them (``-t all`` and ``-t one``): the CPU seconds
    of the whole read and of the checks inside it, timed in the same run so that their share does not follow
    the load; medians of ``rounds`` after a warm-up.

    The checks are the repeated-key check (``jsonstream.no_repeated_key``), the depth check
    (``jsonstream.check``) and the count pre-pass (``sandbox.count_notes``, its own checks included); each
    is wrapped in a timer (about 1 µs a call, counted in the check), only the outermost when they nest.
    """
    import warnings

    from nlpbench.formats import jsonstream, sandbox

    spent = {"keys": 0.0, "depth": 0.0, "count": 0.0}
    active: list[str] = []

    def timed(name, function):
        def wrapper(*args, **kwargs):
            if active:
                return function(*args, **kwargs)
            active.append(name)
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - started
                active.pop()

        return wrapper

    jsonstream.no_repeated_key = timed("keys", jsonstream.no_repeated_key)
    jsonstream.check = timed("depth", jsonstream.check)
    sandbox.count_notes = timed("count", sandbox.count_notes)
    print("| types | read CPU s | repeated keys s | depth s | count pre-pass s | checks' share | load |")
    print("|---|---|---|---|---|---|---|")
    for labels in (set(REFERENCE_CLASSES), {one}):

        def read(labels: set[str] = labels) -> tuple[float, dict[str, float]]:
            spent.update(dict.fromkeys(spent, 0.0))
            started = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for path in (gold, pred):
                    for _ in sandbox.read(path, labels, columns=True):
                        pass
            return time.process_time() - started, dict(spent)

        read()
        runs = [read() for _ in range(rounds)]
        total = statistics.median(run[0] for run in runs)
        parts = [statistics.median(run[1][name] for run in runs) for name in spent]
        name = "all" if len(labels) > 1 else one
        shown = " | ".join(f"{part:.2f}" for part in parts)
        print(f"| {name} | {total:.2f} | {shown} | {sum(parts) / total:.0%} | {os.getloadavg()[0]:.1f} |")


def stages(gold: Path, pred: Path, one: str = "location", rounds: int = 3) -> None:
    """In process, ``score_sandbox`` of ``-t all`` and of ``-t one`` in turn, ``rounds`` times after a warm-up: the
    median CPU seconds of the whole and of each stage's own work (a stage's seconds leave out those of the stages it
    calls), timed in the same run, and the shared and per-type seconds they give (see the module's ``--stages``).

    Stages: the scoring of each batch (``_Run.flush``), within it the cutting of texts never seen
    (``TokenTable._add``) and the rest of the columns (``span_batch._columns``), and the matching and counts (the
    rest of the batch); all else is the reading and the pairing of notes. (A stage timed per record or per
    array would cost as much as it measures: each CPU clock reading is a system call of about a microsecond.)
    """
    from nlpbench.metrics import span_batch
    from nlpbench.tasks import sandbox as task

    spent: dict[str, float] = {}
    active: list[str] = []

    def timed(name, owner, attribute):
        function = getattr(owner, attribute)

        def wrapper(*args, **kwargs):
            active.append(name)
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                active.pop()
                seconds = time.process_time() - started
                spent[name] = spent.get(name, 0.0) + seconds
                if active:  # the caller's own seconds leave this stage out
                    spent[active[-1]] = spent.get(active[-1], 0.0) - seconds

        setattr(owner, attribute, wrapper)

    timed("batch: matching, counts", task._Run, "flush")
    timed("batch: columns", span_batch, "_columns")
    timed("batch: cutting new texts", span_batch.TokenTable, "_add")
    names = ["batch: columns", "batch: cutting new texts", "batch: matching, counts"]

    def run(types: list[str]) -> dict[str, float]:
        spent.clear()
        started = time.process_time()
        task.score_sandbox(gold, pred, types, profile="nlpsandbox", per_document=False)
        return {"total": time.process_time() - started, **spent}

    import warnings

    medians: dict[str, dict[str, float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs: dict[str, list[dict[str, float]]] = {"all": [], one: []}
        for types in (["all"], [one]):
            run(types)
        loads = [os.getloadavg()[0]]
        for _ in range(rounds):
            for name, measured in runs.items():
                measured.append(run([name]))
            loads.append(os.getloadavg()[0])
    for name, measured in runs.items():
        medians[name] = {part: statistics.median(r.get(part, 0.0) for r in measured) for part in ["total", *names]}
    print(f"in process, medians of {rounds} rounds in turn, load average {min(loads):.1f}–{max(loads):.1f}:\n")
    print(f"| stage | -t all CPU s | -t {one} CPU s | per type (all − one) / 4 |")
    print("|---|---|---|---|")
    for part in [*names, "rest (reading, pairing)", "total"]:
        if part == "rest (reading, pairing)":
            values = {n: m["total"] - sum(m[p] for p in names) for n, m in medians.items()}
        else:
            values = {n: m[part] for n, m in medians.items()}
        print(f"| {part} | {values['all']:.2f} | {values[one]:.2f} | {(values['all'] - values[one]) / 4:.2f} |")
    per_type = (medians["all"]["total"] - medians[one]["total"]) / 4
    shared = medians[one]["total"] - per_type
    print(f"\nS = {shared:.2f} s, p = {per_type:.2f} s (in process); 1.5× needs p ≤ S / 7 = {shared / 7:.2f} s")


def reference_table(gold: Path, pred: Path, against: Path, rounds: int = 1) -> None:
    """Each type scored by nlpsandbox-client once and by nlpbench with ``against``'s code and this one, in turn,
    ``rounds`` times: median wall and CPU seconds (CPU follows the load less), the speed-ups in CPU seconds,
    whether the values agree with the client's and the two codes' outputs are the same."""
    print("| annotation type | reference wall / CPU s | against wall / CPU s | this wall / CPU s "
          "| speed-up against (CPU) | speed-up this (CPU) | identical | load |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for annotation_type, reference_class in REFERENCE_CLASSES.items():
        ref_s, _, ref_out, ref_cpu = measure(
            [sys.executable, "-c", REFERENCE_DRIVER, reference_class, str(gold), str(pred)]
        )
        loads = [os.getloadavg()[0]]
        runs: dict[Path | None, list] = {against: [], None: []}
        for _ in range(rounds):
            for source, measured in runs.items():
                measured.append(measure(nlpbench_command(gold, pred, annotation_type), source))
            loads.append(os.getloadavg()[0])
        outputs = {out for measured in runs.values() for _, _, out, _ in measured}
        same = len(outputs) == 1 and nlpbench_values(outputs.pop()) == reference_values(ref_out)
        (old_s, old_cpu), (new_s, new_cpu) = (
            (statistics.median(r[0] for r in measured), statistics.median(r[3] for r in measured))
            for measured in runs.values()
        )
        print(
            f"| {annotation_type} | {ref_s:.1f} / {ref_cpu:.1f} | {old_s:.1f} / {old_cpu:.2f} "
            f"| {new_s:.1f} / {new_cpu:.2f} | {ref_cpu / old_cpu:.1f}× | {ref_cpu / new_cpu:.1f}× "
            f"| {'yes' if same else 'NO'} | {min(loads):.1f}–{max(loads):.1f} |"
        )


def reference_values(output: str) -> dict[str, tuple]:
    location, typed = json.loads(output).values()
    names = {
        ("instance", "strict"): "instance_strict",
        ("instance", "relax"): "instance_relax",
        ("token", "strict"): "token",
    }
    values: dict[str, dict] = {}
    for item in location:
        values.setdefault(names[item["type"], item["mode"]], {})[item["metric"]] = item["value"]
    if typed and all(v["value"] == v["value"] for v in typed):  # NaN rows are not reported
        values["type"] = {v["metric"]: v["value"] for v in typed}
    return {metric: (v["F1"], v["precision"], v["recall"]) for metric, v in values.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--workdir", type=Path, default=Path(__file__).parent / ".work")
    parser.add_argument("--one-pass", action="store_true", help="time -t all against single types")
    parser.add_argument("--reference", action="store_true", help="with --one-pass: compare with the client too")
    parser.add_argument(
        "--rounds", type=int, default=0, help="with --one-pass: then alternate -t all and -t location; see --against"
    )
    parser.add_argument("--plain-text", action="store_true", help="ASCII notes without escapes, as before 2026-11-28")
    parser.add_argument("--checks", action="store_true", help="the checks' share of the read, in process")
    parser.add_argument("--stages", action="store_true", help="each stage's CPU seconds, -t all and one type")
    parser.add_argument("--against", type=Path, help="a src directory of other code, timed in turn with this one")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    gold, pred = args.workdir / "sandbox-gold.json", args.workdir / "sandbox-pred.json"
    generate(gold, pred, args.notes, args.seed, real=not args.plain_text)
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"input: {args.notes} notes per side, {gold.stat().st_size / 2**20:.0f} MiB gold\n")
    if args.checks:
        checks_share(gold, pred)
        return
    if args.stages:
        stages(gold, pred, rounds=max(args.rounds, 1))
        return
    if args.one_pass:
        one_pass(gold, pred, args.reference)
        if args.rounds:
            alternate(gold, pred, args.rounds, against=args.against)
        return
    if args.against is not None:
        reference_table(gold, pred, args.against, max(args.rounds, 1))
        return
    print("| annotation type | nlpbench s | nlpbench MiB | reference s | reference MiB | speed-up | identical |")
    print("|---|---|---|---|---|---|---|")
    totals = [0.0, 0.0]
    for annotation_type, reference_class in REFERENCE_CLASSES.items():
        ours_s, ours_mb, ours_out, _ = measure(nlpbench_command(gold, pred, annotation_type))
        ref_s, ref_mb, ref_out, _ = measure(
            [sys.executable, "-c", REFERENCE_DRIVER, reference_class, str(gold), str(pred)]
        )
        same = nlpbench_values(ours_out) == reference_values(ref_out)
        totals[0] += ours_s
        totals[1] += ref_s
        print(
            f"| {annotation_type} | {ours_s:.1f} | {ours_mb:.0f} | {ref_s:.1f} | {ref_mb:.0f} "
            f"| {ref_s / ours_s:.1f}× | {'yes' if same else 'NO'} |"
        )
    print(f"| all five | {totals[0]:.1f} | | {totals[1]:.1f} | | {totals[1] / totals[0]:.1f}× | |\n")
    print("nlpbench memory as the corpus grows (location, table output):\n")
    print("| notes | seconds | peak MiB |")
    print("|---|---|---|")
    for notes in (args.notes // 10, args.notes // 2, args.notes):
        generate(gold, pred, notes, args.seed, real=not args.plain_text)
        command = nlpbench_command(gold, pred, "location")
        command[command.index("json")] = "table"
        seconds, peak, _, _ = measure(command)
        print(f"| {notes} | {seconds:.1f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
