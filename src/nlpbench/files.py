"""Files in and out, each in one place: every input is opened here, every output written here.

**Reading.** :func:`opened` opens an input: an operating-system error (no
such file, a directory given as a file, permission denied, a loop of symbolic
links, a name too long) becomes an :class:`~nlpbench.errors.InputError` of one
line naming the path and the reason. :func:`text_lines` gives a text file's
lines as UTF-8 (a byte order mark skipped), each at most :data:`MAX_LINE`
characters: a longer line, or bytes that are not UTF-8, are an error naming the
line before any parser sees it.

**In memory.** Wherever this module opens, tests or lists a path, it takes a
:class:`MemoryPath` too: a file, or a folder of files, given as texts in
memory and named as messages should name it. A reader that opens its input
here (and turns what it is given into a path with :func:`source`) reads
either the same way, with the same checks and messages, so text held in
memory (a store's rows, a notebook's strings) is scored without writing a file.

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

import codecs
import errno
import io
import itertools
import os
import stat
from collections.abc import Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, AnyStr, BinaryIO, TypeAlias

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


def os_error(error: OSError, path: Input | None = None) -> InputError:
    """The one-line :class:`InputError` of an operating-system error on ``path`` (default: the error's own)."""
    return InputError(reason(error), path if path is not None else error.filename)


def identity(path: str | Path) -> Identity | None:
    """``(device, inode)`` of the file or folder at ``path`` (links followed), or None when there is none."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):  # nothing there (or an unusable path): no identity
        return None
    return found.st_dev, found.st_ino


# ------------------------------------------------------------------ in memory


class _Texts:
    """The files of a :class:`MemoryPath` tree: each file's text by its path, each folder's entries by name in
    the order they were given. Shared by every MemoryPath of the tree, and compared by identity."""

    def __init__(self, texts: Mapping[PurePosixPath, str], root: PurePosixPath, folder: bool):
        self.texts = dict(texts)
        self.entries: dict[PurePosixPath, dict[str, None]] = {root: {}} if folder else {}
        for path in self.texts:
            inner = path
            while inner != root:
                self.entries.setdefault(inner.parent, {})[inner.name] = None
                inner = inner.parent
        clash = next((path for path in self.texts if path in self.entries), None)
        if clash is not None:
            raise InputError(f"file path {clash.relative_to(root).as_posix()!r} is both a file and a folder")


@dataclass(frozen=True)
class MemoryPath:
    """A file, or a folder of files, given in memory: what readers read in place of a path on disk.

    ``path`` is the name messages give it (``predictions/notes.jsonl``, ``gold/gold/100-01.xml``): nothing
    is opened there. :meth:`file` makes one file of a text, :meth:`folder` a folder of texts by their paths
    inside it. As with a :class:`~pathlib.Path`, its entries (:func:`listed`), its ``parent`` and
    ``with_suffix`` are MemoryPaths of the same tree, which may name a file that is not there
    (:func:`exists` tells); :func:`opened`, :func:`is_folder` and the readers built on them treat it as
    they treat a path, with the same messages. A folder lists its entries in name order, or, unordered,
    in the order their texts were given (where a folder on disk gives its file system's order).
    A text is read as its UTF-8 bytes, as a file written with it would be. ``tree`` holds the texts of
    the file or folder :meth:`file` or :meth:`folder` made, shared by every MemoryPath into it.
    """

    path: PurePosixPath
    tree: _Texts = field(repr=False)

    @classmethod
    def file(cls, name: str, text: str) -> MemoryPath:
        """The file ``name`` holding ``text``.

        >>> MemoryPath.file("predictions/notes.jsonl", '{"id": "n1"}').suffix
        '.jsonl'
        """
        path = PurePosixPath(name)
        return cls(path, _Texts({path: text}, path, folder=False))

    @classmethod
    def folder(cls, name: str, texts: Mapping[str, str]) -> MemoryPath:
        """The folder ``name`` holding each text of ``texts`` at its path inside it (``notes/100-01.xml``);
        a path that is not inside it (absolute, empty, with ``..``), or inside one of its files, is an
        :class:`InputError`.

        >>> notes = MemoryPath.folder("gold", {"b.xml": "<b/>", "a.xml": "<a/>", "more/c.xml": "<c/>"})
        >>> [str(entry) for entry in listed(notes, ".xml")], is_folder(notes / "more")
        (['gold/a.xml', 'gold/b.xml'], True)
        """
        root = PurePosixPath(name)
        placed: dict[PurePosixPath, str] = {}
        for relative, text in texts.items():
            inside = PurePosixPath(relative)
            if inside.is_absolute() or ".." in inside.parts or not inside.parts:
                raise InputError(f"file path {relative!r} is not inside the directory")
            placed[root.joinpath(*inside.parts)] = text
        return cls(root, _Texts(placed, root, folder=True))

    def __str__(self) -> str:
        return str(self.path)

    def __truediv__(self, name: str) -> MemoryPath:
        return MemoryPath(self.path / name, self.tree)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def suffix(self) -> str:
        return self.path.suffix

    @property
    def parent(self) -> MemoryPath:
        return MemoryPath(self.path.parent, self.tree)

    def with_suffix(self, suffix: str) -> MemoryPath:
        return MemoryPath(self.path.with_suffix(suffix), self.tree)

    def data(self) -> bytes:
        """The file's bytes; a folder, or no file, is the :class:`InputError` opening it on disk would be."""
        text = self.tree.texts.get(self.path)
        if text is None:
            raise InputError(_REASONS[errno.EISDIR if self.path in self.tree.entries else errno.ENOENT], self)
        return text.encode("utf-8")


#: What a reader is given: a path on disk (a string or a path), or a file or folder in memory.
Input: TypeAlias = str | os.PathLike[str] | MemoryPath
#: An input as a reader holds it (:func:`source`).
Source: TypeAlias = Path | MemoryPath


def source(given: Input) -> Source:
    """``given`` as a reader holds it: a :class:`MemoryPath` as it is, anything else as a :class:`~pathlib.Path`."""
    return given if isinstance(given, MemoryPath) else Path(given)


def is_file(path: Input) -> bool:
    """Whether ``path`` is a file (links followed)."""
    if isinstance(path, MemoryPath):
        return path.path in path.tree.texts
    return os.path.isfile(path)


def exists(path: Input) -> bool:
    """Whether there is a file or folder at ``path`` (a symbolic link counts, even a broken one)."""
    if isinstance(path, MemoryPath):
        return path.path in path.tree.texts or path.path in path.tree.entries
    return os.path.lexists(path)


# ------------------------------------------------------------------ reading


@contextmanager
def opened(path: Input) -> Iterator[BinaryIO]:
    """``path`` opened for reading bytes; an OS error is an :class:`InputError` naming it. A
    :class:`MemoryPath` gives its bytes.

    Inside :func:`guarded` the file is remembered as an input, so that no output replaces it.
    """
    if isinstance(path, MemoryPath):
        with io.BytesIO(path.data()) as held:
            yield held
        return
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


def is_folder(path: Input) -> bool:
    """Whether ``path`` is a folder (links followed); an OS error other than "no such file" is an
    :class:`InputError` naming it (a loop of links is not silently "not a folder")."""
    if isinstance(path, MemoryPath):
        return path.path in path.tree.entries
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:  # absent is not a folder; any other error is raised
        return False
    except OSError as error:
        raise os_error(error, path) from None


def listed(folder: Input, suffix: str = "", *, hidden: bool = False, ordered: bool = True) -> list[Source]:
    """The entries of ``folder`` whose names end in ``suffix``, in name order (in the order the file system
    gives them unless ``ordered``; a :class:`MemoryPath`'s, the order its texts were given), those whose
    names start with ``.`` only with ``hidden`` (as a shell's ``*`` sees them); an OS error is an
    :class:`InputError`."""
    if isinstance(folder, MemoryPath):
        if folder.path not in folder.tree.entries:
            raise InputError(_REASONS[errno.ENOTDIR if exists(folder) else errno.ENOENT], folder)
        names: Iterable[str] = folder.tree.entries[folder.path]
    else:
        try:
            names = os.listdir(folder)
        except OSError as error:
            raise os_error(error, folder) from None
    wanted = [name for name in names if name.endswith(suffix) and (hidden or not name.startswith("."))]
    return [_entry(folder, name) for name in (sorted(wanted) if ordered else wanted)]


def _entry(folder: Input, name: str) -> Source:
    return folder / name if isinstance(folder, MemoryPath) else Path(folder, name)


def read_bytes(path: Input) -> bytes:
    """The whole content of ``path``; an OS error is an :class:`InputError`."""
    with opened(path) as handle:
        try:
            return handle.read()
        except OSError as error:  # EISDIR on some systems comes at the read, not the open
            raise os_error(error, path) from None


def decoded(data: bytes, path: Input, *, bom: bool = False) -> str:
    """``data`` as UTF-8 text; a leading byte order mark is skipped unless ``bom`` (a note's text keeps it:
    its offsets count it). Bytes that are not UTF-8 are an :class:`InputError` naming the byte."""
    try:
        return data.decode("utf-8" if bom else "utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", path) from None


def read_text(path: Input, *, bom: bool = False) -> str:
    """A whole text file as Python reads it, ``\\r`` kept (so that offsets stay true); see :func:`decoded`."""
    return decoded(read_bytes(path), path, bom=bom)


def text_lines(path: Input, *, newline: str | None = None, limit: int = MAX_LINE) -> Generator[str, None, None]:
    """The lines of a UTF-8 text file, line endings kept, a byte order mark skipped.

    ``newline`` is :func:`open`'s: None reads ``\\r\\n`` and ``\\r`` as ``\\n``; ``""`` keeps every
    ending as it is (what :mod:`csv` wants). A line longer than ``limit`` characters, or bytes that are
    not UTF-8, stop the reading with an :class:`InputError` naming the line.
    """
    with opened(path) as raw:
        yield from _lines(raw, path, newline, limit)


def _lines(raw: BinaryIO, path: Input, newline: str | None, limit: int) -> Generator[str, None, None]:
    """:func:`text_lines` of an opened file, from where it stands; the file is left open."""
    handle = io.TextIOWrapper(raw, encoding="utf-8-sig", newline=newline)
    try:
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
    finally:
        if not handle.closed:
            handle.detach()  # the wrapper, dropped, would close the file and warn that it was left open


#: The bytes :func:`text_blocks` reads at a time.
BLOCK = 1 << 20


def text_blocks(
    path: Input, *, limit: int = MAX_LINE, size: int | None = None
) -> Generator[tuple[int, str], None, None]:
    """The lines of :func:`text_lines` (``newline=""``) in blocks: ``(number of the first line, text)``.

    ``size`` (by default :data:`BLOCK`) is a multiple of 8,192 bytes, the chunk :class:`io.TextIOWrapper`
    decodes at a time (so that a block given never holds a line that :func:`text_lines` would refuse).

    A block is whole lines; one that holds no ``\\r`` ends each line with ``\\n`` (the file's last
    line may have no ending). The file is read ``size`` bytes at a time and decoded at once, so a
    reader does per block what it did per line. Lines, errors and where they are raised are those of
    :func:`text_lines`, and so are their line numbers: where a block holds a ``\\r``, a line longer than
    ``limit`` could be, or bytes that are not UTF-8, the file is read again from its start by
    :func:`text_lines`, the lines already given are skipped and each further line comes as a block of
    its own (a file that cannot be read again is read that way from the start).
    """
    size = size or BLOCK
    if size % 8192:
        raise ValueError("the size of a block is a multiple of 8,192 bytes")
    with opened(path) as raw:
        given = 0
        if raw.seekable():
            decoder = codecs.getincrementaldecoder("utf-8-sig")()
            carry = ""
            while True:
                try:
                    data = raw.read(size)
                except OSError as error:
                    raise os_error(error, path) from None
                try:
                    text = carry + decoder.decode(data, final=not data)
                except UnicodeDecodeError:
                    break  # text_lines raises it, at its line
                cut = len(text) if not data else text.rfind("\n") + 1
                block, carry = text[:cut], text[cut:]
                if "\r" in text or len(carry) > limit or len(block) > limit:
                    break
                if block:
                    yield given + 1, block
                    given += block.count("\n")
                if not data:
                    return
            raw.seek(0)
        lines = _lines(raw, path, "", limit)
        try:
            for line in itertools.islice(lines, given, None):
                given += 1
                yield given, line
        finally:
            lines.close()


def check_lines(data: AnyStr, path: Input, limit: int = MAX_LINE) -> AnyStr:
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
    # os.urandom is what secrets.token_hex reads, without loading secrets (hashlib, hmac, random: 5 ms at start-up)
    temporary = target.with_name(f".{target.name}.{os.urandom(6).hex()}.partial")
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
