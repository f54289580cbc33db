"""The Python 2.7 dict and set order of nlpbench.profiles.py27, against CPython 2.7 itself on random keys."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from nlpbench.profiles.py27 import Table, intersection, string_hash

PYTHON27 = next(
    (path for path in ("/root/.pyenv/versions/2.7.18/bin/python", "/usr/bin/python2.7") if Path(path).exists()), None
)

#: Runs in Python 2.7: for each (inserted, other) pair of key lists, hash of each key, list(dict), list(set(list)),
#: and list(set(dict_a.keys()) & set(dict_b.keys())) with the dicts filled in list order (evaluate.py's notes).
SCRIPT = r"""
import json, sys
from collections import defaultdict
out = []
for first, second in json.load(sys.stdin):
    a, b = [k.encode("utf-8") for k in first], [k.encode("utf-8") for k in second]
    filled_a, filled_b = defaultdict(int), {}
    for key in a:
        filled_a[key] = 1
    for key in b:
        filled_b[key] = 1
    out.append({
        "hashes": [hash(key) for key in a],
        "dict": [k.decode("utf-8") for k in filled_a],
        "set": [k.decode("utf-8") for k in set(a)],
        "both": [k.decode("utf-8") for k in list(set(filled_a.keys()) & set(filled_b.keys()))],
    })
print(json.dumps(out))
"""


def random_keys(rng: random.Random, count: int) -> list[str]:
    """Distinct keys like evaluate.py's note ids (``PATIENT-RECORD``, ``NAME-``) and any other text."""
    keys = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.6:
            keys.append(f"{rng.randrange(1000)}-{rng.randrange(100):02d}")
        elif roll < 0.8:
            keys.append("".join(rng.choice("abcXYZ_-.0123é漢") for _ in range(rng.randrange(12))) + "-")
        else:
            keys.append("".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(10))))
    return list(dict.fromkeys(keys))


def emulated(first: list[str], second: list[str]) -> dict:
    return {
        "hashes": [string_hash(key) - (string_hash(key) >> 63 << 64) for key in first],
        "dict": list(Table(first)),
        "set": list(Table(first)),
        "both": list(intersection(Table(Table(first)), Table(Table(second)))),
    }


@pytest.mark.skipif(PYTHON27 is None, reason="needs CPython 2.7 (pyenv 2.7.18) to compare with")
def test_the_order_is_python_27s():
    """500 seeded random pairs of key lists, up to 300 keys (tables up to 2,048 slots), checked in one Python 2.7
    run: every hash, the order of a dict and of a set filled in list order, and of the intersection."""
    rng = random.Random(27)
    pairs = []
    for _ in range(500):
        first = random_keys(rng, rng.choice([0, 1, 3, 5, 6, 20, 80, 300]))
        second = [key for key in first if rng.random() < 0.7] + random_keys(rng, rng.randrange(20))
        rng.shuffle(second)
        pairs.append((first, list(dict.fromkeys(second))))
    # Python 2.7 as evaluate.py's users ran it: no PYTHON* variable of this process (Dask's multiprocessing
    # scheduler, run by another test in this process, sets PYTHONHASHSEED, which turns 2.7's hash randomisation on)
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTHON")} | {"PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [PYTHON27, "-c", SCRIPT], input=json.dumps(pairs), capture_output=True, text=True, check=True, env=env
    )
    for (first, second), real in zip(pairs, json.loads(done.stdout), strict=True):
        assert emulated(first, second) == real, (first, second)


def test_a_known_hash_and_growth():
    """Hashes Python 2.7 printed (64-bit), and a table that grew from 8 to 32 and 128 slots keeps every key once."""
    signed = [string_hash(key) - (string_hash(key) >> 63 << 64) for key in ("", "a", "100-01", "300-00")]
    assert signed == [0, 12416037344, -4991428356436765007, 2876096463386456842]
    table = Table(f"{n}-01" for n in range(40))
    assert len(table.slots) == 128 and sorted(list(table)) == sorted(f"{n}-01" for n in range(40))
