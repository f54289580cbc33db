"""Submitted files — prediction files and gold files — read, named and handed back to readers, bounded in size.

A directory (i2b2 XML, brat) travels as one JSON text mapping each file's path inside it to its text;
:func:`in_memory` gives either back as the file or folder it was, in memory, for a reader to read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from nlpbench.errors import InputError
from nlpbench.files import MemoryPath

#: The largest prediction file a submission may carry.
MAX_PREDICTION_BYTES = 64 * 2**20
#: The longest file name a submission keeps, its extension included (:func:`safe_name`).
MAX_NAME_CHARS = 100


def read_submitted(path: Path) -> tuple[str, str]:
    """The name and text of a submitted file, or of a directory (i2b2 XML, brat): its name ends with ``/``
    and its text is JSON mapping each file's path inside it to the file's text (:func:`in_memory` gives it back).
    """
    if not path.is_dir():
        return path.name, read_text(path)
    files = sorted(p for p in path.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    if size > MAX_PREDICTION_BYTES:
        raise InputError(
            f"{size} bytes in {len(files)} files, over the {MAX_PREDICTION_BYTES} a submission may have", path
        )
    return f"{path.name}/", json.dumps(
        {p.relative_to(path).as_posix(): read_text(p) for p in files}, ensure_ascii=False
    )


def safe_name(name: str | None) -> str:
    """A submitted file's name reduced to a base name that names no other place.

    Its last path segment (``/`` and ``\\`` both separate), control characters made ``_``, at most
    :data:`MAX_NAME_CHARS` characters (the extension kept); ``predictions`` when nothing usable is left
    (``.``, ``..``, ``/``, empty). A trailing ``/`` — a directory of files (:func:`read_submitted`) — is kept.
    """
    name = name or ""
    directory = name.endswith(("/", "\\"))
    base = re.sub(r"[\x00-\x1f\x7f]", "_", re.split(r"[/\\]", name.rstrip("/\\"))[-1]).strip()
    if base in ("", ".", ".."):
        base = "predictions"
    if len(base) > MAX_NAME_CHARS:
        _, dot, extension = base.rpartition(".")
        extension = dot + extension if dot and len(extension) < 10 else ""
        base = base[: MAX_NAME_CHARS - len(extension)] + extension
    return base + "/" * directory


def in_memory(name: str | None, text: str, folder: str) -> MemoryPath:
    """A submitted file or directory (:func:`read_submitted`) as readers take it, in memory: no file is
    written. It is named ``folder/NAME`` in messages (NAME its :func:`safe_name`, a directory's without
    the ``/``), the files of a directory ``folder/NAME/PATH``; a directory whose text is not its files'
    JSON is an :class:`InputError` naming NAME."""
    name = safe_name(name)
    shown = f"{folder}/{name.rstrip('/')}"
    if not name.endswith("/"):
        return MemoryPath.file(shown, text)
    try:
        files = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"a directory's files are not JSON (line {error.lineno})", name) from None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise InputError("a directory's files are not a JSON object of file paths and texts", name)
    try:
        return MemoryPath.folder(shown, files)
    except InputError as error:
        raise error.at(name) from None


def read_text(path: Path) -> str:
    """The UTF-8 text of a submitted file of at most :data:`MAX_PREDICTION_BYTES`; an :class:`InputError` else."""
    size = path.stat().st_size
    if size > MAX_PREDICTION_BYTES:
        raise InputError(f"{size} bytes, over the {MAX_PREDICTION_BYTES} a submitted file may have", path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path) from None
