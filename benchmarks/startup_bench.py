"""Start-up: the CPU time of ``nlpbench --help`` and of one-note scores, an earlier checkout against this one.

    python benchmarks/startup_bench.py --before /path/to/earlier/checkout/src [--repeat 3]

Each command runs as a fresh ``python -m nlpbench`` with ``PYTHONPATH`` set to
the side's ``src`` (the earlier checkout given by ``--before``, or this
checkout), in turns (before, after, before, after, …) so that the machine's load
falls on both sides alike. The time is the child's CPU time, user + system (from
``getrusage``), the median of ``--repeat`` runs; the wall time is shown beside
it. Both sides compile their modules once, into a cache of their own
(``PYTHONPYCACHEPREFIX``), before anything is timed: a user's installed package
has its bytecode. Each command's standard output must be byte for byte the same
on both sides, or the benchmark fails.

The commands: ``nlpbench --help``; ``nlpbench score sandbox`` on the one-note
example shipped with nlpbench (the table, as a person reads it); ``nlpbench
score timelines`` on one patient (JSON); a one-note table of every other task
(coref, ner, codiesp, linking, relations; i2b2 in JSON, its table being wider
than the console); three platform commands that only read a store (an empty
SQLite store made by this checkout's ``db upgrade``: ``submissions list``, the
default queue's settings, a data site's ``site jobs``); and, for scale, three floors: the CPU time of importing the
libraries a one-note ``score sandbox`` table once needed (kept as it was, so
that runs stay comparable), of importing Typer alone (what any command pays),
and of importing Typer's help renderer (what ``--help`` pays before nlpbench).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from machine import checkout_env, load

HERE = Path(__file__).resolve().parents[1] / "src"
EXAMPLES = HERE / "nlpbench" / "data" / "examples"


@dataclass
class Runs:
    """The CPU and wall seconds of a command's runs on one side, and the output of its first run."""

    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    output: bytes | None = None

    def median(self) -> tuple[float, float]:
        return statistics.median(self.cpu), statistics.median(self.wall)


#: What a one-note ``score sandbox`` table loaded when Rich drew every table: the interpreter, Typer (which
#: parses options with pydantic), numpy (the span counts), msgspec (the reader) and Rich (the table). A table
#: that fits the screen and holds plain texts is now laid out without Rich: the floor is kept as it was, so
#: that runs stay comparable.
FLOOR = ["-c", "import typer, pydantic, numpy, msgspec, rich.console, rich.table"]
#: What every command pays before nlpbench's own work: the interpreter and Typer; and what ``--help`` pays too, Typer's
#: help renderer (Rich, with Markdown and tracebacks).
TYPER_FLOOR = ["-c", "import typer"]
HELP_FLOOR = ["-c", "import typer.rich_utils"]


def run(src: Path, argv: list[str], cache: Path) -> tuple[float, float, bytes]:
    """Run ``python -m nlpbench ARGV`` (or ``python ARGV`` when it starts with ``-c``) with ``src`` first on
    the path: CPU seconds, wall seconds, stdout."""
    env = checkout_env(src, cache) | {"COLUMNS": "100"}
    command = [sys.executable, *argv] if argv[0] == "-c" else [sys.executable, "-m", "nlpbench", *argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"failed ({done.returncode}) with PYTHONPATH={src}: nlpbench {' '.join(argv)}\n{done.stderr.decode()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall, done.stdout


def commands(tmp: Path) -> dict[str, list[str]]:
    """The measured commands by name, their inputs written to ``tmp``."""
    timeline = '{"p1": [["taxol", "contains-1", "2013-02-22"], ["taxol", "begins-on", "2013-02"]]}'
    (tmp / "gold.json").write_text(timeline, encoding="utf-8")
    (tmp / "pred.json").write_text(timeline.replace("2013-02-22", "2013-02-23"), encoding="utf-8")
    (tmp / "ids.txt").write_text("p1\n", encoding="utf-8")
    key = (
        "#begin document (doc); part 000\nw 0 0 Mary (1)\nw 0 1 saw -\nw 0 2 her (1)\nw 0 3 brother (2\nw 0 4 Tom 2)\n"
    )
    (tmp / "key.conll").write_text(key + "#end document\n", encoding="utf-8")
    (tmp / "response.conll").write_text(key.replace("her (1)", "her (2)") + "#end document\n", encoding="utf-8")
    (tmp / "ner.conll").write_text("Dr. B-PER\nLee I-PER\nsaw O\nhim O\n\n", encoding="utf-8")
    (tmp / "ner-pred.conll").write_text("Dr. O\nLee B-PER\nsaw O\nhim O\n\n", encoding="utf-8")
    (tmp / "gold.tsv").write_text("S1\tn39.0\nS1\tr52\n", encoding="utf-8")
    (tmp / "pred.tsv").write_text("S1\tR52\nS1\tA53.9\n", encoding="utf-8")
    (tmp / "codes.tsv").write_text("N39.0\tdesc\nR52\tdesc\nA53.9\tdesc\n", encoding="utf-8")
    entities = [{"mention": "CAT", "qid": "cat"}, {"mention": "MY DOG", "qid": "rex"}]
    (tmp / "nel.jsonl").write_text(json.dumps({"id": "d1", "entities": entities}) + "\n", encoding="utf-8")
    (tmp / "nel-pred.jsonl").write_text(json.dumps({"id": "d1", "entities": entities[:1]}) + "\n", encoding="utf-8")
    for side, relation in (("brat-gold", "works_for"), ("brat-pred", "located_in")):
        (tmp / side).mkdir()
        (tmp / side / "doc1.txt").write_text("John works for Acme.", encoding="utf-8")
        ann = f"T1\tPER 0 4\tJohn\nT2\tORG 15 19\tAcme\nR1\t{relation} Arg1:T1 Arg2:T2\n"
        (tmp / side / "doc1.ann").write_text(ann, encoding="utf-8")
    xml = '<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2><TEXT><![CDATA[Seen by Dr. Lee on 2019-03-04.]]></TEXT>'
    tags = '<TAGS><DOCTOR id="P0" start="12" end="15" text="Lee" TYPE="DOCTOR" comment="" />{}</TAGS></deIdi2b2>\n'
    date = '<DATE id="P1" start="19" end="29" text="2019-03-04" TYPE="DATE" comment="" />'
    (tmp / "i2b2-gold.xml").write_text(xml + tags.format(date), encoding="utf-8")
    (tmp / "i2b2-pred.xml").write_text(xml + tags.format(""), encoding="utf-8")
    store = f"sqlite:///{tmp / 'store.db'}"
    made = [sys.executable, "-m", "nlpbench", "db", "upgrade", "--db", store]
    subprocess.run(made, env=checkout_env(HERE, tmp / "pycache-store"), capture_output=True, check=True)
    return {
        "nlpbench --help": ["--help"],
        "score sandbox, one note (table)": [
            "score", "sandbox", "--gold", str(EXAMPLES / "gold.json"), "--pred", str(EXAMPLES / "pred.json"),
        ],
        "score timelines, one patient (JSON)": [
            "score", "timelines", "--gold", str(tmp / "gold.json"), "--pred", str(tmp / "pred.json"),
            "--all-ids", str(tmp / "ids.txt"), "--mode", "day", "--format", "json",
        ],
        "score coref, one document (table)": [
            "score", "coref", "--key", str(tmp / "key.conll"), "--response", str(tmp / "response.conll"),
        ],
        "score ner, one sentence (table)": [
            "score", "ner", "--gold", str(tmp / "ner.conll"), "--pred", str(tmp / "ner-pred.conll"),
        ],
        "score codiesp, one case (table)": [
            "score", "codiesp", "--track", "D", "--gold", str(tmp / "gold.tsv"), "--pred", str(tmp / "pred.tsv"),
            "--valid-codes", str(tmp / "codes.tsv"),
        ],
        "score linking, one document (table)": [
            "score", "linking", "--gold", str(tmp / "nel.jsonl"), "--pred", str(tmp / "nel-pred.jsonl"),
            "--gold-format", "jsonl",
        ],
        "score relations, one document (table)": [
            "score", "relations", "--gold", str(tmp / "brat-gold"), "--pred", str(tmp / "brat-pred"),
        ],
        "score i2b2, one note (JSON)": [
            "score", "i2b2", "--gold", str(tmp / "i2b2-gold.xml"), "--pred", str(tmp / "i2b2-pred.xml"),
            "--format", "json",
        ],
        "submissions list, empty store": ["submissions", "list", "--db", store],
        "submissions queue default": ["submissions", "queue", "default", "--db", store],
        "site jobs, empty store": ["site", "jobs", "--db", store],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the src directory of the earlier checkout")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each command on each side")
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": HERE}
    with tempfile.TemporaryDirectory() as directory:
        tmp = Path(directory)
        measured = commands(tmp)
        results = {(name, side): Runs() for name in measured for side in sides}
        caches = {side: tmp / f"pycache-{side}" for side in sides}
        for argv in measured.values():  # compile both sides' modules before timing
            for side, src in sides.items():
                run(src, argv, caches[side])
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"before: {sides['before']}\nafter:  {sides['after']}")
        print(f"CPU = user + system seconds of the child, medians of {args.repeat}", end="; ")
        print(f"load average {load()} at the start\n")
        for _ in range(args.repeat):
            for name, argv in measured.items():
                for side, src in sides.items():
                    cpu, wall, output = run(src, argv, caches[side])
                    runs = results[name, side]
                    runs.cpu.append(cpu)
                    runs.wall.append(wall)
                    runs.output = output if runs.output is None else runs.output
        print("| command | before CPU | after CPU | before / after | before wall | after wall | output |")
        print("|---|---:|---:|---:|---:|---:|---|")
        failed = False
        for name in measured:
            (before_cpu, before_wall), (after_cpu, after_wall) = (results[name, s].median() for s in sides)
            same = results[name, "before"].output == results[name, "after"].output
            failed |= not same
            print(
                f"| {name} | {before_cpu:.3f} | {after_cpu:.3f} | {before_cpu / after_cpu:.2f}x | "
                f"{before_wall:.3f} | {after_wall:.3f} | {'identical' if same else 'DIFFERS'} |"
            )
        print()
        for name, floor in (("floor", FLOOR), ("Typer", TYPER_FLOOR), ("Typer's help", HELP_FLOOR)):
            cpu = [run(HERE, floor, caches["after"])[0] for _ in range(args.repeat)]
            print(f"{name} (python {' '.join(floor)}): {statistics.median(cpu):.3f} s of CPU")
        print(f"load average {load()} at the end")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
