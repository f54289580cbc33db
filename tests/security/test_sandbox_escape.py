"""A team with nothing but a ``--command`` submission attacks the worker's machine; every way out is blocked.

The team's tool (:mod:`tests.security.attacker`) tries to read the store,
``/etc/shadow`` and the host's folders; to write into its runtime (a ``.pth``
file the next nlpbench process would run), into ``/usr`` and ``/``; to reach
PostgreSQL and Redis through their sockets and the host's loopback, and the
outside; to see the host's processes, Unix sockets and the worker's
environment (which holds a canary secret); to hold capabilities, make
namespaces, mount, unmount ``/proc``, trace, use the kernel keyring, reach
the cgroup hierarchy, kernel messages or a disk; to fill the disk; and to
leave a daemon behind that ignores ``SIGTERM``. It runs under a worker as
root and as an unprivileged user, on SQLite and on PostgreSQL, in
bubblewrap and in gVisor. The test reads what the tool said it got (from
the tool log organisers see), and checks the host afterwards: no planted
file, no process left, no sandbox folder left, no key added to the store.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import psutil
import pytest

from nlpbench.runner import sandbox
from nlpbench.runner.isolation import Sandbox, SandboxUnavailable, choose
from nlpbench.store import open_store
from nlpbench.store.submissions import PlatformKey
from tests.platform.test_worker import run_worker, shown, submit, tool_folder
from tests.toolkit import unique_marker

ATTACKER = Path(__file__).with_name("attacker.py")
CANARY = "nlpbench-canary-secret-7c1d"


def attacking_command(folder: Path, store: str, marker: str) -> str:
    shutil.copy(ATTACKER, folder / "attacker.py")
    return f"{sys.executable} {folder / 'attacker.py'} {store} {marker}"


def attacks(logs: dict) -> dict[str, str]:
    """What the tool said each try got, from its output as the worker kept it."""
    lines = [line for line in logs["tool"]["output"]["content"].splitlines() if line.startswith("ATTACK ")]
    assert lines, logs["tool"]["output"]["content"][-2000:]
    return json.loads(lines[-1].removeprefix("ATTACK "))


#: What gVisor allows because its kernel is its own: tracing the tool's own processes and making namespaces,
#: all inside the Sentry (the host kernel sees neither).
GVISOR_OWN = frozenset({"ptrace", "a user namespace", "a mount namespace"})


def assert_all_blocked(tried: dict[str, str], allowed: frozenset[str] = frozenset()) -> None:
    assert len(tried) >= 28
    got_through = {name: result for name, result in tried.items() if not result.startswith("blocked")}
    assert not {name: result for name, result in got_through.items() if name not in allowed}


def assert_nothing_left(marker: str) -> None:
    """No process of the tool on the host, no planted file in any runtime, no sandbox folder of this process."""
    assert not [p for p in psutil.process_iter(["cmdline"]) if marker in (p.info["cmdline"] or [])]
    for path in sys.path:
        assert not (Path(path) / "zz-evil.pth").exists()
    assert not Path("/usr/evil").exists() and not Path("/tmp/owned").exists()
    assert not [found for place in sandbox.places() for found in place.glob(f"{sandbox.PREFIX}{sandbox.owner()}-*")]


def platform_keys(db_url: str) -> int:
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            return session.query(PlatformKey).count()
    finally:
        opened.close()


@pytest.mark.parametrize("backend", ["bwrap", "runsc"])
def test_a_root_worker_keeps_every_escape_of_a_team_tool_blocked(nb, dataset, db_url, tmp_path, monkeypatch, backend):
    try:
        choose(Sandbox(backend=backend))
    except SandboxUnavailable as error:
        pytest.skip(str(error))
    monkeypatch.setenv("NLPBENCH_CANARY", CANARY)
    store = db_url.removeprefix("sqlite:///") if db_url.startswith("sqlite") else "/var/lib/postgresql"
    marker = unique_marker("attack")
    folder = tool_folder(tmp_path)
    keys = platform_keys(db_url)
    submission = submit(
        nb, "--task", "date", "--dataset", "notes", "--command", attacking_command(folder, store, marker)
    )
    run_worker(nb, "--runtime", str(folder), "--sandbox", backend, "--tool-disk", "16")
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    logs = json.loads(nb("submissions", "logs", submission, "--format", "json").stdout)
    assert_all_blocked(attacks(logs), GVISOR_OWN if backend == "runsc" else frozenset())
    assert CANARY not in json.dumps(logs)
    assert_nothing_left(marker)
    assert platform_keys(db_url) == keys


def test_an_unprivileged_worker_keeps_every_escape_of_a_team_tool_blocked(cli, tmp_path):
    from tests.runner.unprivileged import Unprivileged

    nobody = Unprivileged.ready(tmp_path / "nobody")
    db = f"sqlite:///{nobody.base / 'platform.db'}"

    def nb(*args):
        return cli(*args, "--db", db)

    assert nb("synth", "--notes", 4, "--seed", 7, "--into-store", "notes", "--subset", 2).exit_code == 0
    folder = nobody.base / "tool"
    folder.mkdir(mode=0o755)
    marker = unique_marker("attack")
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command",
                        attacking_command(folder, str(nobody.base / "platform.db"), marker))  # fmt: skip
    nobody.own(*nobody.base.glob("platform.db*"))
    worker = ("worker", "--until-idle", "--poll", "0.05", "--lease", "10", "--runtime", folder, "--tool-disk", "16")
    worked = nobody.nlpbench(*worker, "--db", db)
    assert worked.returncode == 0, worked.stderr
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    tried = attacks(json.loads(nb("submissions", "logs", submission, "--format", "json").stdout))
    assert_all_blocked(tried)
    assert_nothing_left(marker)
