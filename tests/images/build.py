"""OCI image archives for the tests, made offline: the host's Python in a root of its own, and a tool script.

:func:`tool_image` puts Debian's ``python3.11`` (its program, the libraries
it links to, its standard library without tests) and ``datetool.py`` into a
root folder, imports it with ``podman import`` (no registry, no network) into
a podman storage of its own, and saves it as an OCI archive: what a team
would upload. Skipped, saying why, where podman or that Python is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PYTHON = Path("/usr/bin/python3.11")
HERE = Path(__file__).resolve().parent


def _libraries(program: Path) -> list[Path]:
    listed = subprocess.run(["ldd", str(program)], capture_output=True, text=True, check=True).stdout
    return [Path(word) for line in listed.splitlines() for word in line.split() if word.startswith("/")]


def tool_image(folder: Path, *, script: Path = HERE / "datetool.py", args: tuple[str, ...] = ()) -> Path:
    """An OCI archive at ``folder/tool.oci.tar`` whose entry point runs ``script`` with Python 3.11."""
    for program in ("podman", "ldd"):
        if shutil.which(program) is None:
            pytest.skip(f"no {program} here to make a test image")
    if not PYTHON.exists():
        pytest.skip(f"no {PYTHON} here to put in a test image")
    root = folder / "rootfs.tar"
    with tarfile.open(root, "w") as tar:
        tar.add(PYTHON, "usr/bin/python3.11")
        for library in _libraries(PYTHON):
            tar.add(library.resolve(), f"usr/lib/x86_64-linux-gnu/{library.name}")
        loader = Path("/lib64/ld-linux-x86-64.so.2")
        tar.add(loader.resolve(), "usr/lib64/ld-linux-x86-64.so.2")
        tar.add(Path("/usr/lib/python3.11"), "usr/lib/python3.11", filter=_without_tests)
        tar.add(script, "app/tool.py")
        for link, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
            info = tarfile.TarInfo(link)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    storage = folder / "podman"
    runroot = Path(tempfile.mkdtemp(prefix="nbpr-", dir="/tmp"))  # podman refuses one of more than 50 characters
    base = ["podman", f"--root={storage}", f"--runroot={runroot}", "--runtime=runc",
            "--cgroup-manager=cgroupfs", "--events-backend=none"]  # fmt: skip
    command = json.dumps(["/usr/bin/python3.11", "/app/tool.py", *args])
    archive = folder / "tool.oci.tar"
    try:
        subprocess.run([*base, "import", "--change", f"CMD {command}", str(root), "localhost/test-tool:1"],
                       check=True, capture_output=True, timeout=300)  # fmt: skip
        subprocess.run([*base, "save", "--format", "oci-archive", "-o", str(archive), "localhost/test-tool:1"],
                       check=True, capture_output=True, timeout=300)  # fmt: skip
    finally:
        subprocess.run([*base, "rmi", "--all", "--force"], capture_output=True, timeout=300)
        shutil.rmtree(storage, ignore_errors=True)
        shutil.rmtree(runroot, ignore_errors=True)
        root.unlink(missing_ok=True)
    return archive


def _without_tests(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    parts = Path(info.name).parts
    return None if "test" in parts or "__pycache__" in parts or "idlelib" in parts else info


@contextmanager
def registry_with(archive: Path, folder: Path) -> Iterator[str]:
    """A registry of Debian's ``docker-registry`` on a free local port, holding the image of ``archive``:
    yields the pinned reference ``127.0.0.1:PORT/test/tool@sha256:…`` (the registry speaks plain HTTP)."""
    if shutil.which("docker-registry") is None:
        pytest.skip("no docker-registry here (Debian: apt-get install docker-registry)")
    from nlpbench.runner.services import free_port

    port = free_port()
    (folder / "registry.yml").write_text(
        f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {folder / 'blobs'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    server = subprocess.Popen(["docker-registry", "serve", str(folder / "registry.yml")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    runroot = Path(tempfile.mkdtemp(prefix="nbpr-", dir="/tmp"))
    base = ["podman", f"--root={folder / 'podman'}", f"--runroot={runroot}", "--runtime=runc",
            "--cgroup-manager=cgroupfs", "--events-backend=none"]  # fmt: skip
    try:
        _wait_for(f"http://127.0.0.1:{port}/v2/")
        subprocess.run([*base, "load", "--input", str(archive)], check=True, capture_output=True, timeout=300)
        target = f"127.0.0.1:{port}/test/tool:1"
        subprocess.run([*base, "tag", "localhost/test-tool:1", target], check=True, capture_output=True, timeout=60)
        digest_file = folder / "digest"
        subprocess.run([*base, "push", "--tls-verify=false", "--digestfile", str(digest_file), target],
                       check=True, capture_output=True, timeout=300)  # fmt: skip
        yield f"127.0.0.1:{port}/test/tool@{digest_file.read_text().strip()}"
    finally:
        subprocess.run([*base, "rmi", "--all", "--force"], capture_output=True, timeout=300)
        shutil.rmtree(runroot, ignore_errors=True)
        server.terminate()
        server.wait()


def _wait_for(url: str) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"the test registry did not answer at {url}")
