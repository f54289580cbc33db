"""The layer contract of the architecture, enforced: a lower layer never imports a higher one.

import-linter reads the contract from ``pyproject.toml`` (``[tool.importlinter]``) and checks every import
of the package, those inside functions included. The second test proves the check can fail: a copy of the
package with one upward import is reported as broken, naming the import.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nlpbench

PACKAGE = Path(nlpbench.__file__).parent
ROOT = PACKAGE.parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the package under ``root/src``, with ``root/pyproject.toml``'s contract."""
    environment = os.environ | {"PYTHONPATH": str(root / "src")}
    command = [str(LINT_IMPORTS), "--no-cache", "--config", str(root / "pyproject.toml")]
    return subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True, timeout=300)


def test_no_module_imports_a_layer_above_its_own():
    checked = lint(ROOT)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "1 kept, 0 broken" in checked.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    copy = tmp_path / "src" / "nlpbench"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "data", "lexicons"))
    with (copy / "model" / "span.py").open("a") as module:
        module.write("\nimport nlpbench.platform.queue  # the model reaching up into the platform\n")
    checked = lint(tmp_path)
    assert checked.returncode == 1, checked.stdout[-3000:]
    assert "BROKEN" in checked.stdout and "nlpbench.model.span -> nlpbench.platform.queue" in checked.stdout
