"""A store made by the command line, under a careless umask, is readable by its owner only.

The SQLite file holds private notes, gold and key hashes: whatever the umask,
``nlpbench synth --into-store`` (a write that leaves the ``-wal`` and ``-shm``
files while it runs) makes the file, those files and each folder it creates
private; a store that exists keeps the mode its owner gave it.
"""

from __future__ import annotations

import stat
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")


def _nlpbench(*args: str, umask: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nlpbench", *args], capture_output=True, text=True, timeout=300,
        umask=umask,
    )  # fmt: skip


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_store_made_under_umask_0_is_private(tmp_path):
    folder = tmp_path / "stores" / "site"
    url = f"sqlite:///{folder / 'store.db'}"
    made = _nlpbench("synth", "--notes", "3", "--into-store", "private-notes", "--db", url, umask=0)
    assert made.returncode == 0, made.stderr
    assert _mode(folder) == _mode(folder.parent) == 0o700
    files = {path.name: _mode(path) for path in folder.iterdir()}
    assert files.pop("store.db") == 0o600 and all(mode == 0o600 for mode in files.values()), files
    shared = tmp_path / "shared.db"
    _nlpbench("db", "upgrade", "--db", f"sqlite:///{shared}", umask=0o077)
    shared.chmod(0o640)  # the owner shares it with a group
    listed = _nlpbench("dataset", "list", "--db", f"sqlite:///{shared}", umask=0)
    assert listed.returncode == 0 and _mode(shared) == 0o640
