"""``nlpbench.model`` loads each name's module on first use: every name it lists loads, from the module it says."""

from __future__ import annotations

import subprocess
import sys

import pytest

import nlpbench.model as model


def test_every_listed_name_loads_from_its_module():
    assert set(model._MODULES) == set(model.__all__)
    for name in model.__all__:
        value = getattr(model, name)
        assert getattr(sys.modules[f"nlpbench.model.{model._MODULES[name]}"], name) is value, name


def test_a_name_it_does_not_list_is_an_attribute_error():
    with pytest.raises(AttributeError, match=r"'nlpbench\.model' has no attribute 'Nothing'"):
        model.Nothing  # noqa: B018


def test_importing_one_name_loads_its_module_only():
    script = "import sys\nfrom nlpbench.model import Span\nprint(sorted(m for m in sys.modules if 'model' in m))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['nlpbench.model', 'nlpbench.model.span']"
