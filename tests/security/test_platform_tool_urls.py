"""A team with its key tries to make the worker send notes to its own server, reach the worker's networks, follow
redirects there, or tell open ports from closed ones; on SQLite and PostgreSQL.

Tool URLs are the organisers': on a private dataset a team's URL is refused (403) unless the queue
allow-lists its host; on a public one it must lead to public addresses only, checked at submission and
again at every connection (a name that rebinds afterwards reaches nothing). Whatever a team's URL met on
the network, the team reads one line.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from nlpbench.api.tool import create_app
from nlpbench.platform.network import REFUSED
from nlpbench.platform.validation import UNREACHABLE
from tests.platform.arena import host_of, problem
from tests.platform.conftest import arena, nb, served_tool, tool  # noqa: F401
from tests.store.backends import db_url  # noqa: F401
from tests.toolkit import RegexPhi, served

PRIVATE_URL = "on a private dataset a tool URL is the organisers' to give"
#: Every way of naming the worker's own networks, and a name that does not resolve (told the same).
INTERNAL = (
    "http://127.0.0.1:8080",
    "http://127.1:8080",
    "http://2130706433/",
    "http://0.0.0.0/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://[::1]:8080/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://[fec0::1]/",
    "http://[ff02::1]/",
    "http://[2002:7f00:1::]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://localhost:8080/",
    "http://LocalHost.:8080/",
    "http://user:secret@localhost/",
    "http://no-such-host.invalid/",
)


class Counting:
    """An ASGI app answering every request 200, counting them: a service the worker must never reach."""

    def __init__(self):
        self.requests = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        self.requests += 1
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"metadata: secret"})


class Redirecting:
    """A real tool whose ``path`` answers ``307`` to ``target`` (another origin)."""

    def __init__(self, path: str, target: str):
        self.app, self.path, self.target = create_app(RegexPhi()), path, target

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"] == self.path:
            headers = [(b"location", self.target.encode()), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 307, "headers": headers})
            return await send({"type": "http.response.body", "body": b""})
        return await self.app(scope, receive, send)


def test_a_team_url_on_a_private_dataset_is_refused_and_an_organisers_is_not(arena, tool):  # noqa: F811
    for url in (tool.url, "https://1.1.1.1/", "http://tool.example.org:8080/api/v1"):
        problem(arena.submit(toolUrl=url), 403, PRIVATE_URL)
    assert arena.submitted("organiser", team="team-a", toolUrl=tool.url)
    by_cli = arena.nb("submit", "--team", "team-a", "--task", "date", "--dataset", "notes", "--tool", tool.url)
    assert by_cli.exit_code == 0, by_cli.stderr  # the command line is the organisers'
    arena.work()
    assert tool.seen and all(s["status"] == "SCORED" for s in arena.call("GET", "/submissions").json()["submissions"])


def test_a_team_url_into_the_workers_networks_is_refused_one_way_whatever_it_names(arena):  # noqa: F811
    said = {problem(arena.submit(dataset="open", toolUrl=url), 403) for url in INTERNAL}
    assert said == {REFUSED}  # internal or not resolving: the same line, nothing learned of the network
    assert arena.call("GET", "/submissions").json()["submissions"] == []
    assert arena.submitted(dataset="open", toolUrl="http://1.1.1.1:9/")  # a public address is a team's to give


def test_a_name_that_rebinds_to_the_worker_after_submission_reaches_nothing(arena, monkeypatch):  # noqa: F811
    sink = Counting()
    real = socket.getaddrinfo
    asked: list[str] = []

    def rebinding(host, port, *args, **kwargs):  # public when submitted, the worker's loopback afterwards
        if host != "rebind.example":
            return real(host, port, *args, **kwargs)
        asked.append(host)
        return real("1.1.1.1" if len(asked) == 1 else "127.0.0.1", port, *args, **kwargs)

    with served(sink) as url:
        monkeypatch.setattr(socket, "getaddrinfo", rebinding)
        port = host_of(url).rsplit(":", 1)[1]
        submission = arena.submitted(dataset="open", toolUrl=f"http://rebind.example:{port}")
        arena.work()
    data = arena.shown(submission)
    assert (data["status"], data["reason"]) == ("INVALID", UNREACHABLE)
    assert len(asked) >= 2 and sink.requests == 0
    assert REFUSED in arena.logs(submission)["reason"]  # the organisers read why


def test_the_allow_list_lets_a_team_url_through_and_is_emptied(arena, tool):  # noqa: F811
    said = arena.queue("--tool-host", host_of(tool.url), "--tool-host", "Tools.Example.org")
    assert f"team tool hosts allowed: {host_of(tool.url)}, tools.example.org" in said
    submission = arena.submitted(toolUrl=tool.url)  # a private dataset: the organisers vouch for that host
    arena.work()
    assert arena.shown(submission)["status"] == "SCORED"
    assert "allowed: none" in arena.queue("--no-tool-hosts")
    problem(arena.submit(toolUrl=tool.url), 403, PRIVATE_URL)
    problem(arena.submit(dataset="open", toolUrl=tool.url), 403, REFUSED)
    for bad in ("http://x/y", "a b", "host:port"):
        refused = arena.nb("submissions", "queue", "default", "--tool-host", bad)
        assert refused.exit_code == 2 and "is not HOST or HOST:PORT" in refused.stderr, refused.stderr


@contextmanager
def tcp(behaviour: str) -> Iterator[int]:
    """A port of 127.0.0.1 that is ``closed``, ``hangs up`` at once, or stays ``silent``."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    if behaviour == "closed":
        server.close()
        yield port
        return
    server.listen()
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            if behaviour == "hangs up":
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                connection.close()  # a reset
            else:
                held.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        server.close()
        for connection in held:
            connection.close()


def test_a_port_scan_through_the_worker_reads_one_line_for_every_port(arena):  # noqa: F811
    """Closed, reset, silent, or an HTTP service of its own: a team told them apart by the reason before."""
    arena.queue("--tool-host", "127.0.0.1")  # even a host the organisers vouch for is not to be scanned
    with (
        tcp("closed") as closed,
        tcp("hangs up") as reset,
        tcp("silent") as silent,
        served(Counting()) as http_service,
        served(Redirecting("/", "/elsewhere")) as other_service,
    ):
        targets = [f"http://127.0.0.1:{port}" for port in (closed, reset, silent)] + [http_service, other_service]
        submissions = [arena.submitted(dataset="open", toolUrl=url) for url in targets]
        arena.work()
    reasons = {arena.shown(s)["reason"] for s in submissions}
    assert reasons == {UNREACHABLE}
    assert {arena.shown(s)["status"] for s in submissions} == {"INVALID"}
    details = [arena.logs(s)["reason"] for s in submissions]
    assert len(set(details)) == len(details), details  # the organisers read what happened to each


@pytest.mark.parametrize("path", ["/api/v1/ui", "/api/v1/healthCheck", "/api/v1/textDateAnnotations"])
def test_a_redirect_to_another_origin_is_never_followed(arena, path):  # noqa: F811
    sink = Counting()
    with served(sink) as metadata_service, served(Redirecting(path, f"{metadata_service}/latest/meta-data/")) as url:
        arena.queue("--tool-host", host_of(url))
        submission = arena.submitted(dataset="open", toolUrl=url)
        arena.work()
    data = arena.shown(submission)
    assert data["status"] == "INVALID" and "meta-data" not in json.dumps(data)
    assert sink.requests == 0
