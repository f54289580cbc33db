"""Files in and out, each in one place: every input is opened here, every output written here.

**Reading.** :func:`opened` opens an input: an operating-system error (no
such file, a directory given as a file, permission denied, a loop of symbolic
links, a name too long) becomes an :class:`~nlpbench.errors.InputError` of one
line naming the path and the reason. :func:`text_lines` gives a text file's
lines as UTF-8 (a byte order mark skipped), each at most :data:`MAX_LINE`
characters: a longer line, or bytes that are not UTF-8, are an error naming the
line before any parser sees it.

**Writing.** :func:`written` writes into a temporary file beside the target
(same folder, so same file system), flushes it to disk (``fsync``) and renames
it over the target: a reader, a crash or a full disk leaves the old file or the
new one, never half of one. A symbolic link is followed (the file it names is
replaced, the link stays); the new file keeps the old one's permission bits, or
gets what the umask gives a new file. The folder is not synced: after a power
cut the rename may be lost, leaving the old file whole.

**Inputs kept.** Inside :func:`guarded`, a command's inputs — the paths it
names and every file :func:`opened` opens — are known by device and inode, not
by spelling (``x/../x/gold.json``, a symbolic or hard link): an output that is
one of them is refused before any work is done (the paths it names) or before
the rename (the files it opened), so the input is never touched.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import stat
from collections.abc import Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, AnyStr, BinaryIO

from nlpbench.errors import InputError, Kind, NlpbenchError, excerpt

#: The longest line (in characters) a reader of lines accepts; a note on one line of JSON Lines fits many times.
MAX_LINE = 8 * 1024 * 1024

#: Short reasons for the operating-system errors a path gives; any other says its own ``strerror``.
_REASONS: dict[int | None, str] = {
    errno.ENOENT: "no such file",
    errno.EISDIR: "is a directory, not a file",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ELOOP: "too many levels of symbolic links (a loop?)",
    errno.ENAMETOOLONG: "file name too long",
}

Identity = tuple[int, int]
#: Paths by the option that names them: a mapping, or (option, path) pairs when an option names several.
Named = Mapping[str, "str | Path | None"] | Iterable[tuple[str, "str | Path | None"]]
#: The inputs of the running command by (device, inode), inside :func:`guarded`; None outside.
_INPUTS: ContextVar[dict[Identity, str] | None] = ContextVar("nlpbench_inputs", default=None)


def reason(error: OSError) -> str:
    """What went wrong with a path, in a few words (no path: the caller names it)."""
    return _REASONS.get(error.errno, (error.strerror or type(error).__name__).lower())


def os_error(error: OSError, path: str | Path | None = None) -> InputError:
    """The one-line :class:`InputError` of an operating-system error on ``path`` (default: the error's own)."""
    return InputError(reason(error), path if path is not None else error.filename)


def identity(path: str | Path) -> Identity | None:
    """``(device, inode)`` of the file or folder at ``path`` (links followed), or None when there is none."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):  # nothing there (or an unusable path): no identity
        return None
    return found.st_dev, found.st_ino


# ------------------------------------------------------------------ reading


@contextmanager
def opened(path: str | Path) -> Iterator[BinaryIO]:
    """``path`` opened for reading bytes; an OS error is an :class:`InputError` naming it.

    Inside :func:`guarded` the file is remembered as an input, so that no output replaces it.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as error:
        raise os_error(error, path) from None
    with handle:
        inputs = _INPUTS.get()
        if inputs is not None:
            found = os.fstat(handle.fileno())
            inputs.setdefault((found.st_dev, found.st_ino), str(path))
        yield handle


def is_folder(path: str | Path) -> bool:
    """Whether ``path`` is a folder (links followed); an OS error other than "no such file" is an
    :class:`InputError` naming it (a loop of links is not silently "not a folder")."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:  # absent is not a folder; any other error is raised
        return False
    except OSError as error:
        raise os_error(error, path) from None


def listed(folder: str | Path, suffix: str = "", *, hidden: bool = False, ordered: bool = True) -> list[Path]:
    """The entries of ``folder`` whose names end in ``suffix``, in name order (in the order the file system
    gives them unless ``ordered``), those whose names start with ``.`` only with ``hidden`` (as a shell's
    ``*`` sees them); an OS error is an :class:`InputError`."""
    try:
        names = os.listdir(folder)
    except OSError as error:
        raise os_error(error, folder) from None
    found = [Path(folder, name) for name in names if name.endswith(suffix) and (hidden or not name.startswith("."))]
    return sorted(found) if ordered else found


def read_bytes(path: str | Path) -> bytes:
    """The whole content of ``path``; an OS error is an :class:`InputError`."""
    with opened(path) as handle:
        try:
            return handle.read()
        except OSError as error:  # EISDIR on some systems comes at the read, not the open
            raise os_error(error, path) from None


def decoded(data: bytes, path: str | Path, *, bom: bool = False) -> str:
    """``data`` as UTF-8 text; a leading byte order mark is skipped unless ``bom`` (a note's text keeps it:
    its offsets count it). Bytes that are not UTF-8 are an :class:`InputError` naming the byte."""
    try:
        return data.decode("utf-8" if bom else "utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", path) from None


def read_text(path: str | Path, *, bom: bool = False) -> str:
    """A whole text file as Python reads it, ``\\r`` kept (so that offsets stay true); see :func:`decoded`."""
    return decoded(read_bytes(path), path, bom=bom)


def text_lines(path: str | Path, *, newline: str | None = None, limit: int = MAX_LINE) -> Generator[str, None, None]:
    """The lines of a UTF-8 text file, line endings kept, a byte order mark skipped.

    ``newline`` is :func:`open`'s: None reads ``\\r\\n`` and ``\\r`` as ``\\n``; ``""`` keeps every
    ending as it is (what :mod:`csv` wants). A line longer than ``limit`` characters, or bytes that are
    not UTF-8, stop the reading with an :class:`InputError` naming the line.
    """
    with opened(path) as raw:
        handle = io.TextIOWrapper(raw, encoding="utf-8-sig", newline=newline)
        number = 0
        while True:
            number += 1
            try:
                line = handle.readline(limit + 1)
            except UnicodeDecodeError as error:
                raise InputError(f"not UTF-8 text ({error.reason})", path, f"line {number}") from None
            except OSError as error:
                raise os_error(error, path) from None
            if not line:
                return
            if len(line) > limit and not line.endswith(("\n", "\r")):
                raise InputError(f"a line longer than {limit:,} characters", path, f"line {number}")
            yield line


def check_lines(data: AnyStr, path: str | Path, limit: int = MAX_LINE) -> AnyStr:
    """``data`` (a whole file, text or bytes) when none of its lines, ended by ``\\n`` or ``\\r``, is longer
    than ``limit``; else an :class:`InputError`, before a parser sees it.

    It looks ``limit`` characters ahead for a line end and jumps to the last one there, so a file of many
    short lines costs a few searches, not one per line.
    """
    newline, carriage = ("\n", "\r") if isinstance(data, str) else (b"\n", b"\r")
    start = 0
    while len(data) - start > limit:
        window = start + limit + 1
        last = max(data.rfind(newline, start, window), data.rfind(carriage, start, window))
        if last < 0:
            line = data.count(newline, 0, start) + 1
            raise InputError(f"a line longer than {limit:,} characters", path, f"line {line}")
        start = last + 1
    return data


def bounded_lines(handle: IO[bytes], limit: int = MAX_LINE) -> Iterator[bytes]:
    """The lines of a binary file, each at most ``limit`` bytes plus its ``\\n``; the first longer one ends
    the iteration with :class:`LineTooLong` (its number), which a caller may turn into an error or a fallback."""
    number = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise LineTooLong(number, limit)
        yield line


class LineTooLong(NlpbenchError):
    """A line longer than the limit of :func:`bounded_lines`: ``number`` and ``limit``."""

    kind = Kind.input

    def __init__(self, number: int, limit: int):
        self.number, self.limit = number, limit
        super().__init__(f"a line longer than {limit:,} bytes")


# ------------------------------------------------------------------ writing


@contextmanager
def written(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None):
    """A file handle (``mode`` ``"w"`` or ``"wb"``) whose content replaces ``path`` whole when the block ends
    without an error; on an error the temporary file is removed and ``path`` is untouched.

    An OS error (no such folder, permission denied, a full disk) is an :class:`InputError` naming ``path``.
    """
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.partial")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError as error:
        raise os_error(error, _folder_problem_path(error, path)) from None
    try:
        with os.fdopen(descriptor, mode, encoding=None if "b" in mode else encoding, newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            _keep_mode(handle.fileno(), target)
        _refuse_input(target, path)
        os.replace(temporary, target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if error.filename not in (None, str(temporary), str(target)):
            raise  # another file's error, raised in the block: not this output's
        raise os_error(error, path) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str, *, newline: str | None = None) -> None:
    """``text`` written to ``path`` as UTF-8, whole or not at all (:func:`written`)."""
    with written(path, newline=newline) as handle:
        handle.write(text)


def write_bytes(path: str | Path, data: bytes) -> None:
    """``data`` written to ``path``, whole or not at all (:func:`written`)."""
    with written(path, "wb") as handle:
        handle.write(data)


def in_folder(folder: Path, name: str) -> Path:
    """``folder / name`` for a file a writer makes per document (``name`` from its id); a name that would
    leave the folder or is no file name (a path separator, ``..``, NUL) is an :class:`InputError`: an id
    read from a file must not choose where to write."""
    if name in ("", ".", "..") or "/" in name or "\0" in name or os.sep in name:
        raise InputError("a document id that is no file name (a path separator, '..' or NUL)", folder, excerpt(name))
    return folder / name


def _folder_problem_path(error: OSError, path: str | Path) -> str | Path:
    """The path to name when the temporary file cannot be made: the folder when it is the folder's fault."""
    return Path(path).parent if error.errno in (errno.ENOENT, errno.ENOTDIR) else path


def _keep_mode(descriptor: int, target: Path) -> None:
    """Give the new file the permission bits of the one it replaces (a new one keeps what the umask gave)."""
    try:
        old = os.stat(target)
    except OSError:  # no file replaced: the new one keeps its own mode
        return
    os.fchmod(descriptor, old.st_mode & 0o7777)


# ------------------------------------------------------------------ inputs kept


@contextmanager
def guarded(inputs: Named, outputs: Named) -> Iterator[None]:
    """Run a command that reads ``inputs`` and writes ``outputs`` so that no output is one of its inputs.

    Each is given as ``{option: path}`` or ``(option, path)`` pairs, the option naming it in messages (a
    path of None, or one that does not exist, is no file). An output that is the same file or folder as
    a named input is refused at once; inside the block, :func:`written` refuses to replace any file
    :func:`opened` has opened.
    """
    token = _INPUTS.set(refuse_inputs(inputs, outputs))
    try:
        yield
    finally:
        _INPUTS.reset(token)


def refuse_inputs(inputs: Named, outputs: Named) -> dict[Identity, str]:
    """An :class:`InputError` when an output is the same file or folder as an input (see :func:`guarded`);
    else the inputs that exist, by identity."""
    known: dict[Identity, str] = {}
    for option, path in _pairs(inputs):
        found = identity(path) if path is not None else None
        if found is not None:
            known.setdefault(found, f"{option} {path}")
    for option, path in _pairs(outputs):
        found = identity(path) if path is not None else None
        if found is not None and found in known:
            raise InputError(f"{option} is the same file as {known[found]}: writing it would lose that input", path)
    return known


def _pairs(named: Named) -> Iterable[tuple[str, str | Path | None]]:
    return named.items() if isinstance(named, Mapping) else named


def same_file(first: str | Path, second: str | Path) -> bool:
    """Whether two paths name one file: by device and inode when both exist, else by their resolved paths."""
    one, other = identity(first), identity(second)
    if one is not None and other is not None:
        return one == other
    return os.path.realpath(first) == os.path.realpath(second)


def _refuse_input(target: Path, given: str | Path) -> None:
    inputs = _INPUTS.get()
    if not inputs:
        return
    found = identity(target)
    if found is not None and found in inputs:
        raise InputError(f"the same file as the input {inputs[found]}: writing it would lose that input", given)
