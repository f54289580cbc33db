"""Every console example of the documentation (README.md and the pages of ``docs/``) runs and prints
what the page shows.

A console block is a fenced block whose first line starts with ``$ ``. Each
``$ `` line (with its continuation lines: a trailing backslash, an open loop or
quote, a here-document) is a command; the lines up to the next ``$ `` are what
it prints, standard output and standard error together. The commands of one
block run in order in one bash session, in a fresh directory where
``../shared/vectors`` is the public vectors folder, ``$V``, ``$G``, ``$T`` and
``$C`` name the vector folders the pages name, ``gold.json`` and
``pred.json`` are the example pair shipped with nlpbench, a ``$ cat FILE``
before any command of the page names FILE shows a file the example starts
from (the test writes it), and ``nlpbench``/``python`` are the ones under test.
The blocks of one page run in order in one session and directory, as a
reader would follow them.

What may vary between runs is normalised on both sides: ports, timings and
notes per second. In a page, ``…`` stands for any text (an elided part of
a long output). A block that cannot run here (a long-running server, a tool
over HTTP) is preceded by ``<!-- not executed: REASON -->``: it is listed, not
silently skipped, and :data:`NOT_EXECUTED_AT_MOST` keeps the list short. A server a page starts in the
background (``$ COMMAND > LOG 2>&1 &``, then a command that waits until it answers) is stopped when the
page's session ends.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

import pytest

from nlpbench.cli.score import example_file
from tests.conftest import ROOT, vectors_dir

#: The pages whose examples run: the landing page and every page of the site.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NOT_EXECUTED = re.compile(r"<!--\s*not executed:\s*(.+?)\s*-->")
NOT_EXECUTED_AT_MOST = 14  # servers that run until Ctrl+C: the demo, tools, the data node, the queue, the site;
# and the how-to's new task, run by tests/contract/test_add_a_task.py
STEP = "<<<readme-step>>>"
#: What differs from run to run: (pattern, replacement), applied to expected and actual output.
VARYING = [
    (re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:PORT"),
    (re.compile(r"\bin \d+(\.\d+)? ?m?s\b"), "in TIME"),
]


#: A port a page names: a host's (``127.0.0.1:8080``, ``localhost:8080``) or ``--port``'s. Each one a page names is
#: run on a free port of this machine instead (the same one wherever the page names it), so that pages run by two
#: suites at once, or anything else listening here, never meet each other's servers. Not inside a ``--command``
#: tool's own command line: the tool listens in its sandbox's network, on the port the sandbox gives it.
PORT = re.compile(r"(?:(?<=127\.0\.0\.1:)|(?<=localhost:)|(?<=--port ))([1-9]\d{1,4})\b")
SANDBOXED = re.compile(r"""(--command (["']).*?\2)""")


def with_ports(text: str, ports: dict[str, str]) -> str:
    """``text`` with each port of ``ports`` replaced by the free one chosen for it, outside ``--command`` tools."""
    parts = SANDBOXED.split(text)  # [outside, inside, its quote, outside, …]
    outside = (PORT.sub(lambda port: ports.get(port[0], port[0]), part) for part in parts[::3])
    return "".join(part for pair in zip_longest(outside, parts[1::3], fillvalue="") for part in pair)


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    page: str  # the page it is on, relative to the repository
    steps: list[Step]
    skipped: str | None  # the reason given, when not executed


def console_blocks(text: str, page: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if not lines[index].startswith("```"):
            index += 1
            continue
        opening = index
        end = next(i for i in range(opening + 1, len(lines)) if lines[i].startswith("```"))
        body = lines[opening + 1 : end]
        index = end + 1
        if not body or not body[0].startswith("$ "):
            continue
        before = next((lines[i] for i in range(opening - 1, -1, -1) if lines[i].strip()), "")
        skipped = NOT_EXECUTED.search(before)
        blocks.append(Block(opening + 1, page, steps(body), skipped[1] if skipped else None))
    return blocks


def steps(body: list[str]) -> list[Step]:
    found: list[Step] = []
    index = 0
    while index < len(body):
        line = body[index]
        if not line.startswith("$ "):
            found[-1].expected.append(line)
            index += 1
            continue
        command = [line[2:]]
        index += 1
        while not complete(command) and index < len(body):
            command.append(body[index])
            index += 1
        found.append(Step("\n".join(command)))
    return found


def complete(command: list[str]) -> bool:
    """Whether the command's lines so far make a whole command: no trailing backslash, no open here-document,
    and bash can parse them."""
    if command[-1].endswith("\\"):
        return False
    heredoc = re.search(r"<<-?\s*'?(\w+)'?", command[0])
    if heredoc and (len(command) == 1 or command[-1].strip() != heredoc[1]):
        return False
    checked = subprocess.run(["bash", "-n"], input="\n".join(command), capture_output=True, text=True)
    return checked.returncode == 0


def normalised(text: str) -> str:
    for pattern, replacement in VARYING:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def matches(expected: str, actual: str) -> bool:
    """``expected`` equals ``actual`` where ``…`` may stand for any text."""
    pattern = ".*?".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, actual, re.DOTALL) is not None


BLOCKS = [
    block
    for page in PAGES
    for block in console_blocks(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())
]


def test_the_pages_have_console_blocks_and_few_are_not_executed():
    assert len(BLOCKS) >= 15
    skipped = [block for block in BLOCKS if block.skipped]
    assert len(skipped) <= NOT_EXECUTED_AT_MOST, [(b.page, b.line, b.skipped) for b in skipped]


def test_the_parser_splits_commands_and_outputs():
    parsed = steps(
        ["$ a \\", "    --b", "out", "$ for x in 1; do", "    echo $x", "  done", "1", "$ cat > f <<'X'", "y", "X"]
    )
    assert [(s.command, s.expected) for s in parsed] == [
        ("a \\\n    --b", ["out"]),
        ("for x in 1; do\n    echo $x\n  done", ["1"]),
        ("cat > f <<'X'\ny\nX", []),
    ]
    assert matches("a … c", "a b\nb c") and not matches("a … c", "a b")


BY_PAGE: dict[str, list[Block]] = {}
for _block in BLOCKS:
    if not _block.skipped:
        BY_PAGE.setdefault(_block.page, []).append(_block)


def test_a_pages_ports_are_replaced_outside_the_commands_of_sandboxed_tools():
    text = """serve --port 8080 & curl localhost:8080/x 127.0.0.1:80801 --command "serve --port 8080" --port 0"""
    assert with_ports(text, {"8080": "41234"}) == (
        """serve --port 41234 & curl localhost:41234/x 127.0.0.1:80801 --command "serve --port 8080" --port 0"""
    )


def free_ports(named: set[str]) -> dict[str, str]:
    """A free port of 127.0.0.1 for each port ``named``, each a different one."""
    with ExitStack() as held:  # each held until all are chosen, so no two are the same
        sockets = {port: held.enter_context(socket.socket()) for port in sorted(named)}
        for probe in sockets.values():
            probe.bind(("127.0.0.1", 0))
        return {port: str(probe.getsockname()[1]) for port, probe in sockets.items()}


@pytest.mark.parametrize("page", list(BY_PAGE))
def test_console_blocks_of_a_page(page: str, tmp_path: Path):
    vectors = vectors_dir()
    if vectors is None:
        pytest.skip("public vectors not found: set NLPBENCH_VECTORS or put shared/vectors beside the checkout")
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "vectors").symlink_to(vectors)
    for name in ("tests", "pyproject.toml"):  # some pages run tests
        (work / name).symlink_to(ROOT / name)
    for name in ("gold.json", "pred.json"):
        shutil.copy(example_file(name), work / name)
    script = [
        "exec 2>&1",
        "trap 'kill $(jobs -p) 2>/dev/null' EXIT",  # servers a page starts in the background stop with it
        "V=../shared/vectors/omin G=../shared/vectors/omin/OMIn_dataset/gold_standard/processed",
        "T=../shared/vectors/codiesp/eval-repo C=../shared/vectors/codiesp/corpus/test",
    ]
    run_steps = [(block, step) for block in BY_PAGE[page] for step in block.steps]
    named = (PORT.findall(part) for _, step in run_steps for part in SANDBOXED.split(step.command)[::3])
    ports = free_ports({port for found in named for port in found})
    for number, (_, step) in enumerate(run_steps):
        shown = shows_file(step)
        if shown and not any(shown in earlier.command for _, earlier in run_steps[:number]):
            # `cat FILE` before any command names FILE shows a file the example starts from
            text = "\n".join(step.expected) + "\n"
            (work / shown).write_text(with_ports(text, ports), encoding="utf-8")
        script += [with_ports(step.command, ports), f"__status=$?; printf '\\n{STEP}\\n'; (exit $__status)"]
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", PYTHONUNBUFFERED="1")
    env.pop("FORCE_COLOR", None)
    run = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=work, env=env, capture_output=True, text=True, timeout=900
    )
    outputs = run.stdout.split(f"\n{STEP}\n")
    assert len(outputs) == len(run_steps) + 1, run.stdout[-2000:]
    failed = []
    for (block, step), output in zip(run_steps, outputs, strict=False):
        expected = normalised("\n".join(step.expected))
        actual = normalised(output.replace(str(tmp_path), "TMP"))
        if not matches(expected, actual):
            failed.append(f"{block.page}:{block.line}: $ {step.command}\n--- printed ---\n{actual}")
    assert not failed, "\n\n".join(failed)


def shows_file(step: Step) -> str | None:
    match = re.fullmatch(r"cat ([\w.-]+)", step.command)
    return match[1] if match else None
