"""``nlpbench datanode serve`` as a real process, for the tests that talk to it over a socket."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(db_url: str, log_path: Path, *options: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """``nlpbench datanode serve --db DB_URL OPTIONS…`` as a process, once its health check answers:
    yields its API URL and the process; stopped afterwards. Its output goes to ``log_path``."""
    port = free_port()
    command = [sys.executable, "-m", "nlpbench", "datanode", "serve", "--db", db_url, "--port", str(port), *options]
    with open(log_path, "w") as log:
        server = subprocess.Popen([*command, "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/api/v1"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/healthCheck", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert server.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "the data node did not start within 60 s"
                time.sleep(0.2)
            yield url, server
        finally:
            server.terminate()
            server.wait(timeout=20)
