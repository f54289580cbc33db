"""``nlpbench datanode serve`` as a process: keys that take effect while it runs, its address, slow clients."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from nlpbench.store import open_store
from nlpbench.store import repository as repo
from tests.datanode.server import served


def _key(cli, db_url: str, *options: str) -> str:
    made = cli("datanode", "keys", "create", *options, "--db", db_url)
    assert made.exit_code == 0, made.stderr
    return made.stdout.strip()


def _datasets(url: str, key: str | None = None) -> int:
    headers = {"X-API-Key": key} if key else {}
    return httpx.get(f"{url}/datasets", headers=headers, timeout=30).status_code


def test_a_key_made_or_revoked_while_two_workers_run_counts_at_once(cli, db_url, tmp_path):
    with served(db_url, tmp_path / "serve.log", "--workers", "2") as (url, _):
        assert _datasets(url) == 200  # no key yet, on localhost: open
        key = _key(cli, db_url)
        for _ in range(6):  # a connection each: both workers answer
            assert _datasets(url) == 401 and _datasets(url, key) == 200
        cli("datanode", "keys", "revoke", key.split("_")[1], "--db", db_url)
        for _ in range(6):
            assert _datasets(url, key) == 401 and _datasets(url) == 401


#: Run inside a network namespace of its own: a data node listening on every interface there, asked through
#: that namespace's loopback (its one interface), so that nothing beyond this test can reach it.
BEYOND_LOCALHOST = """\
import json, subprocess, sys
from pathlib import Path
from tests.datanode.server import served
from tests.datanode.test_serve import _datasets
import httpx

db_url, log = sys.argv[1], Path(sys.argv[2])
seen = {}
with served(db_url, log, "--host", "0.0.0.0") as (url, _):
    seen["health"] = httpx.get(f"{url}/healthCheck", timeout=30).status_code
    seen["no key yet"] = _datasets(url)
    made = subprocess.run([sys.executable, "-m", "nlpbench", "datanode", "keys", "create", "--db", db_url],
                          capture_output=True, text=True, check=True)
    key = made.stdout.strip()
    seen["key"], seen["no key"] = _datasets(url, key), _datasets(url)
print(json.dumps(seen))
"""


def test_beyond_localhost_keys_are_required_before_one_exists(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'store.db'}"
    driver = tmp_path / "beyond_localhost.py"
    driver.write_text(BEYOND_LOCALHOST)
    root = Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    command = ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--chdir", str(root)]
    done = subprocess.run(
        [*command, sys.executable, str(driver), db_url, str(tmp_path / "serve.log")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"health": 200, "no key yet": 401, "key": 200, "no key": 401}
    assert "API keys required; none exists yet" in (tmp_path / "serve.log").read_text()


def test_links_start_with_the_base_url(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(db_url)
    with store.session() as session:
        for index in range(11):
            repo.create_dataset(session, f"d-{index:02d}")
    store.close()
    with served(db_url, tmp_path / "serve.log", "--base-url", "https://node.example.org/") as (url, _):
        page = httpx.get(f"{url}/datasets", headers={"Host": "attacker.example"}, timeout=30).json()
        assert page["links"]["next"] == "https://node.example.org/api/v1/datasets?offset=10&limit=10"
    with served(db_url, tmp_path / "serve.log") as (url, _):  # by default: where it listens
        page = httpx.get(f"{url}/datasets", headers={"Host": "attacker.example"}, timeout=30).json()
        assert page["links"]["next"] == f"{url}/datasets?offset=10&limit=10"


@pytest.mark.parametrize(
    ("base_url", "said"),
    [
        ("node.example.org", "not an http or https URL of a host"),
        ("ftp://node.example.org", "not an http or https URL of a host"),
        (
            "https://user:pw@node.example.org",
            "it starts every links.next, so it holds no credentials, query or fragment",
        ),
        ("https://node.example.org/?x=1", "it starts every links.next, so it holds no credentials, query or fragment"),
        ("https://node.example.org:port", "not an http or https URL of a host"),
    ],
)
def test_a_bad_base_url_is_one_line(cli, tmp_path, base_url, said):
    result = cli("datanode", "serve", "--base-url", base_url, "--db", f"sqlite:///{tmp_path / 'store.db'}")
    assert result.exit_code == 2 and result.stderr == f"nlpbench: error: --base-url: {said}\n"


def test_a_busy_port_is_one_line_before_any_banner(cli, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = cli("datanode", "serve", "--port", port, "--db", f"sqlite:///{tmp_path / 'store.db'}")
    assert result.exit_code == 2
    assert result.stderr == f"nlpbench: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def _closed_by_the_server(connection: socket.socket, seconds: float = 60) -> bool:
    """Whether the server closes ``connection`` within ``seconds`` while the client sends nothing more."""
    connection.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if connection.recv(4096) == b"":
                return True
    except (TimeoutError, ConnectionResetError):
        return False
    return False


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # connects and says nothing
        b"GET /api/v1/healthCheck HTTP/1.1\r\nHost: node\r\n",  # headers that never end (slowloris)
        b"POST /api/v1/datasets?datasetId=d-one HTTP/1.1\r\nHost: node\r\nContent-Length: 100\r\n\r\n{",  # a body
    ],
)
def test_a_client_that_does_not_send_its_request_in_time_is_disconnected(tmp_path, sent):
    db_url = f"sqlite:///{tmp_path / 'store.db'}"
    options = ("--header-timeout", "1", "--body-timeout", "1")
    with served(db_url, tmp_path / "serve.log", *options) as (url, _):
        address = urlsplit(url)
        with socket.create_connection((address.hostname, address.port), timeout=30) as slow:
            slow.sendall(sent)
            assert _closed_by_the_server(slow)
        assert _datasets(url) == 200  # the server goes on
        with socket.create_connection((address.hostname, address.port), timeout=30) as kept:  # kept alive, then slow
            kept.sendall(b"GET /api/v1/healthCheck HTTP/1.1\r\nHost: node\r\n\r\n")
            assert kept.recv(4096).startswith(b"HTTP/1.1 200")
            kept.sendall(b"GET /api/v1/healthCheck HTTP/1.1\r\n")
            assert _closed_by_the_server(kept)
