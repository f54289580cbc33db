"""Podman (Debian ``podman``, daemonless): the sandbox of a tool submitted as an OCI image, as the NLP Sandbox ran.

:class:`Podman` loads the image archive into a podman storage of the run's
own (in the runner's private folder, removed at the end: no team sees or
overwrites another's image, whatever names its archive holds) and runs it
with ``podman run``: no network (``--network=none``), a read-only root, a
size-limited ``tmpfs`` at ``/tmp`` (its ``HOME``), memory (swap included),
processes, open files and CPU time limited by the kernel, every capability
dropped, no new privileges, as :attr:`Sandbox.uid` (never the image's root),
with the ``PORT`` environment variable. The image's own entry point starts the
tool. An image given as ``REGISTRY/NAME@sha256:…`` (from a registry the
organisers named) is pulled into that storage instead; its digest pins it.
The relay then joins the container's network namespace from the host
(``nsenter --net``, root only) and forwards the runner's socket to the tool's
port; it holds no part of the container's filesystem. The container's status
is the tool's; an out-of-memory kill is read from ``podman inspect``.
Podman needs ``--runtime=runc`` here (crun refuses hybrid cgroups), and a
root worker: a rootless worker's images are refused in one line.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

from nlpbench.runner.isolation import Backend, Fds, Launch, Sandbox, SandboxError, SandboxUnavailable, Setup

#: Seconds ``podman load`` of an archive may take.
LOAD_SECONDS = 600
#: Open files a tool's process may hold.
OPEN_FILES = 4096


class Podman(Backend):
    """Podman: the tool is the image's entry point, reached by a relay in the container's network namespace."""

    inside = False
    visible = False
    companion_relay = True

    def __init__(self, name: str, settings: Sandbox):
        super().__init__(name, settings)
        self.container = f"nlpbench-{secrets.token_hex(8)}"
        self._base: list[str] = []

    def command(self, setup: Setup, fds: Fds) -> Launch:
        if setup.image is None:
            raise SandboxUnavailable("podman runs OCI images only: give the tool as an image archive")
        self._workspace = setup.workspace
        self._base = podman_base(setup.workspace)
        if isinstance(setup.image, Path):
            image = load(self._base, setup.image)
        else:
            image = pull(self._base, setup.image, plain=setup.plain_registry)
        memory = str(setup.memory_bytes)
        argv = [*self._base, "run", "--name", self.container, "--network=none", "--read-only", "--hostname", "tool"]
        argv += ["--tmpfs", f"/tmp:rw,nosuid,nodev,size={self.settings.disk_bytes},mode=1777"]
        argv += ["--memory", memory, "--memory-swap", memory, "--pids-limit", str(setup.tasks)]
        argv += ["--ulimit", f"nofile={OPEN_FILES}:{OPEN_FILES}", "--ulimit", f"nproc={setup.tasks}:{setup.tasks}"]
        argv += ["--ulimit", "core=0:0", "--cap-drop=all", "--security-opt=no-new-privileges"]
        argv += ["--user", f"{self.settings.uid}:{self.settings.gid}", "--workdir", "/tmp"]
        environment = {"PORT": setup.environment["PORT"], "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
        for name, value in environment.items():
            argv += ["--env", f"{name}={value}"]
        return Launch([*argv, image], tuple(fds.opened))

    def companion(self, setup: Setup, alive) -> list[str]:
        """The relay's command line, in the container's network namespace, once the container runs."""
        pid = self._running_pid(alive)
        return ["nsenter", f"--target={pid}", "--net", "--", *setup.relay]

    def _running_pid(self, alive) -> int:
        """The container's first process on this host, waited for while ``alive()`` (podman run has not ended)."""
        while alive():
            inspected = subprocess.run(
                [*self._base, "inspect", "--format", "{{.State.Pid}}", self.container],
                capture_output=True,
                text=True,
                timeout=60,
            )
            pid = inspected.stdout.strip()
            if inspected.returncode == 0 and pid.isdigit() and int(pid) > 0:
                return int(pid)
            time.sleep(0.1)
        raise SandboxError("the image's container ended before it ran")

    def out_of_memory(self) -> bool:
        """Whether the kernel ended the container at its memory limit."""
        inspected = subprocess.run(
            [*self._base, "inspect", "--format", "{{.State.OOMKilled}}", self.container],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return inspected.stdout.strip() == "true"

    def stop(self) -> None:
        """Kill the container now (it runs under podman's monitor, not below the runner's process)."""
        if self._base:
            subprocess.run([*self._base, "kill", "--signal", "KILL", self.container], capture_output=True, timeout=60)

    def clean(self) -> None:
        """Remove the container, the run's images (their layers are mounted until then) and its run folder."""
        if self._base:
            remove_storage(self._workspace)


def podman_base(workspace: Path) -> list[str]:
    """``podman`` with a storage of the run's own below ``workspace``, runc, and no events or daemon left.

    Its run folder (podman refuses one of more than 50 characters) is :func:`run_folder` of ``workspace``.
    """
    return [
        "podman",
        f"--root={workspace / 'podman'}",
        f"--runroot={run_folder(workspace)}",
        "--runtime=runc",
        "--cgroup-manager=cgroupfs",
        "--events-backend=none",
        "--log-level=error",
    ]


def run_folder(workspace: Path) -> Path:
    """The short run folder of the podman storage below ``workspace``: ``/tmp/nbpr-`` and a hash of its path."""
    return Path("/tmp") / f"nbpr-{hashlib.sha256(os.fsencode(workspace)).hexdigest()[:16]}"


def remove_storage(workspace: Path) -> None:
    """Remove every container and image of a run's podman storage below ``workspace``, and its run folder."""
    base = podman_base(workspace)
    for command in (["rm", "--all", "--force", "--time", "0"], ["rmi", "--all", "--force"]):
        subprocess.run([*base, *command], capture_output=True, timeout=120)
    shutil.rmtree(run_folder(workspace), ignore_errors=True)


def pull(base: list[str], reference: str, *, plain: bool) -> str:
    """Pull ``REGISTRY/NAME@sha256:…`` into the run's storage (the digest pins its content); the reference."""
    tls = ["--tls-verify=false"] if plain else []
    try:
        pulled = subprocess.run(
            [*base, "pull", "--quiet", *tls, reference], capture_output=True, text=True, timeout=LOAD_SECONDS
        )
    except subprocess.TimeoutExpired:
        raise SandboxError(f"the image was not pulled within {LOAD_SECONDS} s") from None
    if pulled.returncode != 0:
        raise SandboxError("the image cannot be pulled from its registry (absent, or the registry refused)")
    return reference


def load(base: list[str], archive: Path) -> str:
    """Load the OCI (or Docker) image archive into the run's storage; the id of the image it holds (one image)."""
    try:
        loaded = subprocess.run(
            [*base, "load", "--quiet", "--input", str(archive)], capture_output=True, text=True, timeout=LOAD_SECONDS
        )
    except subprocess.TimeoutExpired:
        raise SandboxError(f"the image archive did not load within {LOAD_SECONDS} s") from None
    if loaded.returncode != 0:
        raise SandboxError("the image archive cannot be loaded: it is not an OCI or Docker image archive")
    listed = subprocess.run([*base, "images", "--quiet", "--no-trunc"], capture_output=True, text=True, timeout=60)
    images = sorted(set(listed.stdout.split()))
    if len(images) != 1:
        raise SandboxError(f"the image archive holds {len(images)} images, not one")
    return images[0]


def containers(settings: Sandbox) -> Podman:
    """The backend that runs images here, or :class:`SandboxUnavailable` saying why none can."""
    why = podman_works()
    if why is not None:
        raise SandboxUnavailable(f"images cannot run here: {why}")
    return Podman("podman", settings)


@functools.cache
def podman_works() -> str | None:
    """None when podman can run an image here as this runner will, else why not (a few words)."""
    if os.geteuid() != 0:
        return "images run only under a root worker here (the relay joins the container's network as root)"
    for program in ("podman", "runc", "nsenter"):
        if shutil.which(program) is None:
            return f"{program} is not installed (Debian: apt-get install podman runc)"
    probe = subprocess.run(["podman", "--runtime=runc", "info", "--format", "json"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        return said[-1][:200] if said else "podman info failed"
    try:
        json.loads(probe.stdout)
    except ValueError:  # the reason, for the caller's message
        return "podman info answered no JSON"
    return None
