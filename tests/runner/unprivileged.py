"""Run nlpbench as an unprivileged user (uid and gid 65534, no groups), from a test running as root.

``Unprivileged.ready(base)`` (or a ``pytest.skip`` with the reason) gives a
runner of ``python -m nlpbench ARGS…`` under ``setpriv``, with this checkout's
sources first on ``PYTHONPATH`` and ``base`` (made the user's) as its
working and temporary directory. The interpreter, the sources or ``base`` may sit below
a directory others cannot search (a Python installed under ``/root``, mode
0700): then the command starts in a private mount namespace of its own where
that directory is a fresh ``tmpfs`` (mode 0755) holding only bind mounts of
what is needed, so the user reaches the interpreter at its own path (its
``RUNPATH`` names it) and nothing else of the directory; nothing changes
outside that namespace. Whether it all works is found by trying.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import nlpbench

NOBODY = 65534
SOURCES = Path(nlpbench.__file__).resolve().parents[1]
DROP = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")


def hidden_below(path: Path) -> Path | None:
    """The highest directory above ``path`` (or ``path`` itself) that others may not search, if any."""
    for ancestor in reversed([path, *path.parents]):
        if not os.stat(ancestor).st_mode & stat.S_IXOTH:
            return ancestor
    return None


def exposing(needed: list[Path]) -> str:
    """Shell lines, run as root in a private mount namespace, that make each of ``needed`` reachable to others.

    Each needed directory is opened (descriptors 3 on) before a ``tmpfs`` covers
    the hidden directory above it, then bound back at its own path from the
    open descriptor (not canonicalized: the path itself is covered by then).
    """
    hidden: dict[Path, list[Path]] = {}
    for path in needed:
        inside_another = any(other != path and other in path.parents for other in needed)
        if (top := hidden_below(path)) is not None and not inside_another and path not in hidden.get(top, []):
            hidden.setdefault(top, []).append(path)
    paths = [path for under in hidden.values() for path in under]
    if not paths:
        return ""
    opened = {path: 3 + number for number, path in enumerate(paths)}
    lines = ["set -e", *(f"exec {fd}< {shlex.quote(str(path))}" for path, fd in opened.items())]
    for top, under in hidden.items():
        lines.append(f"mount -t tmpfs -o mode=0755 nlpbench-test {shlex.quote(str(top))}")
        for path in under:
            quoted = shlex.quote(str(path))
            lines += [f"mkdir -p {quoted}", f"mount --no-canonicalize --bind /proc/self/fd/{opened[path]} {quoted}"]
    lines.append("exec " + " ".join(f"{fd}<&-" for fd in opened.values()))
    return "\n".join(lines)


@dataclass
class Unprivileged:
    """``nlpbench(*args, path=…)``: ``python -m nlpbench ARGS…`` as uid 65534 in ``base``; a CompletedProcess."""

    base: Path
    prefix: tuple[str, ...]

    @classmethod
    def ready(cls, base: Path) -> Unprivileged:
        """A runner whose user can run nlpbench and start a user namespace here; else a skip saying why not."""
        if os.geteuid() != 0:
            pytest.skip("needs root, to drop to uid 65534 (as another user the sandbox's own tests run this path)")
        for command in ("setpriv", "unshare", "mount"):
            if shutil.which(command) is None:
                pytest.skip(f"no {command} command")
        base.mkdir(parents=True, exist_ok=True)
        os.chown(base, NOBODY, NOBODY)
        needed = [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), SOURCES, base.resolve()]
        script = exposing(needed)
        if script:
            prefix = ("unshare", "--mount", "--propagation", "private", "sh", "-c", f'{script}\nexec "$@"', "sh")
        else:
            prefix = ()
        runner = cls(base, (*prefix, *DROP))
        tried = runner.run(sys.executable, "-c", "import nlpbench.cli, os; print(nlpbench.__file__, os.getuid())")
        expected = f"{SOURCES / 'nlpbench' / '__init__.py'} {NOBODY}\n"
        if tried.returncode != 0 or tried.stdout != expected:
            exposed = " (in a private mount namespace showing what root's directories hide)" if script else ""
            pytest.skip(f"uid {NOBODY} cannot run this checkout with {sys.executable}{exposed}: {last_line(tried)}")
        tried = runner.run("unshare", "--map-root-user", "--net", "--pid", "--fork", "--kill-child", "true")
        if tried.returncode != 0:
            pytest.skip(f"user namespaces are not permitted here: {last_line(tried)}")
        return runner

    def run(self, *argv: str, path: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        """``argv`` as the user, in ``base``, with a small environment of its own.

        ``env`` comes first: ``setpriv`` execs its command still holding root's
        capabilities (so it reaches a program the user could not); from ``env`` on, nothing does.
        """
        environment = {
            "PATH": path or os.environ["PATH"],
            "PYTHONPATH": str(SOURCES),
            "TMPDIR": str(self.base),
            "HOME": str(self.base),
            "LANG": "C.UTF-8",
        }
        command = (*self.prefix, "env", "-i", *(f"{k}={v}" for k, v in environment.items()))
        return subprocess.run(
            [*command, *argv], cwd=self.base, capture_output=True, text=True, timeout=timeout, env=os.environ
        )

    def nlpbench(self, *args: object, path: str | None = None) -> subprocess.CompletedProcess:
        return self.run(sys.executable, "-m", "nlpbench", *(str(a) for a in args), path=path)

    def own(self, *paths: Path) -> None:
        """Give ``paths`` (files made by the test as root) to the user."""
        for path in paths:
            os.chown(path, NOBODY, NOBODY)


def last_line(result: subprocess.CompletedProcess) -> str:
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1] if lines else f"status {result.returncode}"
