"""Outputs that are whole or absent: written beside their place, then renamed over it.

A run killed while writing leaves the previous output (or none) and a
temporary sibling, never half a file; :func:`writable` tries a writer on
annotations without note texts before any tool is asked anything, so that a
format that cannot hold them fails first, not after the last note.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nlpbench.errors import InputError
from nlpbench.formats import Format
from nlpbench.model import Document


@contextmanager
def replaced_atomically(path: Path) -> Iterator[Path]:
    """A temporary sibling of ``path`` to write into; it takes ``path``'s place only if the block succeeds."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.partial")  # a fixed name: the next run clears what a kill left
    _remove(temporary)
    try:
        yield temporary
    except BaseException:
        _remove(temporary)
        raise
    if temporary.is_dir() and path.is_dir():  # a format written as a directory (brat, i2b2)
        old = path.with_name(f".{path.name}.{os.getpid()}.old")
        os.replace(path, old)
        os.replace(temporary, path)
        shutil.rmtree(old)
    else:
        os.replace(temporary, path)


def writable(writer: Format, notes: int) -> None:
    """An :class:`InputError` unless ``writer`` can write ``notes`` notes' annotations without their texts."""
    probe = [Document(f"probe-{i}") for i in range(min(notes, 2))]
    with tempfile.TemporaryDirectory(prefix="nlpbench-probe-") as scratch:
        try:
            writer.write(probe, Path(scratch) / "out")
        except (InputError, TypeError, ValueError, AttributeError, OSError) as error:
            reason = error.problem if isinstance(error, InputError) else type(error).__name__
            raise InputError(
                f"--out-format {writer.name} cannot hold a tool's annotations without the note texts ({reason})"
            ) from None


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
