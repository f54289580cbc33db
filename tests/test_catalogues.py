"""The registries' catalogues, which list names without importing modules, say what the modules register."""

from __future__ import annotations

import json
import subprocess
import sys

from nlpbench import formats, profiles
from nlpbench.profiles import base


def test_each_profile_module_registers_the_profiles_its_catalogue_lists():
    for family in base.CATALOGUE:
        base.get(family, "standard")  # imports the family's module
    registered = {key for key in base.REGISTRY if key.split("/", 1)[0] in base.CATALOGUE}
    assert registered == {f"{family}/{name}" for family, names in base.CATALOGUE.items() for name in names}
    assert profiles.names("spans") == ["nlpsandbox", "nlpsandbox-legacy", "standard"]
    assert "standard" in profiles.every_name() and "conll2012" in profiles.every_name()


def test_each_format_module_registers_the_formats_its_catalogue_lists():
    """Imported one at a time in a fresh interpreter, each module registers exactly its catalogue's names."""
    script = (
        "import importlib, json\n"
        "from nlpbench import formats\n"
        "found = {}\n"
        "for module in sorted(set(formats.CATALOGUE.values())):\n"
        "    before = set(formats.REGISTRY.names())\n"
        "    importlib.import_module(f'nlpbench.formats.{module}')\n"
        "    found.update({name: module for name in set(formats.REGISTRY.names()) - before})\n"
        "print(json.dumps(found))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == formats.CATALOGUE
    assert formats.names() == sorted(formats.CATALOGUE)
    assert formats.get("conll-iob1").name == "conll-iob1"
