"""Run NLP Sandbox tools on this machine: one ``nlpbench serve`` process per tool, on a free localhost port.

:func:`local_tools` starts the processes together, waits until each answers
``GET /api/v1/healthCheck``, yields their base URLs and stops them on the way
out, whatever happened. A tool that dies or stays silent is an error that
quotes the end of its log.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from nlpbench.runner.client import ToolError


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


@contextmanager
def local_tools(
    names: Sequence[str],
    log_dir: Path,
    *,
    host: str = "127.0.0.1",
    startup_timeout: float = 120.0,
    arguments: Mapping[str, Sequence[str]] | None = None,
) -> Iterator[dict[str, str]]:
    """``{name: base URL}`` of the annotators ``names``, each served by its own process while the block runs;
    ``arguments`` gives, by name, what ``nlpbench serve`` is told instead of ``--annotator NAME`` (an LLM
    endpoint's ``--llm URL --model NAME …``)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        started: dict[str, tuple[str, subprocess.Popen, Path]] = {}
        for name in names:
            port, log = free_port(host), log_dir / f"{name}.log"
            served = (arguments or {}).get(name, ["--annotator", name])
            command = [sys.executable, "-m", "nlpbench", "serve", *served, "--host", host]
            handle = stack.enter_context(open(log, "wb"))
            process = subprocess.Popen([*command, "--port", str(port)], stdout=handle, stderr=subprocess.STDOUT)
            stack.callback(_stop, process)
            started[name] = (f"http://{host}:{port}", process, log)
        deadline = time.monotonic() + startup_timeout
        for name, (url, process, log) in started.items():
            _wait_healthy(name, url, process, log, deadline)
        yield {name: url for name, (url, _, _) in started.items()}


def _wait_healthy(name: str, url: str, process: subprocess.Popen, log: Path, deadline: float) -> None:
    while True:
        if process.poll() is not None:
            raise ToolError(f"tool {name} stopped with status {process.returncode}: {_tail(log)}")
        try:
            if httpx.get(f"{url}/api/v1/healthCheck", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:  # not listening yet: ask again until the deadline
            pass
        if time.monotonic() > deadline:
            raise ToolError(f"tool {name} did not answer its health check at {url}: {_tail(log)}")
        time.sleep(0.1)


def _tail(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return " | ".join(lines[-3:]) or "(no output)"


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
