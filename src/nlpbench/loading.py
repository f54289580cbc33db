"""Import one module of a large package without running the package's own initialisation.

NLTK's and scipy.optimize's ``__init__`` import nearly everything they hold
(NLTK brings scipy.stats and scikit-learn along): a second or more before the
one small module nlpbench needs is ready. :func:`import_alone` loads that
module while empty stand-ins take the place of the named packages, then
removes the stand-ins, so that a later ``import`` of the package initialises
it as usual and finds the same module already loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Sequence


def import_alone(name: str, packages: Sequence[str]) -> types.ModuleType:
    """``importlib.import_module(name)``, with each of ``packages`` (parents first) standing in empty.

    When one of the packages is imported already, or the module does not load
    this way, this is the plain import.
    """
    if not any(package in sys.modules for package in packages):
        stand_ins: dict[str, types.ModuleType] = {}
        try:
            for package in packages:
                stand_ins[package] = sys.modules[package] = _stand_in(package, stand_ins)
            return importlib.import_module(name)
        except ImportError:
            pass  # the package's layout is not what this expects: import it the usual way
        finally:
            for package, stand_in in stand_ins.items():
                if sys.modules.get(package) is stand_in:
                    del sys.modules[package]
    return importlib.import_module(name)


def _stand_in(package: str, stand_ins: dict[str, types.ModuleType]) -> types.ModuleType:
    """An empty package module whose path is the real package's folder."""
    parent, _, child = package.rpartition(".")
    if parent in stand_ins:
        path = [os.path.join(stand_ins[parent].__path__[0], child)]
    else:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(f"{package} is not a package")
        path = list(spec.submodule_search_locations)
    module = types.ModuleType(package)
    module.__path__ = path
    return module
