"""What the sandbox costs a tool: the same ``--command`` tool annotating N notes unsandboxed and sandboxed, in one run.

    python benchmarks/sandbox_overhead_bench.py [--notes 2000] [--repeat 3] [--sandbox bwrap --sandbox runsc]

The tool is nlpbench's baseline date annotator (``python -m nlpbench serve -a date``). Each round runs, in an
order that rotates from round to round:

1. **unsandboxed**: the tool as a plain process of this machine on a free port, reached over TCP;
2. **each sandbox asked for** (bubblewrap by default; gVisor with ``--sandbox runsc``): the tool started by
   :func:`nlpbench.runner.sandbox.start_tool` as a worker starts a team's ``--command`` tool (its runtime
   read-only, no network, uid 65534 under root, a cgroup, seccomp), reached through the runner's Unix socket
   and the relay.

The time is that of :class:`~nlpbench.runner.AnnotationRun` over the N notes (8 requests at once, every
answer checked), from the first request to the last answer: the tool's start is timed apart (the sandbox's
own start-up is paid once per submission, not per note). Beside the wall time, the CPU time spent on both
sides (this process's, and the tool's: its processes', or the sandbox's cgroup with the relay in it), which
a loaded machine disturbs less. Medians over ``--repeat`` rounds; the machine, its load and the command are
printed with the table.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import psutil

from nlpbench.model import Document
from nlpbench.runner.isolation import Sandbox
from nlpbench.runner.run import AnnotationRun
from nlpbench.runner.sandbox import Limits, start_tool
from nlpbench.runner.services import free_port

TEXT = "Seen on {day:02d}/11/2025 by Dr. Prescott; follow-up on March {day}, 2026. Patient {n} is stable."
COMMAND = f"{sys.executable} -m nlpbench serve -a date --port 8080 --log-level warning"


def notes(count: int) -> list[Document]:
    return [Document(f"n-{n:06d}", TEXT.format(day=n % 28 + 1, n=n), {"patientId": "p-1"}) for n in range(count)]


@contextmanager
def unsandboxed(folder: Path):
    """The tool as a plain process on a free port; yields (url, transport maker)."""
    port = free_port()
    command = [sys.executable, "-m", "nlpbench", "serve", "-a", "date", "--port", str(port), "--log-level", "warning"]
    with open(folder / "plain.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/api/v1/healthCheck", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url, lambda: None
    finally:
        used = psutil.Process(process.pid).cpu_times()
        TOOL_CPU.append(used.user + used.system)
        process.terminate()
        process.wait()


@contextmanager
def sandboxed(folder: Path, backend: str):
    limits = Limits(memory_bytes=2 * 2**30)
    with start_tool(COMMAND, limits, folder / f"{backend}.log", sandbox=Sandbox(backend=backend)) as tool:
        yield tool.url, tool.transport
    TOOL_CPU.append(tool.outcome.cpu_seconds)


#: The CPU seconds of the tool of each run, appended as each ends.
TOOL_CPU: list[float] = []


def timed(way, folder: Path, documents: list[Document]) -> tuple[float, float, float]:
    """(seconds to start the tool, seconds to annotate every note, CPU seconds of client and tool in all)."""
    started = time.perf_counter()
    with way(folder) as (url, transport):
        ready, client = time.perf_counter(), time.process_time()
        run = AnnotationRun(url, concurrency=8, transport=transport())
        annotated = run.run(documents)
        done, client = time.perf_counter(), time.process_time() - client
    assert len(annotated) == len(documents)
    return ready - started, done - ready, client + TOOL_CPU[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sandbox", action="append", choices=["bwrap", "runsc"], default=None)
    options = parser.parse_args()
    backends = options.sandbox or ["bwrap"]
    documents = notes(options.notes)
    ways = {"unsandboxed": unsandboxed} | {b: (lambda folder, b=b: sandboxed(folder, b)) for b in backends}
    names = list(ways)
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.2f} at the start")  # fmt: skip
    print(f"# python benchmarks/sandbox_overhead_bench.py --notes {options.notes} --repeat {options.repeat} "
          + " ".join(f"--sandbox {b}" for b in backends))  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for round_number in range(options.repeat):
            order = names[round_number % len(names) :] + names[: round_number % len(names)]
            for name in order:
                results[name].append(timed(ways[name], Path(folder), documents))
                start, annotate, cpu = results[name][-1]
                print(f"round {round_number + 1}: {name:<12} start {start:6.2f} s, annotate {annotate:6.2f} s, "
                      f"CPU {cpu:6.2f} s")  # fmt: skip
    base = statistics.median(annotate for _, annotate, _ in results["unsandboxed"])
    base_cpu = statistics.median(cpu for _, _, cpu in results["unsandboxed"])
    print(f"\n| way | tool start | annotation of {options.notes} notes | vs unsandboxed | CPU (client + tool) "
          "| vs unsandboxed |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        start, annotate, cpu = (statistics.median(row[i] for row in results[name]) for i in range(3))
        print(f"| {name} | {start:.2f} s | {annotate:.2f} s | {100 * (annotate / base - 1):+.1f} % | {cpu:.2f} s "
              f"| {100 * (cpu / base_cpu - 1):+.1f} % |")  # fmt: skip
    print(f"# load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
