"""What the benchmarks say of the machine they ran on, beside their numbers (``python benchmarks/NAME.py``
puts this folder on the path, so each script imports it by name)."""

from __future__ import annotations

import os


def load() -> str:
    """The 1-, 5- and 15-minute load averages: other work on the machine slows both sides."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())
