"""Every reader, every ``score`` subcommand, ``convert`` and ``validate`` on damaged and hostile input.

Each command runs in a subprocess under a memory limit (:data:`MEMORY`) and must
end with exit status 0 or 2, no traceback, and on 2 exactly one line on
standard error; every line it prints there (warnings too) is under 2 KB. Inputs are the seeds of :mod:`tests.fuzz.cases`
damaged by Hypothesis (truncated, bytes flipped or inserted, JSON values of
the wrong type, keys repeated, a byte order mark, bytes that are not UTF-8,
lone surrogates, deep nesting, huge lines), plus a fixed set of hostile
inputs for every file of every command: the same classes, UTF-16 and Latin-1
text, a line past the readers' limit, and paths no file can be opened at (a
loop of symbolic links, a directory, a dangling link, a path under a file).
A byte order mark on a file of records changes nothing a command prints.
All the inputs of a command share one subprocess, so that the start-up of
Python is paid once per command; the run is derandomized and small enough for CI.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from nlpbench.files import MAX_LINE
from tests.fuzz.cases import CASES, OUT, Case, write_seeds

MEMORY = 2 * 1024**3
RUNNER = Path(__file__).with_name("runner.py")
#: Damaged inputs per command; ``NLPBENCH_FUZZ_BATCH=200`` searches deeper, locally.
BATCH = int(os.environ.get("NLPBENCH_FUZZ_BATCH", "8"))
BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, Path]:
    return write_seeds(tmp_path_factory.mktemp("seeds"))


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_batch(case: Case, inputs: list[tuple[str, Path]]) -> None:
    """Run ``case`` once per (description, folder of its files) and check each outcome."""
    outcomes = _run([[_filled(word, folder) for word in case.argv] for _, folder in inputs])
    for (description, _), outcome in zip(inputs, outcomes, strict=True):
        where = f"{case.name} on {description}"
        assert outcome["traceback"] is None, f"{where}: {outcome['traceback']}"
        assert outcome["exit"] in (0, 2), f"{where}: exit {outcome['exit']}: {outcome['stderr'][:2000]}"
        longest = max((len(line.encode()) for line in outcome["stderr"].splitlines()), default=0)
        assert longest < 2048, f"{where}: a stderr line of {longest} bytes"
        if outcome["exit"] == 2:
            lines = outcome["stderr"].splitlines()
            assert len(lines) == 1, f"{where}: {len(lines)} lines on stderr: {outcome['stderr'][:2000]}"
            assert len(outcome["stderr"].encode()) < 2048, f"{where}: a {len(outcome['stderr'])}-character error"
            assert lines[0].startswith("nlpbench: error: "), f"{where}: {lines[0][:300]}"


def _run(argvs: list[list[str]]) -> list[dict]:
    """Each command's outcome (exit, stdout, stderr, traceback), all run in one subprocess under :data:`MEMORY`."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, str(RUNNER)],
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_limit_memory,
        env=env,
    )
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(outcomes) == len(argvs), f"the runner died ({done.returncode}): {done.stderr[-2000:]}"
    return outcomes


def _filled(word: str, folder: Path) -> str:
    if word.startswith("{") and word.endswith("}"):
        return str(folder / word[1:-1])
    return word


def prepare(case: Case, seeds: dict[str, Path], folder: Path, target: int, damage) -> str:
    """Copy the case's seeds into ``folder`` and damage seed number ``target`` (a file of it, for a folder)."""
    folder.mkdir(parents=True)
    for name in case.seeds:
        source = seeds[name]
        if source.is_dir():
            shutil.copytree(source, folder / name)
        else:
            shutil.copy(source, folder / name)
    path = _target(case, folder, target)
    description, data = damage(path.read_bytes())
    path.write_bytes(data)
    assert OUT not in case.seeds
    return f"{path.relative_to(folder)} {description}"


# ------------------------------------------------------------------ damage


def _hostile() -> list[tuple[str, object]]:
    """The fixed hostile inputs every command gets: (description, bytes -> bytes)."""
    return [
        ("100,000 nested [", lambda data: b"[" * 100_000),
        ("deep objects inside", lambda data: _inside(data, b'{"a":' * 5000)),
        ("a byte order mark", lambda data: BOM + data),
        ("bytes that are not UTF-8", lambda data: _inside(data, b"\xff\xfe\xc3")),
        ("UTF-16", lambda data: data.decode("utf-8", "replace").encode("utf-16")),
        ("Latin-1", lambda data: _inside(data.decode("utf-8", "replace").encode("latin-1", "replace"), b"caf\xe9")),
        ("a lone surrogate escape", lambda data: data.replace(b'"', b'"\\ud800', 2)),
        ("a 1 MB line", lambda data: _inside(data, b"x" * 1_000_000)),
        ("a line past the limit", lambda data: _inside(data, b"(1)" * (MAX_LINE // 3 + 1))),
        ("empty", lambda data: b""),
        ("cut in half", lambda data: data[: len(data) // 2]),
        ("NUL bytes", lambda data: data.replace(b"\n", b"\x00\n", 1)),
    ]


def _replaced() -> list[tuple[str, object]]:
    """The fixed paths no file can be opened at, put where a command reads a file: (description, path -> None)."""

    def under_a_file(path: Path) -> None:
        (path.parent / "a-file").write_text("")
        path.symlink_to("a-file/inside")

    return [
        ("a loop of symbolic links", lambda path: path.symlink_to(path.name)),
        ("a directory", lambda path: path.mkdir()),
        ("a dangling symbolic link", lambda path: path.symlink_to("nowhere")),
        ("a path under a file", under_a_file),
    ]


def prepare_replaced(case: Case, seeds: dict[str, Path], folder: Path, target: int, make) -> str:
    """Copy the case's seeds into ``folder`` and put seed number ``target`` (a file of it, for a folder) out of
    reach of ``open``; the damage's description."""
    prepare(case, seeds, folder, target, lambda data: ("", data))
    path = _target(case, folder, target)
    path.unlink()
    make(path)
    return str(path.relative_to(folder))


def _target(case: Case, folder: Path, target: int) -> Path:
    """The file of seed number ``target`` that is damaged: the seed, or a file of it for a folder."""
    path = folder / case.seeds[target % len(case.seeds)]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file())
        path = files[target % len(files)]
    return path


def _inside(data: bytes, what: bytes) -> bytes:
    middle = data.find(b"\n", len(data) // 3)
    middle = len(data) // 2 if middle < 0 else middle
    return data[:middle] + what + data[middle:]


WRONG_VALUES = [None, True, -1, 10**30, 1.5, "", "x" * 300, [], {}, [[]], {"a": None}, "\ud800"]


@st.composite
def json_damage(draw, data: bytes) -> tuple[str, bytes]:
    """Replace one value of a JSON (or JSON Lines) seed by a value of another type, or repeat a key."""
    try:
        text = data.decode("utf-8")
        lines = text.splitlines()
        values = [json.loads(line) for line in lines] if len(lines) > 1 and text.lstrip()[:1] == "{" else None
        value = json.loads(text) if values is None else values
    except ValueError:
        return "(not JSON: unchanged)", data
    paths = list(_paths(value))
    path = draw(st.sampled_from(paths))
    wrong = draw(st.sampled_from(WRONG_VALUES))
    if draw(st.booleans()) and path and isinstance(path[-1], str):
        repeated = json.dumps({path[-1]: wrong})[1:-1]
        damaged = _set(value, path, "__REPEAT__")
        dumped = json.dumps(damaged).replace('"__REPEAT__"', json.dumps(_get(value, path)) + ", " + repeated, 1)
        return f"key {path} repeated", _joined(dumped, values is not None, damaged)
    damaged = _set(value, path, wrong)
    return f"{path} := {wrong!r:.40}", _joined(json.dumps(damaged), values is not None, damaged)


def _joined(dumped: str, lines: bool, value) -> bytes:
    if lines:
        return ("\n".join(json.dumps(v) for v in value) + "\n").encode("utf-8", "surrogatepass")
    return dumped.encode("utf-8", "surrogatepass")


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _get(value, path):
    for step in path:
        value = value[step]
    return value


def _set(value, path, new):
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _set(value[path[0]], path[1:], new)
    return copy


@st.composite
def damage(draw, data: bytes) -> tuple[str, bytes]:
    """One to three kinds of damage, one after another."""
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cut", "flip", "insert", "delete", "json", "deep", "bom", "line", "text"]))
        size = max(len(data), 1)
        at = draw(st.integers(0, size - 1))
        if kind == "cut":
            data = data[:at]
        elif kind == "flip":
            data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
        elif kind == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 40)) :]
        elif kind == "json":
            description, data = draw(json_damage(data))
            steps.append(description)
            continue
        elif kind == "deep":
            opener = draw(st.sampled_from([b"[", b'{"a":', b"(", b"<a>"]))
            data = data[:at] + opener * draw(st.integers(100, 20_000)) + data[at:]
        elif kind == "bom":
            data = BOM + data
        elif kind == "line":
            data = data[:at] + b"y" * draw(st.integers(10_000, 500_000)) + data[at:]
        else:
            piece = draw(st.text(st.characters(codec="utf-8"), min_size=1, max_size=6)).encode()
            data = data[:at] + piece + data[at:]
        steps.append(f"{kind} at {at}")
    return ", ".join(steps), data


# ------------------------------------------------------------------ tests


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_damaged_and_hostile_inputs(case, seeds, tmp_path_factory):
    """The fixed hostile inputs on each file the command reads, and :data:`BATCH` damaged by Hypothesis: one run."""

    @settings(
        max_examples=1,
        deadline=None,
        derandomize=True,
        database=None,
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def check(data):
        root = tmp_path_factory.mktemp(case.name)
        inputs = []
        for number, (description, change) in enumerate(_hostile()):
            for target in range(len(case.seeds)):
                folder = root / f"hostile-{number}-{target}"
                damaged = lambda raw, change=change, description=description: (description, change(raw))  # noqa: E731
                inputs.append((prepare(case, seeds, folder, target, damaged), folder))
        for number, (description, make) in enumerate(_replaced()):
            for target in range(len(case.seeds)):
                folder = root / f"replaced-{number}-{target}"
                inputs.append((f"{prepare_replaced(case, seeds, folder, target, make)} as {description}", folder))
        for number in range(BATCH):
            target = data.draw(st.integers(0, len(case.seeds) - 1))
            folder = root / str(number)
            inputs.append((prepare(case, seeds, folder, target, lambda raw: data.draw(damage(raw))), folder))
        run_batch(case, inputs)

    check()


def _outcome(outcome: dict, folder: Path) -> tuple:
    """What a run printed, with its folder's name taken out."""
    return outcome["exit"], outcome["stdout"].replace(str(folder), "F"), outcome["stderr"].replace(str(folder), "F")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_byte_order_mark_changes_nothing(case, seeds, tmp_path):
    """Each file of records with a UTF-8 byte order mark: the same exit status and the same output. (A note's
    own text, brat's .txt, keeps the mark: its offsets count it.)"""
    runs = []
    for target in range(len(case.seeds)):
        folder = tmp_path / str(target)
        prepare(case, seeds, folder, target, lambda data: ("", data))
        path = _target(case, folder, target)
        if path.suffix == ".txt" and path.with_suffix(".ann").exists():
            continue
        marked = tmp_path / f"{target}-bom"
        shutil.copytree(folder, marked)
        (marked / path.relative_to(folder)).write_bytes(BOM + path.read_bytes())
        runs += [folder, marked]
    assert runs, case.name
    outcomes = _run([[_filled(word, folder) for word in case.argv] for folder in runs])
    for number in range(0, len(runs), 2):
        plain, marked = runs[number : number + 2]
        clean, with_bom = outcomes[number : number + 2]
        assert clean["exit"] == 0, f"{case.name}: {clean['stderr']}"
        assert _outcome(with_bom, marked) == _outcome(clean, plain), f"{case.name}: {marked.name}"
