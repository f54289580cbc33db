"""nlpbench: score, run and rank clinical NLP systems with exact-parity scorers.

The Python API (:mod:`nlpbench.python_api`): ``nlpbench.score``,
``nlpbench.compare``, ``nlpbench.read``, ``nlpbench.Report``,
``nlpbench.tasks()`` and ``nlpbench.profiles(task)``. Each loads on first use,
so that ``import nlpbench`` costs next to nothing.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from nlpbench.version import __version__

__all__ = ["Report", "__version__", "compare", "profiles", "read", "score", "tasks"]

if TYPE_CHECKING:
    from nlpbench import profiles, tasks
    from nlpbench.python_api import Report, compare, read, score

#: The API's names that live in :mod:`nlpbench.python_api`.
_API = frozenset({"Report", "compare", "read", "score"})


def __getattr__(name: str) -> Any:
    """Load an API name on first use (PEP 562)."""
    if name in _API:
        from nlpbench import python_api

        return getattr(python_api, name)
    if name == "tasks":
        import nlpbench.tasks

        return nlpbench.tasks
    raise AttributeError(f"module 'nlpbench' has no attribute {name!r}")


class _Package(types.ModuleType):
    """This package, whose ``profiles`` is the profiles package made callable (``nlpbench.profiles(task)``),
    however it was first imported."""

    @property
    def profiles(self) -> Any:
        from nlpbench.python_api import _callable_profiles

        return _callable_profiles()

    @profiles.setter
    def profiles(self, module: types.ModuleType) -> None:
        """The import system records the imported subpackage here; the getter finds it in ``sys.modules``."""


sys.modules[__name__].__class__ = _Package
