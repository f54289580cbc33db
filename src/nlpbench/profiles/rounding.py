"""How parity profiles round what they report, as the official scorers print it."""

from __future__ import annotations

from typing import overload


@overload
def significant(value: float, digits: int | None) -> float: ...
@overload
def significant(value: None, digits: int | None) -> None: ...


def significant(value: float | None, digits: int | None) -> float | None:
    """``value`` with ``digits`` significant digits, as Python's format ``.{digits}`` prints it; unchanged for None."""
    if value is None or digits is None:
        return value
    return float(f"{value:.{digits}}")
