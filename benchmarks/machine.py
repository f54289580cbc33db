"""What the benchmarks say of the machine they ran on, beside their numbers (``python benchmarks/NAME.py``
puts this folder on the path, so each script imports it by name)."""

from __future__ import annotations

import os
from pathlib import Path


def load() -> str:
    """The 1-, 5- and 15-minute load averages: other work on the machine slows both sides."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def checkout_env(src: Path, cache: Path) -> dict[str, str]:
    """The environment of a ``python -m nlpbench`` run from the checkout whose ``src`` is given, its bytecode
    cached in ``cache``: the shared virtualenv sets ``PYTHONDONTWRITEBYTECODE``, under which every run would
    compile nlpbench's modules again, which a user's installed package never does. Give each checkout its own
    cache and run each command once before timing it."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
