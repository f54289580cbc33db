"""The order CPython 2.7 iterates a dict or a set of ``str`` keys in, computed as CPython 2.7.18 computes it.

Official scorers written for Python 2 iterate dicts and sets, and a sum taken in that order can differ in
its last digit from the same sum in any other order. Python 2's ``str`` hash is fixed (hash randomisation
is off unless ``-R`` or ``PYTHONHASHSEED`` asks for it), so the order is too, given the keys and the
order they were inserted in:

- the hash (``string_hash``, 64-bit ``long``): ``x = b[0] << 7``, then ``x = 1000003·x XOR b`` for each
  byte ``b``, then ``x XOR length``; -1 becomes -2; the empty string hashes to 0;
- a table of 8 slots to start with; a key goes to slot ``hash & mask``, else the next of
  ``i = 5·i + perturb + 1`` (``perturb`` the hash as an unsigned number, shifted right 5 bits after each
  step), all modulo 2⁶⁴;
- after an insertion that fills two thirds of the slots, the table grows to the smallest power of two
  above 4 × the keys, and the keys are inserted again in slot order;
- iteration is slot order. Dicts (``PyDict_SetItem``) and sets (``set_add_key``) follow the same rules.

A key is hashed as the bytes the file system gave Python 2: the UTF-8 of its ``str`` (surrogate escapes
kept as the bytes they stand for).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

_WORD = 2**64 - 1
_MIN_SIZE = 8
_PERTURB_SHIFT = 5


def string_hash(key: str) -> int:
    """Python 2.7's ``hash(key)`` for a ``str`` of these bytes, as an unsigned 64-bit number."""
    data = key.encode("utf-8", "surrogateescape")
    if not data:
        return 0
    x = data[0] << 7
    for byte in data:
        x = ((1000003 * x) & _WORD) ^ byte
    x ^= len(data)
    return _WORD - 1 if x == _WORD else x  # -1 is -2


class Table:
    """A CPython 2.7 dict or set of ``str`` keys: which slot each key took, in the order they were added."""

    def __init__(self, keys: Iterable[str] = ()):
        self.slots: list[tuple[str, int] | None] = [None] * _MIN_SIZE
        self.used = 0
        for key in keys:
            self.add(key, string_hash(key))

    def __len__(self) -> int:
        return self.used

    def __contains__(self, key: str) -> bool:
        return self.slots[self._slot(key, string_hash(key))] is not None

    def entries(self) -> list[tuple[str, int]]:
        """(key, hash) in iteration order: slot order."""
        return [entry for entry in self.slots if entry is not None]

    def __iter__(self) -> Iterator[str]:
        """The keys in the order Python 2.7 iterates them."""
        return (key for key, _ in self.entries())

    def add(self, key: str, hashed: int) -> None:
        """Insert ``key`` (its hash ``hashed``) unless present; grow the table as CPython does after it."""
        slot = self._slot(key, hashed)
        if self.slots[slot] is not None:
            return
        self.slots[slot] = (key, hashed)
        self.used += 1  # no deletions: every filled slot holds a key
        if self.used * 3 >= len(self.slots) * 2:
            self._resize(self.used * 2 if self.used > 50000 else self.used * 4)

    def _slot(self, key: str, hashed: int) -> int:
        """The slot holding ``key``, or the empty one it would take (``lookdict_string``, ``set_lookkey_string``)."""
        mask = len(self.slots) - 1
        index = hashed & mask
        perturb = hashed
        while (entry := self.slots[index & mask]) is not None and entry[0] != key:
            index = (5 * index + perturb + 1) & _WORD
            perturb >>= _PERTURB_SHIFT
        return index & mask

    def _resize(self, minimum: int) -> None:
        size = _MIN_SIZE
        while size <= minimum:
            size <<= 1
        old, self.slots = self.entries(), [None] * size
        for key, hashed in old:
            self.slots[self._slot(key, hashed)] = (key, hashed)


def intersection(first: Table, second: Table) -> Table:
    """``first & second`` as ``set_intersection`` makes it: the keys of the smaller set (``second`` on a tie), in
    its iteration order, that the other holds, added to a new set."""
    if len(second) > len(first):
        first, second = second, first
    result = Table()
    for key, hashed in second.entries():
        if key in first:
            result.add(key, hashed)
    return result
