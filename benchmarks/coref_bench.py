"""``nlpbench score coref`` against the reference Perl scorer v8.01 (+ LEA branch) and scorch, in one run.

    python benchmarks/coref_bench.py --scorer /tmp/refscorer/v801/scorer.pl \\
        --lea-scorer /tmp/refscorer/lea/scorer.pl [--repeat 3] [--before /path/to/earlier/checkout/src]

Generates a seeded CoNLL-2012-scale key/response pair (by default at least
340 document parts and 150,000 tokens: parts of log-normal length, sentences
of 12 to 30 tokens, mentions of 1 to 5 tokens, nested ones included, in
chains of two or more like OntoNotes; the response misses mentions, invents
some, shifts boundaries, splits and merges chains), then scores it

- with nlpbench (``score coref --profile conll2012``, as a command),
- with the reference scorer v8.01, one process per metric (muc, bcub, ceafm,
  ceafe, blanc; ``none`` prints totals only) and its LEA branch (lea),
- with scorch 0.2.0: its CoNLL parser and its metric functions, document by
  document (its command line adds twinless system mentions to the key and
  averages documents, so its totals are not v8.01's),

and prints wall times and whether the counts agree: every total of the Perl
scorer against nlpbench's, every document's recall, precision and F1 of scorch
against nlpbench's. Fetch the reference scorer for the run (it is never part
of nlpbench): master f49f3f8 into one directory, branch LEA-scorer into
another. scorch must be installed (``pip install scorch==0.2.0``).

With ``--repeat N`` the commands (nlpbench's and the Perl scorer's) run N times
in turn and the table shows medians; with ``--before``, the command of an
earlier checkout runs too, in turn with this one's, and must write the same
report byte for byte. Each checkout's bytecode is compiled once, into a cache of
its own, before the clock. Each checkout's reading and scoring is also timed in
a process of its own, after its imports and a first run (the best of three).
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import math
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from machine import checkout_env, load
from nlpbench.formats.coref import write_conll2012
from nlpbench.model import Cluster, CorefDocument

HERE = Path(__file__).resolve().parents[1] / "src"

PERL_METRICS = ("muc", "bcub", "ceafm", "ceafe", "blanc")
WORDS = [
    "the",
    "pilot",
    "said",
    "it",
    "was",
    "a",
    "small",
    "engine",
    "failure",
    "and",
    "they",
    "landed",
    "near",
    "his",
    "farm",
]
_COUNTS = re.compile(r"Recall: \(([^/]+) / ([^)]+)\).*?Precision: \(([^/]+) / ([^)]+)\)")


# ---------------------------------------------------------------- the corpus


def generate(seed: int, parts: int, tokens: int) -> tuple[list[CorefDocument], list[CorefDocument]]:
    """At least ``parts`` document parts and ``tokens`` tokens.

    Part lengths are log-normal (median 350 tokens, a long tail to a few
    thousand), as OntoNotes parts vary from short newswire to long transcripts.
    """
    rng = random.Random(seed)
    keys: list[CorefDocument] = []
    responses: list[CorefDocument] = []
    total = 0
    while len(keys) < parts or total < tokens:
        index = len(keys)
        name = f"(nw/bench/{index // 3:02d}/doc_{index // 3:04d}); part {index % 3:03d}"
        target = min(4000, max(60, int(rng.lognormvariate(math.log(350), 0.7))))
        lengths: list[int] = []
        while sum(lengths) < target:
            lengths.append(rng.randint(12, 30))
        total += sum(lengths)
        key = key_chains(rng, lengths)
        keys.append(document(name, key, lengths))
        responses.append(document(name, response_chains(rng, key, lengths), lengths))
    return keys, responses


def key_chains(rng: random.Random, lengths: list[int]) -> list[list[tuple[int, int]]]:
    """Mentions in every sentence, each joining a recent chain or starting one; singletons dropped."""
    chains: list[list[tuple[int, int]]] = []
    offset = 0
    for length in lengths:
        for mention in sentence_mentions(rng, offset, length, rng.randint(1, 5)):
            recent = [c for c in chains[-12:] if fits(c, mention)]
            if recent and rng.random() < 0.7:
                rng.choice(recent).append(mention)
            else:
                chains.append([mention])
        offset += length
    return [c for c in chains if len(c) > 1]


def sentence_mentions(rng: random.Random, offset: int, length: int, count: int) -> list[tuple[int, int]]:
    mentions: set[tuple[int, int]] = set()
    for _ in range(count):
        start = rng.randrange(length)
        end = min(length - 1, start + rng.choice([0, 0, 0, 1, 1, 2, 3, 4]))
        mentions.add((offset + start, offset + end))
    return sorted(mentions)


def fits(chain: list[tuple[int, int]], mention: tuple[int, int]) -> bool:
    """A mention may join a chain if it crosses none of its mentions (CoNLL brackets must nest per chain)."""
    s, e = mention
    return all(e < s2 or e2 < s or (s <= s2 and e2 <= e) or (s2 <= s and e <= e2) for s2, e2 in chain)


def response_chains(
    rng: random.Random, key: list[list[tuple[int, int]]], lengths: list[int]
) -> list[list[tuple[int, int]]]:
    """Misses 12%, shifts a boundary 6%, moves 8% of mentions to another chain, adds 10% invented mentions."""
    ends = list(itertools.accumulate(lengths))
    total = ends[-1]

    def within(start: int, end: int) -> tuple[int, int]:
        """The span cut at the end of the sentence it starts in."""
        return start, min(end, ends[bisect.bisect_right(ends, start)] - 1)

    used = {m for chain in key for m in chain}
    chains: list[list[tuple[int, int]]] = []
    taken: set[tuple[int, int]] = set()

    def place(mention: tuple[int, int], chain: list[tuple[int, int]] | None) -> None:
        if mention in taken:
            return
        if chain is None or not fits(chain, mention):
            chain = []
            chains.append(chain)
        chain.append(mention)
        taken.add(mention)

    for key_chain in key:
        own: list[tuple[int, int]] = []
        chains.append(own)
        for s, e in key_chain:
            draw = rng.random()
            if draw < 0.12:
                continue
            if draw < 0.18:
                s, e = within(s, max(s, e + rng.choice([-1, 1])))
            if draw > 0.92 and len(chains) > 1:
                place((s, e), rng.choice(chains[-6:]))
            else:
                place((s, e), own)
    for _ in range(len(used) // 10):
        start = rng.randrange(total)
        mention = within(start, start + rng.choice([0, 0, 1, 2]))
        place(mention, rng.choice(chains[-20:]) if chains and rng.random() < 0.5 else None)
    return [c for c in chains if c]


def document(name: str, chains: list[list[tuple[int, int]]], lengths: list[int]) -> CorefDocument:
    words = iter(WORDS * (sum(lengths) // len(WORDS) + 1))
    sentences = tuple(tuple(next(words) for _ in range(length)) for length in lengths)
    return CorefDocument(name, tuple(Cluster(tuple(chain), str(i)) for i, chain in enumerate(chains)), sentences)


# ---------------------------------------------------------------- the scorers


class Timing(NamedTuple):
    """Wall-clock seconds and CPU seconds (user + system): CPU time is what a busy machine changes least."""

    wall: float
    cpu: float

    def __add__(self, other: tuple) -> Timing:
        return Timing(self.wall + other[0], self.cpu + other[1])


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[Timing, str]:
    """Run a command (in ``env``, or this process's environment); its wall time, its CPU time (from the
    children's resource usage) and its output."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return Timing(wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), done.stdout


def timed_here(work: Callable[[], object]) -> tuple[Timing, object]:
    started, cpu = time.perf_counter(), time.process_time()
    result = work()
    return Timing(time.perf_counter() - started, time.process_time() - cpu), result


def run_nlpbench(key: Path, response: Path, out: Path, env: dict[str, str]) -> tuple[Timing, bytes]:
    """Time the command writing its JSON report to ``out``; the report's bytes."""
    seconds, _ = timed(
        [sys.executable, "-m", "nlpbench", "score", "coref", "--key", str(key), "--response", str(response),
         "--profile", "conll2012", "--format", "json", "--output", str(out)],
        env,
    )  # fmt: skip
    return seconds, out.read_bytes()


def median(timings: list[Timing]) -> Timing:
    """The run of median CPU time (the lower middle one of an even number)."""
    return sorted(timings, key=lambda timing: timing.cpu)[(len(timings) - 1) // 2]


_IN_PROCESS = """
import json, sys, time
from nlpbench.tasks.coref import score_coref
key, response = sys.argv[1:3]
score_coref(key, response, profile="conll2012")  # imports numpy and scipy on first use
runs = []
for _ in range(3):
    started, cpu = time.perf_counter(), time.process_time()
    score_coref(key, response, profile="conll2012")
    runs.append((time.perf_counter() - started, time.process_time() - cpu))
print(json.dumps(min(runs)))
"""


def run_in_process(key: Path, response: Path, env: dict[str, str]) -> Timing:
    """Reading and scoring alone, in a process of the checkout ``env`` names, its modules already imported and
    a first run done (the best of three runs)."""
    _, out = timed([sys.executable, "-c", _IN_PROCESS, str(key), str(response)], env)
    return Timing(*json.loads(out))


def run_perl(scorer: Path, metric: str, key: Path, response: Path) -> tuple[Timing, dict[str, tuple[float, ...]]]:
    """Time one metric of the Perl scorer and read its totals: mention identification and the metric's counts."""
    seconds, out = timed(["perl", str(scorer), metric, str(key), str(response), "none"])
    totals = out.split("====== TOTALS =======")[-1]
    counts = {}
    for line in totals.splitlines():
        match = _COUNTS.search(line)
        if match:
            label = line.split(":")[0]
            counts[label] = tuple(float(x) for x in match.groups())
    return seconds, counts


def run_scorch(key: Path, response: Path) -> tuple[Timing, dict[str, dict[str, tuple[float, float, float]]]]:
    """scorch's parse of both files and its metric functions per document: {document: {metric: (R, P, F)}}."""
    from scorch import conll, scores

    functions = {
        "muc": scores.muc,
        "bcub": scores.b_cubed,
        "ceafm": scores.ceaf_m,
        "ceafe": scores.ceaf_e,
        "blanc": scores.blanc,
    }

    def score() -> dict[str, dict[str, tuple[float, float, float]]]:
        with open(key) as k, open(response) as r:
            pairs = list(zip(conll.parse_file(k), conll.parse_file(r), strict=True))
        results = {}
        for (name, key_entities), (_, response_entities) in pairs:
            key_sets = [set(m) for m in key_entities.values()]
            response_sets = [set(m) for m in response_entities.values()]
            results[name] = {metric: f(key_sets, response_sets) for metric, f in functions.items()}
        return results

    return timed_here(score)


# ---------------------------------------------------------------- comparing


def perl_agreement(report: dict, perl: dict[str, dict[str, tuple[float, ...]]]) -> list[tuple[str, str, str, bool]]:
    """(metric, nlpbench counts, Perl counts, equal to 1e-12 relative) for every total the Perl scorer printed."""
    rows = {(r["metric"], r.get("label")): r for r in report["scores"]}
    fields = ("recall_num", "recall_den", "precision_num", "precision_den")
    wanted = [("mentions", None, "muc", "Identification of Mentions")]
    wanted += [(m, None, m, "Coreference") for m in ("muc", "bcub", "ceafm", "ceafe", "lea")]
    wanted += [("blanc", "coreference", "blanc", "Coreference links")]
    wanted += [("blanc", "non-coreference", "blanc", "Non-coreference links")]
    table = []
    for metric, label, run, line in wanted:
        if run not in perl:
            continue
        ours = tuple(rows[metric, label][f] for f in fields)
        theirs = perl[run][line]
        same = all(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for a, b in zip(ours, theirs, strict=True))
        name = metric if label is None else f"{metric} ({label})"
        table.append((name, " / ".join(f"{x:.15g}" for x in ours), " / ".join(f"{x:.15g}" for x in theirs), same))
    return table


def scorch_difference(report: dict, scorch: dict) -> float:
    """The largest |Δ| between scorch's and nlpbench's per-document R, P and F1 over MUC, B³, CEAFm, CEAFe, BLANC.

    BLANC is left out for a document whose key has fewer than two mentions (scorch scores it 1, v8.01 0).
    """
    ours: dict[tuple[str, str], dict] = {}
    for row in report["per_document"]:
        if "label" not in row:
            ours[row["document"], row["metric"]] = row
    largest = 0.0
    for name, metrics in scorch.items():
        document = "(" + name.rsplit("-", 1)[0] + "); part " + name.rsplit("-", 1)[1]
        mentions = ours[document, "mentions"]["recall_den"]
        for metric, values in metrics.items():
            if metric == "blanc" and mentions < 2:
                continue
            row = ours[document, metric]
            for a, b in zip((row["recall"], row["precision"], row["f1"]), values, strict=True):
                largest = max(largest, abs(a - float(b)))
    return largest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", type=Path, help="scorer.pl of the reference scorer v8.01 (master f49f3f8)")
    parser.add_argument("--lea-scorer", type=Path, help="scorer.pl of its LEA-scorer branch")
    parser.add_argument("--parts", type=int, default=340, help="at least this many document parts (default 340)")
    parser.add_argument("--tokens", type=int, default=150_000, help="and at least this many tokens (default 150,000)")
    parser.add_argument("--seed", type=int, default=2012)
    parser.add_argument("--work", type=Path, help="where to write the generated files (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command, in turn; the table shows medians")
    parser.add_argument("--before", type=Path, help="the src directory of an earlier checkout, its command timed too")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="coref-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    key, response = work / "key.conll", work / "response.conll"
    keys, responses = generate(args.seed, args.parts, args.tokens)
    write_conll2012(keys, key)
    write_conll2012(responses, response)
    tokens = sum(d.token_count for d in keys)
    mentions = sum(len(c) for d in keys for c in d.clusters), sum(len(c) for d in responses for c in d.clusters)
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, load average {load()} at the start")
    print(f"python {platform.python_version()}; files in {work}; medians of {args.repeat} run(s)")
    print(f"corpus: {len(keys)} parts, {tokens} tokens, {mentions[0]} key / {mentions[1]} response mentions")

    sides = {"after": HERE} | ({"before": args.before.resolve()} if args.before else {})
    names = {
        "after": "nlpbench score coref --profile conll2012 (command, all metrics)",
        "before": "the same command, earlier checkout",
    }
    in_process = {
        "after": "nlpbench reading and scoring, in process (no start-up, no imports)",
        "before": "the same reading and scoring, earlier checkout",
    }
    envs = {side: checkout_env(src, work / f"pycache-{side}") for side, src in sides.items()}
    outs = {side: work / f"nlpbench-{side}.json" for side in sides}
    for side in sides:  # each checkout's bytecode compiled before the clock
        run_nlpbench(key, response, outs[side], envs[side])
    runs: dict[str, list[Timing]] = {names[side]: [] for side in sides}
    written: dict[str, bytes] = {}
    perl: dict[str, dict[str, tuple[float, ...]]] = {}
    perl_totals: list[Timing] = []
    scorers = [(args.scorer, m) for m in PERL_METRICS] + [(args.lea_scorer, "lea")]
    for _ in range(args.repeat):
        for side in sides:
            seconds, written[side] = run_nlpbench(key, response, outs[side], envs[side])
            runs[names[side]].append(seconds)
        total = Timing(0.0, 0.0)
        for scorer, metric in scorers:
            if scorer is not None:
                seconds, perl[metric] = run_perl(scorer, metric, key, response)
                runs.setdefault(f"reference scorer `{metric}`", []).append(seconds)
                total += seconds
        perl_totals.append(total)
    report = json.loads(written["after"])
    if args.before and written["before"] != written["after"]:
        sys.exit("the earlier checkout's report differs from this one's")
    times = {name: median(timings) for name, timings in runs.items()}
    for side in sides:
        times[in_process[side]] = run_in_process(key, response, envs[side])
    if perl:
        times["reference scorer, all metrics"] = perl_total = median(perl_totals)
    try:
        times["scorch 0.2.0: parse and score per document, in process"], scorch = run_scorch(key, response)
    except ImportError:
        scorch = None
        print("scorch is not installed: skipped")
    print("\n| run | wall s | CPU s |\n|---|---|---|")
    for name, timing in times.items():
        print(f"| {name} | {timing.wall:.2f} | {timing.cpu:.2f} |")
    if perl:
        compared = [*(names[side] for side in sides), *(in_process[side] for side in sides)]
        for name in compared:
            timing = times[name]
            print(
                f"reference scorer / {name}: {perl_total.wall / timing.wall:.1f}x wall, "
                f"{perl_total.cpu / timing.cpu:.1f}x CPU"
            )

    if perl:
        print("\n| metric | nlpbench (R num / R den / P num / P den) | reference scorer | identical |")
        print("|---|---|---|---|")
        for name, ours, theirs, same in perl_agreement(report, perl):
            print(f"| {name} | {ours} | {theirs} | {'yes' if same else 'NO'} |")
    if scorch is not None:
        print(f"\nscorch vs nlpbench, largest per-document |ΔR|, |ΔP|, |ΔF1|: {scorch_difference(report, scorch):.1e}")
    conll = next(r["f1"] for r in report["scores"] if r["metric"] == "conll")
    print(f"CoNLL F1 (nlpbench): {conll:.6f}")
    if args.before:
        print("the earlier checkout's report: identical, byte for byte")
    print(f"load average {load()} at the end")


if __name__ == "__main__":
    main()
