"""Time ``nlpbench score codiesp`` against the official CodiEsp scripts on the same large input.

Input: the 250 documents of the CodiEsp test split, each with 1,000 predicted
codes in rank order (tracks D and P) or 1,000 predicted code references
(track X), built from the test gold with a fixed seed per track: most gold codes near
the top of the ranking, some missing, the rest filled with other codes; some
codes upper-cased; for P, diagnosis codes fill the ranking past the 870
procedure codes; X spans move up to 12 characters. The valid-code list holds
every code of the CodiEsp gold files (the repository's own lists are not in
its public snapshot), with ``z87.4`` and without ``s43.40`` as the README's toy
outputs require; X gets it as both its D and its P list.

The official scripts (TeMU-BSC/codiesp-evaluation-script @ 976fc11) are
cloned into the work directory when the benchmark runs and run in a throwaway
virtual environment with trectools 0.0.42 and pandas 1.5.3
(``codiespX_evaluation.py`` fails on pandas 2); nothing of theirs is kept in
this repository. For D and P nlpbench computes in one run what takes the
official scripts two (``codiespD_P_evaluation.py`` for MAP,
``comp_f1_diag_proc.py`` for precision/recall/F1): their times are added.
Every number the official scripts print (MAP, micro P/R/F1, the per-document
tables) is compared with the ``codiesp2020`` report; any difference fails.
Each of the ``--repeat`` rounds runs the official scripts, the nlpbench
command and the task function in turn; the table gives medians. The command
runs from the checkout the benchmark imports, with its bytecode cached in the
work directory and one untimed run first (:func:`machine.checkout_env`): an
installed nlpbench, like the official scripts' packages, has its bytecode.
``--codes-per-document 10000`` makes an input ten times larger, where the
start-up of the commands no longer dominates.

    python benchmarks/codiesp_bench.py [--official-repo URL-OR-PATH] [--work DIR] [--repeat N]
        [--tracks D,P,X] [--codes-per-document N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nlpbench
from machine import checkout_env
from nlpbench.formats import codiesp as tsv
from nlpbench.metrics.coding import code_kind
from nlpbench.tasks.codiesp import score_codiesp

OFFICIAL_REPO = "https://github.com/TeMU-BSC/codiesp-evaluation-script"
OFFICIAL_COMMIT = "976fc11"
OFFICIAL_PACKAGES = ["trectools==0.0.42", "pandas==1.5.3", "numpy<2"]
ROOT = Path(__file__).resolve().parent.parent


def vectors_dir() -> Path:
    for candidate in (os.environ.get("NLPBENCH_VECTORS"), ROOT.parent / "shared" / "vectors", "/work/shared/vectors"):
        if candidate and (Path(candidate) / "codiesp").is_dir():
            return Path(candidate) / "codiesp"
    sys.exit("CodiEsp vectors not found: set NLPBENCH_VECTORS")


# --- the official side -----------------------------------------------------------------------------------------


OFFICIAL_SCRIPTS = ("codiespD_P_evaluation.py", "comp_f1_diag_proc.py", "codiespX_evaluation.py")


def official_checkout(source: str, work: Path) -> Path:
    """Clone the official repository into the work directory (once) and check out its scripts at OFFICIAL_COMMIT."""
    target = work / "codiesp-evaluation-script"
    if not (target / ".git").is_dir():
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", source, str(target)], check=True)
    subprocess.run(
        ["git", "-C", str(target), "checkout", "--quiet", OFFICIAL_COMMIT, "--", *OFFICIAL_SCRIPTS], check=True
    )
    return target


def official_python(work: Path) -> Path:
    """A throwaway virtual environment with what the official scripts need (made once)."""
    venv = work / "venv-official"
    python = venv / "bin" / "python"
    marker = venv / "installed.txt"
    if not marker.is_file() or marker.read_text() != " ".join(OFFICIAL_PACKAGES):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *OFFICIAL_PACKAGES], check=True)
        marker.write_text(" ".join(OFFICIAL_PACKAGES))
    return python


def run_official(python: Path, script: Path, args: list[str], work: Path) -> tuple[float, str]:
    """Wall time and standard output of one official script (it writes its intermediate files into ``work``)."""
    start = time.perf_counter()
    done = subprocess.run([str(python), str(script), *args], cwd=work, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{script.name} failed:\n{done.stderr}")
    return elapsed, done.stdout


def parse_official(stdout: str) -> dict:
    """MAP, micro P/R/F1 and the per-document tables an official script printed (nan as None)."""

    def number(text: str) -> float | None:
        return None if text == "nan" else float(text)

    parsed: dict = {"tables": {}}
    table = None
    for line in stdout.splitlines():
        header = re.fullmatch(r"Clinical case name\t\t\t(Precision|Recall|F-score)", line)
        if header:
            table = parsed["tables"].setdefault({"F-score": "f1"}.get(header[1], header[1].lower()), {})
        elif table is not None and "\t\t" in line:
            document, value = line.split("\t\t")
            table[document] = number(value)
        elif line.startswith("Micro-average"):
            table = None
            metric, value = re.fullmatch(r"Micro-average (\S+) = (\S+)", line).groups()
            parsed[{"F-score": "f1"}.get(metric, metric)] = number(value)
        elif line.startswith("MAP estimate: "):
            parsed["map"] = number(line.split(": ")[1])
    return parsed


def differences(report: dict, printed: dict) -> list[str]:
    """Every number the official script printed that the codiesp2020 report does not give."""
    found = []
    scores = {row["metric"]: row for row in report["scores"]}
    if "map" in printed and scores["map"]["value"] != printed["map"]:
        found.append(f"map {scores['map']['value']} != {printed['map']}")
    for metric in ("precision", "recall", "f1"):
        if metric in printed and scores["micro"][metric] != printed[metric]:
            found.append(f"micro {metric} {scores['micro'][metric]} != {printed[metric]}")
    rows = {row["document"]: row for row in report["per_document"] if row["metric"] == "micro"}
    for metric, table in printed["tables"].items():
        ours = {doc: row[metric] for doc, row in rows.items() if doc in table or row[metric] is not None}
        if ours != table:
            wrong = sorted(doc for doc in set(ours) | set(table) if ours.get(doc, "-") != table.get(doc, "-"))
            found.append(f"per-document {metric} differs for {len(wrong)} documents, e.g. {wrong[:3]}")
    return found


# --- the input ---------------------------------------------------------------------------------------------------


def valid_code_list(codiesp: Path, work: Path) -> Path:
    files = [*(codiesp / "corpus").glob("*/*.tsv"), *(codiesp / "eval-repo/gold").glob("codiesp-*/*/*")]
    path = work / "valid_codes.tsv"
    tsv.write_valid_codes(sorted((set().union(*map(tsv.read_assigned_codes, files)) | {"z87.4"}) - {"s43.40"}), path)
    return path


def ranked_predictions(gold: Path, documents: list[str], fillers: list[str], rng: random.Random, size: int) -> str:
    relevant: dict[str, list[str]] = {d.doc_id: list(dict.fromkeys(d.codes)) for d in tsv.read_ranked_codes(gold)}
    lines = []
    for doc in documents:
        found = [code for code in relevant.get(doc, []) if rng.random() < 0.85]
        others = [code for code in rng.sample(fillers, min(len(fillers), size + 50)) if code not in found]
        others += rng.choices(fillers, k=size - len(others))  # repeats, once the codes run out
        ranking = others[: size - len(found)]
        for code in found:
            ranking.insert(min(len(ranking), int(rng.expovariate(1 / 6))), code)
        lines += [f"{doc}\t{code.upper() if rng.random() < 0.1 else code}\n" for code in ranking]
    return "".join(lines)


def reference_predictions(
    gold: Path, codiesp: Path, documents: list[str], codes: list[str], rng: random.Random, size: int
) -> str:
    by_document: dict[str, list] = {}
    for reference in tsv.read_references(gold):
        by_document.setdefault(reference.doc_id, []).append(reference)
    lines = []
    for doc in documents:
        length = len((codiesp / "corpus/test/text_files" / f"{doc}.txt").read_text(encoding="utf-8"))
        chosen = []
        for reference in by_document.get(doc, []):
            if rng.random() < 0.7:
                start, end = reference.covering_bounds
                chosen.append((reference.code, max(0, start - rng.randint(-2, 12)), end + rng.randint(-2, 12)))
        while len(chosen) < size:
            start = rng.randrange(length)
            chosen.append((rng.choice(codes), start, min(length, start + rng.randint(3, 40))))
        rng.shuffle(chosen)
        for code, start, end in chosen:
            label = "DIAGNOSTICO" if code_kind(code) == "D" else "PROCEDIMIENTO"
            lines.append(f"{doc}\t{start} {end}\t{label}\t{code}\n")
    return "".join(lines)


def build_inputs(codiesp: Path, work: Path, tracks: list[str], size: int) -> dict[str, dict]:
    valid = valid_code_list(codiesp, work)
    codes = sorted(tsv.read_valid_codes(valid))
    d_codes = [code for code in codes if code_kind(code) == "D"]
    p_codes = [code for code in codes if code_kind(code) == "P"]
    documents = sorted(path.stem for path in (codiesp / "corpus/test/text_files").glob("*.txt"))
    test = codiesp / "corpus" / "test"
    made = {
        "D": lambda rng: (ranked_predictions(test / "testD.tsv", documents, d_codes, rng, size), [valid]),
        "P": lambda rng: (
            ranked_predictions(test / "testP.tsv", documents, p_codes + d_codes[:200], rng, size),
            [valid],
        ),
        "X": lambda rng: (reference_predictions(test / "testX.tsv", codiesp, documents, codes, rng, size), [valid] * 2),
    }
    inputs = {}
    for track in tracks:
        text, lists = made[track](random.Random(f"2020-{track}"))  # each track its seed, whichever tracks run
        pred = work / f"pred_{track}_{size}.tsv"
        pred.write_text(text, encoding="utf-8")
        inputs[track] = {"gold": test / f"test{track}.tsv", "pred": pred, "lists": lists, "lines": text.count("\n")}
    return inputs


# --- the run -----------------------------------------------------------------------------------------------------


def timed(run) -> tuple[float, object]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def benchmark_track(track: str, case: dict, official: Path, python: Path, work: Path, repeat: int) -> dict:
    gold, pred, lists = str(case["gold"]), str(case["pred"]), [str(p) for p in case["lists"]]
    if track == "X":
        scripts = [("codiespX_evaluation.py", ["-g", gold, "-p", pred, "-cD", lists[0], "-cP", lists[1]])]
    else:
        args = ["-g", gold, "-p", pred, "-c", lists[0]]
        scripts = [("codiespD_P_evaluation.py", args), ("comp_f1_diag_proc.py", args)]
    output = work / f"nlpbench_{track}.json"
    command = [sys.executable, "-m", "nlpbench", "score", "codiesp", "--track", track, "--gold", gold, "--pred", pred]
    command += [arg for path in lists for arg in ("--valid-codes", path)]
    command += ["--profile", "codiesp2020", "--format", "json", "--output", str(output)]

    env = checkout_env(Path(nlpbench.__file__).resolve().parents[1], work / "pycache")

    def cli():
        subprocess.run(command, check=True, capture_output=True, env=env)
        return json.loads(output.read_text())

    def in_process():
        return score_codiesp(gold, pred, lists, track=track, profile="codiesp2020").as_dict()

    official_times: list[list[float]] = [[] for _ in scripts]
    cli_times, task_times = [], []
    cli()  # compiles nlpbench's modules into the cache, untimed
    for _ in range(repeat):  # the sides in turn, so that a change of load touches them alike
        printed = {"tables": {}}
        for times_of_script, (script, args) in zip(official_times, scripts, strict=True):
            elapsed, stdout = run_official(python, official / script, args, work)
            times_of_script.append(elapsed)
            parsed = parse_official(stdout)
            printed["tables"].update(parsed.pop("tables"))
            printed.update(parsed)
        elapsed, report = timed(cli)
        cli_times.append(elapsed)
        elapsed, in_process_report = timed(in_process)
        task_times.append(elapsed)
    official_times = [statistics.median(t) for t in official_times]
    cli_time, task_time = statistics.median(cli_times), statistics.median(task_times)
    problems = differences(report, printed)
    if in_process_report != report:
        problems.append("the command and the task function disagree")
    micro = next(row for row in report["scores"] if row["metric"] == "micro")
    values = {"map": printed.get("map"), **{k: micro[k] for k in ("precision", "recall", "f1")}}
    return {"track": track, "lines": case["lines"], "official": official_times, "cli": cli_time,
            "task": task_time, "values": values, "problems": problems}  # fmt: skip


def times(seconds: list[float]) -> str:
    parts = " + ".join(f"{s:.2f}" for s in seconds)
    return f"{sum(seconds):.2f} s" + (f" ({parts})" if len(seconds) > 1 else "")


def ratio(official: list[float], ours: float) -> str:
    value = sum(official) / ours
    return f"{value:.1f}×" if value < 10 else f"{value:.0f}×"


def machine() -> str:
    model = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official-repo", default=OFFICIAL_REPO, help="git URL or local clone of the official scripts")
    parser.add_argument("--work", type=Path, default=Path("/tmp/nlpbench-codiesp-bench"), help="scratch directory")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of runs; the table gives medians")
    parser.add_argument("--tracks", default="D,P,X", help="comma-separated tracks to run")
    parser.add_argument("--codes-per-document", type=int, default=1000, help="predictions per document")
    options = parser.parse_args()
    options.work.mkdir(parents=True, exist_ok=True)
    work = options.work.resolve()

    official = official_checkout(options.official_repo, work)
    python = official_python(work)
    inputs = build_inputs(vectors_dir(), work, options.tracks.upper().split(","), options.codes_per_document)
    load_before = os.getloadavg()
    results = [benchmark_track(t, case, official, python, work, options.repeat) for t, case in inputs.items()]
    load_after = os.getloadavg()

    print(f"Machine: {machine()}; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after.")
    print(
        f"Official scripts @ {OFFICIAL_COMMIT} with {', '.join(OFFICIAL_PACKAGES)}; medians of {options.repeat} runs.\n"
    )
    print(
        "| track | predicted lines | official scripts | nlpbench command | speed-up | nlpbench in-process "
        "| speed-up | MAP | P / R / F1 | identical |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        v = r["values"]
        map_value = "—" if v["map"] is None else v["map"]
        print(f"| {r['track']} | {r['lines']:,} | {times(r['official'])} | {r['cli']:.2f} s | "
              f"{ratio(r['official'], r['cli'])} | {r['task']:.3f} s | {ratio(r['official'], r['task'])} | "
              f"{map_value} | {v['precision']} / {v['recall']} / {v['f1']} | "
              f"{'yes' if not r['problems'] else 'NO'} |")  # fmt: skip
    failures = [f"{r['track']}: {p}" for r in results for p in r["problems"]]
    if failures:
        sys.exit("numbers differ:\n" + "\n".join(failures))


if __name__ == "__main__":
    main()
