"""Time ``nlpbench score timelines`` against the official ChemoTimelines 2024 ``eval_timeline.py``.

Both score the same seeded input (10,000 patients by default) in each mode,
strict and relaxed to day, month and year, as separate processes: CPU time
inside each process from reading the files to the scores, and CPU and wall
time of the whole command; with ``--repeat N`` each is run N times in turn and
the table shows medians (other work on the machine slows both sides; the load
average is printed). Every number the official script prints (micro, Type A
and Type B precision / recall / F1, the official score) must equal the same
number of nlpbench's ``chemotimelines2024`` report to the last bit in every run,
or the benchmark fails naming each one that differs (nlpbench's other values,
such as the precision and recall of its ``official`` row, have no counterpart).

The official script is not on a package registry: clone it beside this checkout
and give its path, with a Python that has python-dateutil 2.8.2 (its pinned
requirement; pandas is not needed)::

    git clone https://github.com/BCHHealthNLP/chemoTimelinesEval /tmp/chemoTimelinesEval
    python3 -m venv /tmp/chemo-venv && /tmp/chemo-venv/bin/pip install python-dateutil==2.8.2
    python benchmarks/timelines_bench.py --official /tmp/chemoTimelinesEval/eval_timeline.py \\
        --official-python /tmp/chemo-venv/bin/python [--before /path/to/earlier/checkout/src]

With ``--checks``, it times instead the read of both files as ``score timelines`` reads them (each file
parsed into its patients, every patient decoded), in process, with the JSON readers' checks (repeated keys,
depth) and with them replaced by a bare decode, in turns in one process: what the checks cost, and their share of
the read, for this checkout and the ``--before`` one. No official script is needed for it.

With ``--before``, the command of that earlier checkout runs too, in turn with
this one's, and must write the same report byte for byte; each checkout's
bytecode is compiled once, into a cache of its own, before the clock.

The input mixes what real system output holds: full dates, months, years,
``%W`` weeks, times of day, repeated and generic mentions, relabelled and
shifted tuples, upper-case labels, patients with empty gold.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from machine import checkout_env, load

HERE = Path(__file__).resolve().parents[1] / "src"

CHEMOS = [
    "taxol", "carboplatin", "cisplatin", "paclitaxel", "doxorubicin", "cyclophosphamide", "docetaxel",
    "gemcitabine", "letrozole", "tamoxifen", "herceptin", "bevacizumab", "chemotherapy", "chemo",
    "chemoradiation", "Chemotherapy",
]  # fmt: skip
LABELS = ["contains-1"] * 6 + ["begins-on", "ends-on", "begins-on", "ends-on", "before", "BEGINS-ON"]


def random_date(rng: random.Random) -> str:
    day = date(2010, 1, 1) + timedelta(days=rng.randrange(6 * 365))
    kind = rng.random()
    if kind < 0.75:
        return day.isoformat()
    if kind < 0.85:
        return f"{day.year}-{day.month:02d}"
    if kind < 0.9:
        return str(day.year)
    if kind < 0.96:
        return f"{day.year}-W{rng.randrange(1, 53):02d}"
    return f"{day.isoformat()}T{rng.randrange(24):02d}:{rng.randrange(60):02d}"


def shifted(value: str, rng: random.Random) -> str:
    """A nearby date: a few days or weeks off, or the same day written as a month."""
    if len(value) != 10:
        return value
    day = date.fromisoformat(value) + timedelta(days=rng.choice([-40, -9, -3, -1, 1, 2, 5, 20]))
    return f"{day.year}-{day.month:02d}" if rng.random() < 0.2 else day.isoformat()


def patient(rng: random.Random) -> tuple[list[list[str]], list[list[str]]]:
    if rng.random() < 0.08:  # empty gold, sometimes with predictions
        return [], [[rng.choice(CHEMOS), "contains-1", random_date(rng)] for _ in range(rng.choice([0, 0, 1, 3]))]
    gold = []
    for _ in range(rng.randrange(1, 20)):
        chemo = rng.choice(CHEMOS)
        if rng.random() < 0.2:  # a treatment course: begins-on, contains-1 inside, ends-on
            start = date(2010, 1, 1) + timedelta(days=rng.randrange(5 * 365))
            end = start + timedelta(days=rng.randrange(30, 200))
            middle = start + (end - start) / 2
            gold += [[chemo, "begins-on", start.isoformat()], [chemo, "contains-1", middle.isoformat()]]
            gold.append([chemo, "ends-on", end.isoformat()])
        else:
            gold.append([chemo, rng.choice(LABELS), random_date(rng)])
    pred = []
    for chemo, label, value in gold:
        roll = rng.random()
        if roll < 0.55:
            pred.append([chemo, label, value])
        elif roll < 0.65:
            pred.append([chemo, rng.choice(LABELS), value])
        elif roll < 0.8:
            pred.append([chemo, label, shifted(value, rng)])
        elif roll < 0.85:
            pred += [[chemo, label, value]] * 2
    pred += [[rng.choice(CHEMOS), rng.choice(LABELS), random_date(rng)] for _ in range(rng.randrange(4))]
    rng.shuffle(pred)
    return gold, pred


def write_inputs(directory: Path, patients: int, seed: int) -> tuple[Path, Path, Path]:
    rng = random.Random(seed)
    gold, pred = {}, {}
    for number in range(patients):
        name = f"patient{number:05d}"
        gold[name], pred[name] = patient(rng)
    paths = directory / "gold.json", directory / "pred.json", directory / "all_ids.txt"
    paths[0].write_text(json.dumps(gold))
    paths[1].write_text(json.dumps(pred))
    paths[2].write_text("".join(f"{name}\n" for name in pred))
    return paths


OFFICIAL_TIMED = """
import runpy, sys, time
import dateutil.parser  # imported before the clock starts, as nlpbench's imports are
script, sys.argv = sys.argv[1], sys.argv[1:]
cpu, wall = time.process_time(), time.perf_counter()
runpy.run_path(script, run_name="__main__")
print(f"TIMED {time.process_time() - cpu} {time.perf_counter() - wall}", file=sys.stderr)
"""

NLPBENCH_TIMED = """
import sys, time
from datetime import date
import dateutil.parser  # imported before the clock starts, as for the official script
from nlpbench import profiles
from nlpbench.report import render
from nlpbench.tasks.timelines import score_timelines
profiles.get("timelines", "chemotimelines2024")  # the profile's lookup and imports, done first too
gold, pred, ids, mode, today = sys.argv[1:]
cpu, wall = time.process_time(), time.perf_counter()
reference = date.fromisoformat(today)
report = score_timelines(gold, pred, ids, mode=mode, profile="chemotimelines2024", reference_date=reference)
print(f"TIMED {time.process_time() - cpu} {time.perf_counter() - wall}", file=sys.stderr)
sys.stdout.write(render(report, "json"))
"""


CHECKS_TIMED = """
import statistics, sys, time
import msgspec
from nlpbench import files
from nlpbench.formats import jsonstream
from nlpbench.formats import timelines as timeline_format
gold, pred, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = [name for name in ("check", "no_repeated_key", "raw_members") if hasattr(jsonstream, name)]
checked = {name: getattr(jsonstream, name) for name in names}
bare = {"check": lambda *args, **kwargs: None, "no_repeated_key": lambda *args, **kwargs: None,
        "raw_members": lambda data, path: (msgspec.json.decode(data, type=dict[str, msgspec.Raw]), None)}
def read():
    for path in (gold, pred):
        patients = timeline_format.PatientTimelines(files.source(path))
        for patient in patients:
            patients[patient]
times = {True: [], False: []}
for run in range(repeat + 1):  # the first round warms up
    for with_checks in (True, False):
        for name, function in checked.items():
            setattr(jsonstream, name, function if with_checks else bare[name])
        started = time.process_time()
        read()
        if run:
            times[with_checks].append(time.process_time() - started)
print("CHECKS", statistics.median(times[True]), statistics.median(times[False]))
"""


def time_checks(gold: Path, pred: Path, sides: dict[str, Path], repeat: int, tmp: Path) -> None:
    """Print the CPU seconds of reading both files with and without the checks, each checkout in its own process."""
    print("| checkout | read with checks | read, bare decode | checks | checks' share of the read |")
    print("|---|---:|---:|---:|---:|")
    for side, src in sides.items():
        env = checkout_env(src, tmp / f"pycache-{side}")
        _, out, _ = run([sys.executable, "-c", CHECKS_TIMED, str(gold), str(pred), str(max(repeat, 3))], env)
        checked, bare = map(float, out.split()[1:])
        share = (checked - bare) / checked
        print(f"| {side} | {checked:.4f} | {bare:.4f} | {checked - bare:.4f} | {share:.0%} |")


@dataclass
class Timing:
    cpu: float  # seconds of CPU, user + system
    wall: float


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[Timing, str, str]:
    """Run a command (in ``env``, or this process's environment); its whole CPU and wall time, standard output
    and error."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Timing(cpu, wall), done.stdout, done.stderr


def timed(stderr: str) -> Timing:
    """The in-process timing a TIMED line reports."""
    line = next(line for line in stderr.splitlines() if line.startswith("TIMED "))
    cpu, wall = map(float, line.split()[1:])
    return Timing(cpu, wall)


OFFICIAL_LINES = {
    "Micro precision:": ("micro", "precision"),
    "Micro recall:": ("micro", "recall"),
    "Micro f1:": ("micro", "f1"),
    "[Type A] Macro precision:": ("type_a", "precision"),
    "[Type A] Macro recall:": ("type_a", "recall"),
    "[Type A] Macro f1:": ("type_a", "f1"),
    "[Type B] Macro precision:": ("type_b", "precision"),
    "[Type B] Macro recall:": ("type_b", "recall"),
    "[Type B] Macro f1:": ("type_b", "f1"),
    "Official Score: ": ("official", "f1"),
}


def official_numbers(stdout: str) -> dict[tuple[str, str], float]:
    numbers = {}
    for line in stdout.splitlines():
        for prefix, name in OFFICIAL_LINES.items():
            if line.startswith(prefix) and not line.startswith("Official Score: Arithmetic"):
                numbers[name] = float(line[len(prefix) :])
    return numbers


def nlpbench_numbers(stdout: str) -> dict[tuple[str, str], float]:
    report = json.loads(stdout)
    metrics = ("precision", "recall", "f1")
    return {(row["metric"], key): row[key] for row in report["scores"] for key in metrics if key in row}


def disagreements(official: dict[tuple[str, str], float], mine: dict[tuple[str, str], float]) -> list[str]:
    """Each number the official script printed that nlpbench's report does not hold bit for bit (missing, or
    another float), both values shown; none printed at all is one. nlpbench's other values (the precision
    and recall of its ``official`` row, which the script does not print) have nothing to compare with."""
    if not official:
        return ["the official script printed no score"]
    problems = []
    for (metric, key), value in official.items():
        if (metric, key) not in mine:
            problems.append(f"{metric} {key}: official {value!r}, nlpbench has none")
        elif mine[metric, key].hex() != value.hex():
            problems.append(f"{metric} {key}: official {value!r}, nlpbench {mine[metric, key]!r}")
    return problems


@dataclass
class Measured:
    """What one mode's runs gave: CPU seconds of each in-process scoring, each command's timing, the numbers."""

    scoring: list[float]
    command: list[Timing]
    numbers: list[dict[tuple[str, str], float]]

    def median(self) -> tuple[float, Timing]:
        commands = sorted(self.command, key=lambda timing: timing.cpu)
        return statistics.median(self.scoring), commands[(len(commands) - 1) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", type=Path, help="path of eval_timeline.py (needed unless --checks)")
    parser.add_argument("--official-python", default=sys.executable, help="a Python with python-dateutil")
    parser.add_argument("--patients", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--modes", nargs="+", default=["strict", "day", "month", "year"])
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each measurement, in turn; the table shows medians"
    )
    parser.add_argument("--before", type=Path, help="the src directory of an earlier checkout, its command timed too")
    parser.add_argument("--checks", action="store_true", help="time the read with and without its checks instead")
    args = parser.parse_args()
    if args.official is None and not args.checks:
        parser.error("--official is needed unless --checks")
    today = date.today().isoformat()  # eval_timeline.py completes dates from today; nlpbench is told the same day
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"after": HERE} | ({"before": args.before.resolve()} if args.before else {})
        envs = {side: checkout_env(src, Path(tmp) / f"pycache-{side}") for side, src in sides.items()}
        gold, pred, ids = write_inputs(Path(tmp), args.patients, args.seed)
        tuples = sum(len(t) for path in (gold, pred) for t in json.loads(path.read_text()).values())
        print(f"{args.patients} patients, {tuples} tuples, seed {args.seed}, reference date {today}")
        if args.checks:
            print(
                f"read = in-process CPU seconds, medians of {max(args.repeat, 3)}; load average {load()} at the start\n"
            )
            time_checks(gold, pred, sides, args.repeat, Path(tmp))
            print(f"\nload average {load()} at the end")
            return
        print("scoring = in-process CPU seconds from reading the files to the scores (imports done);")
        print("command = the whole process, CPU / wall seconds (nlpbench writes the full JSON report);")
        if args.before:
            print(f"before: {sides['before']}\nafter:  {sides['after']}")
        print(f"medians of {args.repeat} run(s) each; load average {load()} at the start\n")
        earlier = " nlpbench command before | command speed-up before |" if args.before else ""
        print(
            "| mode | official scoring | nlpbench scoring | speed-up | official command | nlpbench command |"
            f" command speed-up |{earlier} numbers |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if args.before else "") + "---|")
        for mode in args.modes:
            theirs, ours = Measured([], [], []), Measured([], [], [])
            before_commands: list[Timing] = []
            flag = ["--strict"] if mode == "strict" else ["--relaxed_to", mode]
            official_args = ["--gold_path", str(gold), "--pred_path", str(pred), "--all_id_path", str(ids), *flag]
            reports = {side: Path(tmp) / f"report-{side}.json" for side in sides}
            commands = {
                side: [sys.executable, "-m", "nlpbench", "score", "timelines", "--gold", str(gold), "--pred", str(pred),
                       "--all-ids", str(ids), "--mode", mode, "--profile", "chemotimelines2024", "--reference-date",
                       today, "--format", "json", "--output", str(reports[side])]
                for side in sides
            }  # fmt: skip
            for side in sides:  # each checkout's bytecode compiled before the clock
                run(commands[side], envs[side])
            for _ in range(args.repeat):
                _, out, err = run([args.official_python, "-c", OFFICIAL_TIMED, str(args.official), *official_args])
                theirs.scoring.append(timed(err).cpu)
                theirs.numbers.append(official_numbers(out))
                timed_script = [sys.executable, "-c", NLPBENCH_TIMED, str(gold), str(pred), str(ids), mode, today]
                _, out, err = run(timed_script, envs["after"])
                ours.scoring.append(timed(err).cpu)
                ours.numbers.append(nlpbench_numbers(out))
                theirs.command.append(run([args.official_python, str(args.official), *official_args])[0])
                ours.command.append(run(commands["after"], envs["after"])[0])
                if args.before:
                    before_commands.append(run(commands["before"], envs["before"])[0])
            problems = [
                f"run {run + 1}: {problem}"
                for run, (official, mine) in enumerate(zip(theirs.numbers, ours.numbers, strict=True))
                for problem in disagreements(official, mine)
            ]
            if args.before and reports["before"].read_bytes() != reports["after"].read_bytes():
                problems.append("the earlier checkout's report differs")
            failed |= bool(problems)
            count = len(theirs.numbers[0])
            verdict = f"identical ({count} values)" if not problems else "DIFFER: " + "; ".join(problems)
            (their_scoring, their_command), (our_scoring, our_command) = theirs.median(), ours.median()
            shown = ""
            if args.before:
                before_command = sorted(before_commands, key=lambda timing: timing.cpu)[(args.repeat - 1) // 2]
                shown = (
                    f" {before_command.cpu:.2f} / {before_command.wall:.2f} |"
                    f" {their_command.cpu / before_command.cpu:.1f}x |"
                )
            print(
                f"| {mode} | {their_scoring:.2f} | {our_scoring:.2f} | {their_scoring / our_scoring:.1f}x | "
                f"{their_command.cpu:.2f} / {their_command.wall:.2f} | "
                f"{our_command.cpu:.2f} / {our_command.wall:.2f} | {their_command.cpu / our_command.cpu:.1f}x |"
                f"{shown} {verdict} |"
            )
        print(f"\nload average {load()} at the end")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
