"""Submitted files — prediction files and gold files — read, named and written back, bounded in size.

A directory (i2b2 XML, brat) travels as one JSON text mapping each file's path inside it to its text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

from nlpbench.errors import InputError

#: The largest prediction file a submission may carry.
MAX_PREDICTION_BYTES = 64 * 2**20
#: The longest file name a submission keeps, its extension included (:func:`safe_name`).
MAX_NAME_CHARS = 100


def read_submitted(path: Path) -> tuple[str, str]:
    """The name and text of a submitted file, or of a directory (i2b2 XML, brat): its name ends with ``/``
    and its text is JSON mapping each file's path inside it to the file's text (:func:`write_submitted` undoes it).
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


def write_submitted(name: str | None, text: str, parent: Path) -> Path:
    """Write a submitted file or directory (:func:`read_submitted`) back under ``parent``; its path."""
    name = safe_name(name)
    target = parent / name.rstrip("/")
    if not name.endswith("/"):
        target.write_text(text, encoding="utf-8")
        return target
    try:
        files = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"a directory's files are not JSON (line {error.lineno})", name) from None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise InputError("a directory's files are not a JSON object of file paths and texts", name)
    target.mkdir()
    for relative, content in files.items():
        inside = PurePosixPath(relative)
        if inside.is_absolute() or ".." in inside.parts or not inside.parts:
            raise InputError(f"file path {relative!r} is not inside the directory", name)
        path = target.joinpath(*inside.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return target


def read_text(path: Path) -> str:
    """The UTF-8 text of a submitted file of at most :data:`MAX_PREDICTION_BYTES`; an :class:`InputError` else."""
    size = path.stat().st_size
    if size > MAX_PREDICTION_BYTES:
        raise InputError(f"{size} bytes, over the {MAX_PREDICTION_BYTES} a submitted file may have", path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path) from None
