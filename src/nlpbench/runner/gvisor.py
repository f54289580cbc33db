"""gVisor (Debian ``runsc``) as a tool's sandbox: the stronger option, behind ``--sandbox runsc``.

gVisor runs the tool on a kernel of its own in user space (the Sentry), so a
tool's system calls never reach the host kernel directly. :class:`Gvisor`
writes an OCI bundle into the runner's private folder and starts it with
``runsc --network=none --ignore-cgroups run``: the same filesystem as
bubblewrap gives (an empty read-only root of ours, the runtime and the tool's
own directory bound read-only, size-limited ``tmpfs`` at ``/tmp`` and at the
tool's home, ``/etc`` files of ours), the tool as :attr:`Sandbox.uid` with no
capability and no new privileges, no network at all (gVisor's own loopback
only), and process and core-file limits as rlimits gVisor enforces. gVisor
passes the tool nothing but its standard streams, so the relay runs in its
``stdio`` mode (:mod:`nlpbench.runner.mux`). The runner's cgroup holds the
Sentry and the Gofer (``--ignore-cgroups``: runsc makes none of its own), so
the memory limit is the kernel's as with bubblewrap; the tool's own processes
live inside the Sentry and are counted by gVisor's ``RLIMIT_NPROC``.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path

from nlpbench.runner.isolation import HOME, Backend, Fds, Launch, Sandbox, Setup, etc_files, failure, tool_environment


class Gvisor(Backend):
    """gVisor: the tool on gVisor's kernel, reached over its standard streams."""

    stdio = True
    visible = False  # the tool's processes live in the Sentry: the host sees gVisor's own

    def command(self, setup: Setup, fds: Fds) -> Launch:
        root = os.geteuid() == 0
        uid, gid = (self.settings.uid, self.settings.gid) if root else (0, 0)
        bundle = setup.workspace / "bundle"
        (bundle / "rootfs").mkdir(parents=True)
        mounts = [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            *(_tmpfs(place, self.settings.disk_bytes) for place in ("/tmp", HOME)),
        ]
        for path in self.settings.paths():
            if path.is_symlink() and len(path.parts) == 2:  # /bin -> usr/bin: a link in our root
                (bundle / "rootfs" / path.name).symlink_to(os.readlink(path))
            else:
                mounts.append(_bind(path, path))
        etc = bundle / "etc"
        etc.mkdir()
        for inside, content in etc_files(uid, gid).items():
            (etc / Path(inside).name).write_bytes(content)
            mounts.append(_bind(etc / Path(inside).name, inside))
        mounts += [_bind(outside, inside) for inside, outside in setup.files.items()]
        if setup.tool_dir is not None:
            mounts.append(_bind(setup.tool_dir, setup.tool_dir))
        spec = {
            "ociVersion": "1.0.2",
            "hostname": "tool",
            "root": {"path": "rootfs", "readonly": True},
            "mounts": mounts,
            "process": {
                "terminal": False,
                "user": {"uid": uid, "gid": gid, "additionalGids": []},
                "args": setup.relay,
                "env": [f"{name}={value}" for name, value in setup.environment.items()],
                "cwd": str(setup.tool_dir or HOME),
                "capabilities": {kind: [] for kind in ("bounding", "effective", "inheritable", "permitted", "ambient")},
                "noNewPrivileges": True,
                "rlimits": [
                    {"type": "RLIMIT_NPROC", "hard": setup.tasks, "soft": setup.tasks},
                    {"type": "RLIMIT_CORE", "hard": 0, "soft": 0},
                ],
            },
            "linux": {"namespaces": [{"type": kind} for kind in ("pid", "network", "ipc", "uts", "mount")]},
        }
        (bundle / "config.json").write_text(json.dumps(spec))
        state = setup.workspace / "state"
        state.mkdir()
        network = "host" if setup.network else "none"
        argv = ["runsc", f"--root={state}", f"--network={network}", "--ignore-cgroups"]
        argv += [] if root else ["--rootless"]
        argv += ["run", "--bundle", str(bundle), f"nlpbench-{secrets.token_hex(8)}"]
        return Launch(argv, tuple(fds.opened))


def _bind(source: Path | str, destination: Path | str) -> dict:
    return {"destination": str(destination), "type": "bind", "source": str(source), "options": ["rbind", "ro"]}


def _tmpfs(destination: str, size: int) -> dict:
    options = ["nosuid", "nodev", "mode=1777", f"size={size}"]
    return {"destination": destination, "type": "tmpfs", "source": "tmpfs", "options": options}


@functools.cache
def gvisor_works() -> str | None:
    """None when ``runsc`` can run a sandbox here as this runner will, else why not (a few words)."""
    if shutil.which("runsc") is None:
        return "gVisor is not installed (Debian: apt-get install runsc)"
    workspace = Path(tempfile.mkdtemp(prefix="nbgv-"))
    fds = Fds()
    try:
        launch = Gvisor("runsc", Sandbox(runtime=())).command(Setup(["/bin/true"], tool_environment(), workspace), fds)
        return failure(launch.argv, pass_fds=launch.pass_fds)
    finally:
        fds.close()
        shutil.rmtree(workspace, ignore_errors=True)
