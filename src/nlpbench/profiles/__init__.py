"""Each official scorer's quirks, named and documented in one place.

A profile belongs to a task (``spans``, ``coref``, …) and is registered under
``task/name``; :func:`get` and :func:`names` look profiles up per task.
"""

from __future__ import annotations

from nlpbench.profiles.base import Profile, describe, every_name, get, names, register

__all__ = ["Profile", "describe", "every_name", "get", "names", "register"]
