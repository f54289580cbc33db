"""Ground 100,000 LLM mentions in notes, against a plain ``str.find`` loop, in one run.

    python benchmarks/grounding_bench.py [--mentions 100000] [--repeat 3] [--seed 7]

The mentions are the gold PHI of the 300 embedded synthetic notes (``nlpbench synth --embedded``), cycled
until there are ``--mentions`` of them, each sent with its own note as a model would return it, changed
as models change them (seeded): 85 % as in the note, 5 % in other case and spacing (the normalised
stage), 5 % with one letter dropped or doubled (the fuzzy stage), 5 % invented (a word no note has).

- **nlpbench**: :func:`nlpbench.annotators.llm.grounding.ground` on each note's mentions — every
  occurrence, the normalised and fuzzy stages, counts per type;
- **str.find loop**: for each mention, every non-overlapping occurrence of its exact text by ``str.find``
  (no word boundaries, no other stage) — the least a grounding does.

Prints the machine, the command, each way's best time of ``--repeat`` rounds, mentions per second and how
many mentions each placed.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections import Counter

from nlpbench.annotators.llm.grounding import Mention, ground
from nlpbench.synth import embedded


def mentions_of(count: int, seed: int) -> list[tuple[str, list[Mention]]]:
    """``count`` mentions, grouped by note, as :mod:`the module <grounding_bench>` says."""
    rng = random.Random(seed)
    notes = [note for note in embedded() if note.annotations]
    batches: list[tuple[str, list[Mention]]] = []
    made = 0
    while made < count:
        for note in notes:
            batch = []
            for annotation in note.annotations:
                if made == count:
                    break
                batch.append(Mention(_changed(annotation.text or "", rng), annotation.label))
                made += 1
            batches.append((note.text or "", batch))
            if made == count:
                break
    return batches


def _changed(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.85 or len(text) < 6:
        return text
    if roll < 0.90:
        return "  ".join(text.upper().split(" "))
    if roll < 0.95:
        cut = rng.randrange(1, len(text) - 1)
        return text[:cut] + text[cut + 1 :] if rng.random() < 0.5 else text[:cut] + text[cut] + text[cut:]
    return f"Zyxquv {rng.randrange(10**6)}"


def find_loop(batches: list[tuple[str, list[Mention]]]) -> int:
    """Mentions placed by plain ``str.find``: each mention's exact occurrences, every one."""
    placed = 0
    for text, batch in batches:
        for mention in batch:
            start = text.find(mention.text) if mention.text else -1
            placed += start >= 0
            while start >= 0:
                start = text.find(mention.text, start + len(mention.text))
    return placed


def grounding(batches: list[tuple[str, list[Mention]]]) -> Counter:
    """Distinct mentions by the stage that placed them."""
    stages: Counter = Counter()
    for text, batch in batches:
        for account in ground(text, batch).counts.values():
            stages.update(exact=account.exact, normalised=account.normalised, fuzzy=account.fuzzy)
            stages.update(unplaced=account.unplaced)
    return stages


def best(function, batches, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function(batches)
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    batches = mentions_of(args.mentions, args.seed)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"command: python benchmarks/grounding_bench.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"{args.mentions} mentions in {len(batches)} notes; best of {args.repeat} rounds")
    find_time, found = best(find_loop, batches, args.repeat)
    ground_time, stages = best(grounding, batches, args.repeat)
    print(f"str.find loop: {find_time:.3f} s, {args.mentions / find_time:,.0f} mentions/s, {found} placed (exact)")
    placed = ", ".join(f"{stage} {stages[stage]}" for stage in ("exact", "normalised", "fuzzy", "unplaced"))
    print(f"nlpbench ground: {ground_time:.3f} s, {args.mentions / ground_time:,.0f} mentions/s; distinct: {placed}")
    print(f"ratio: {ground_time / find_time:.1f}x the str.find loop")


if __name__ == "__main__":
    main()
