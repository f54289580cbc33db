"""Stream JSON without holding the file in memory: the items of a top-level array, or JSON Lines.

A file written one item per line (``[``, then ``{…},`` lines, then ``]``,
as nlpbench writes annotation records) is decoded a line at a time with
msgspec, into ``line_type`` — ``dict[str, msgspec.Raw]`` leaves each value
undecoded until it is asked for. Any other layout, or the first line that is
not one whole item, hands the rest of the file to ijson, which streams any
JSON; its items are plain Python values. Both paths accept and refuse the
same files.

Every path is bounded: nesting deeper than :data:`MAX_DEPTH` is refused
before a parser sees it (a file of 100,000 ``[`` once grew ijson's prefixes
quadratically, to 24 GB) — but for :func:`raw_members`, whose typed msgspec
decode (which bounds its own recursion) may come first, the check following
before anything else reads a value or reports an error — a UTF-8 byte order
mark is skipped, bytes that are not UTF-8 and lone surrogates (``"\\ud800"``) are refused.

An object that repeats a key — at any depth: ``{"start": 1, "start": 2}`` in
an annotation would silently score the last — is refused with one line naming
the file, the record (``record N`` of an array, ``line N`` of JSON Lines, the
object's path in a whole document) and the key, whatever the layout.
:func:`no_repeated_key` settles it in C: the members written (colons outside
strings) against the members kept (those of the decoded value encoded again);
only a text that repeats a key is walked again to name it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, BinaryIO, get_args

import ijson
import msgspec

if TYPE_CHECKING:
    import numpy as np

from nlpbench.errors import EXCERPT, InputError, excerpt
from nlpbench.files import MAX_LINE, Input, LineTooLong, Source, bounded_lines, opened

#: The deepest nesting any reader accepts; real files nest a handful of levels.
MAX_DEPTH = 128
BOM = b"\xef\xbb\xbf"


@cache
def _opens() -> np.ndarray:
    """The step in depth of each byte: 1 opening a bracket, -1 closing one, 0 any other. numpy is loaded here,
    on the first text :class:`_Structure` follows byte by byte: a small file (a note, a patient) never needs it."""
    import numpy as np

    opens = np.zeros(256, np.int32)
    opens[list(b"[{")] = 1
    opens[list(b"]}")] = -1
    return opens


def too_deep() -> str:
    return f"JSON nested deeper than {MAX_DEPTH} levels"


class _Structure:
    """Tracks the nesting depth of a JSON text read in pieces, outside its strings.

    Every step is a bytes method or a numpy operation over the piece, not a
    Python loop: a quote is a string's edge unless an odd run of backslashes
    precedes it, a byte is inside a string when an odd number of edges precede
    it, and the depth is the running sum of the brackets outside strings. ``colons``
    counts the colons outside strings: the members of all objects (:func:`members`).
    """

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = 0
        self.backslashes = 0  # the run of backslashes the last piece ended on
        self.colons = 0

    def feed(self, piece: bytes) -> None:
        """Account for the next piece; :class:`ValueError` when it nests too deep."""
        if not piece:
            return
        if self.backslashes or not edges_plain(piece):
            self._feed_escaped(piece)
            return
        # No backslash before a quote or a backslash: every quote is a string's edge, and what lies between
        # strings is every other part of the piece cut at its quotes. Joined and reduced to brackets and
        # colons (all in C), it is short, so numpy has little left to do. A backslash the piece ends on
        # may escape the next piece's first byte: its run is carried over.
        self.backslashes = len(piece) - len(piece.rstrip(b"\\"))
        parts = piece.split(b'"')
        outside = b"".join(parts[self.in_string :: 2]).translate(None, _NOT_STRUCTURE)
        self.in_string = (self.in_string + len(parts) - 1) % 2
        if outside:
            import numpy as np

            codes = np.frombuffer(outside, np.uint8)
            self._add(codes, _opens()[codes], np.ones(len(codes), bool))

    def _feed_escaped(self, piece: bytes) -> None:
        import numpy as np

        codes = np.frombuffer(piece, np.uint8)
        positions = np.arange(len(codes))
        backslash = codes == _BACKSLASH
        # the last byte at or before each position that is not a backslash (-1: none in this piece)
        plain = np.maximum.accumulate(np.where(backslash, -1, positions))
        before = np.concatenate(([-1], plain[:-1]))
        run = positions - 1 - before + np.where(before < 0, self.backslashes, 0)
        edges = (codes == _QUOTE) & (run % 2 == 0)
        inside = (np.cumsum(edges) + self.in_string) % 2 == 1
        steps = _opens()[codes]
        steps[inside] = 0
        self._add(codes, steps, ~inside)
        self.in_string = int(inside[-1])
        trailing = len(piece) - len(piece.rstrip(b"\\"))
        self.backslashes = trailing + self.backslashes if trailing == len(piece) else trailing

    def _add(self, codes: np.ndarray, steps: np.ndarray, outside: np.ndarray) -> None:
        """Follow the depth through bytes ``codes`` (``steps`` their brackets, ``outside`` not in a string)."""
        import numpy as np

        depths = np.cumsum(steps) + self.depth
        if int(depths.max()) > MAX_DEPTH:
            raise ValueError(too_deep())
        self.colons += int(np.count_nonzero((codes == _COLON) & outside))
        self.depth = int(depths[-1])


_QUOTE, _BACKSLASH, _COLON = ord('"'), ord("\\"), ord(":")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{}:")


def edges_plain(text: bytes) -> bool:
    """Whether every quote in ``text`` is a string's edge: no backslash in it escapes a quote or a backslash.

    A quote is escaped when an odd run of backslashes precedes it, so without ``\\"`` and ``\\\\`` no quote
    is; the escapes real texts hold (``\\n``, ``\\t``, ``\\u00e9``) leave the text as plain as one
    without any, and two searches in C settle it instead of a scan a byte at a time.
    """
    return b"\\" not in text or (b'\\"' not in text and b"\\\\" not in text)  # one byte is searched fastest


def check(data: bytes, path: Input | None = None, where: str | None = None) -> None:
    """Refuse ``data`` (one whole JSON text) when it nests deeper than :data:`MAX_DEPTH`.

    No text nests deeper than the brackets it opens, in strings or not (``depth <= count('[') + count('{')``),
    so a text with few brackets (a record line) is settled by two counts in C; so is one whose quotes are
    all strings' edges (:func:`edges_plain`) and with few brackets outside strings, or whose brackets there
    balance within the limit (:func:`_shallow`, a whole file); any other is followed byte by byte. The
    brackets outside strings are found by :func:`_brackets_outside` when no string holds a bracket (a
    timeline file), else by cutting the text at every quote.
    """
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return
    if edges_plain(data):
        outside = _brackets_outside(data)
        if outside is None:
            outside = b"".join(data.split(b'"')[::2])
        if outside.count(b"[") + outside.count(b"{") <= MAX_DEPTH or _shallow(outside):
            return
    try:
        _Structure().feed(data)
    except ValueError as error:
        raise InputError(str(error), path, where) from None


_NOT_EDGE_OR_BRACKET = bytes(b for b in range(256) if b not in b'"[]{}')


def _brackets_outside(data: bytes) -> bytes | None:
    """The brackets of ``data`` outside its strings, when every quote in it is a string's edge
    (:func:`edges_plain`) and no string holds a bracket; else None.

    Reduced to its quotes and brackets (one translation in C), such a text writes each string as ``""``,
    and one pass removing ``""`` from the left takes each string's two edges (the first quote opens a
    string, and the pair after a removed one starts at the next string's opening quote). A bracket inside
    a string leaves that string's opening quote without a partner, and the pass never comes back to it:
    a quote left over sends the text to the slower cut at every quote. Two passes in C over the text,
    where cutting it at its quotes makes a part for every string (a million in a timeline file).
    """
    reduced = data.translate(None, _NOT_EDGE_OR_BRACKET).replace(b'""', b"")
    return None if b'"' in reduced else reduced


_AS_PARENTHESES = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def _shallow(outside: bytes) -> bool:
    """Whether the brackets of ``outside`` (a text's bytes outside its strings) are balanced and nest at most
    :data:`MAX_DEPTH` deep: removing every innermost pair at once, once per level, leaves nothing. Each level is
    one replacement in C, and real files nest a handful of levels; False sends the text to :class:`_Structure`,
    which says how deep it nests (or finds it shallow after all, when its brackets do not balance)."""
    brackets = outside.translate(_AS_PARENTHESES, _NOT_BRACKET)
    for _ in range(MAX_DEPTH):
        inner = brackets.replace(b"()", b"")
        if len(inner) == len(brackets):
            break
        brackets = inner
    return not brackets


def decode(data: bytes, path: Input, where: str | None = None, type: Any = Any) -> Any:
    """One JSON text decoded by msgspec into ``type``, bounded and checked.

    A byte order mark is skipped; nesting deeper than :data:`MAX_DEPTH`,
    malformed JSON, bytes that are not UTF-8, lone surrogates and an object
    that repeats a key (:func:`no_repeated_key`) are an :class:`InputError`.
    :class:`msgspec.ValidationError` (JSON, but not of ``type``) is left to
    the caller, who knows what to say.
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
    check(data, path, where)
    try:
        value = msgspec.json.decode(data, type=type)
    except msgspec.ValidationError:
        raise
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        reason = _not_utf8(error, data)
        problem = f"not UTF-8 text ({reason})" if reason is not None else f"malformed JSON: {error}"
        raise InputError(problem, path, where) from None
    no_repeated_key(data, path, where, value if type is Any or _verbatim(data, value) else _UNDECODED)
    return value


def raw_members(data: bytes, path: Input) -> tuple[dict[str, msgspec.Raw], bytes | None]:
    """The members of the JSON object ``data``, each value undecoded (:class:`msgspec.Raw`), checked as
    :func:`decode` checks them, but for the depth of a plain object of arrays: with it, the text (a byte order
    mark skipped) whose depth is still unchecked, else None.

    A text whose one object is the top level, in UTF-8, with no colon written as an escape, decoded at once
    and holding as many members as it writes (no key repeated), has values that are arrays, strings, numbers
    and literals only: its depth is left to the caller, who decodes each value with a typed decoder (msgspec
    stops at the first item of a wrong type, and bounds its recursion) and calls :func:`check` on the text
    before any other reading of a value and before any error is reported, so a text too deep is refused
    before anything else is said of it. Checking a timeline file's depth costs more than decoding it; a
    typed decode of its patients settles it. Any other text, or any failure, is decoded by :func:`decode`,
    its depth checked first, with its errors and messages.
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        value = _RAW_MEMBERS.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        value = None
    if (
        value is None
        or not _one_object_in_utf8(data)  # a dict of Raw values: _verbatim
        or (b"\\" in data and b"\\u003" in data)
        or _ENCODER.encode(value).count(b":") < data.count(b":")
    ):
        return decode(data, path, type=dict[str, msgspec.Raw]), None
    return value, data


_RAW_MEMBERS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _verbatim(data: bytes, value: Any) -> bool:
    """Whether ``value`` (``data`` decoded into a type) may stand for ``data`` decoded as plain JSON in
    :func:`no_repeated_key`: a dict of :class:`msgspec.Raw` values in a text whose one object is the top
    level (no ``{`` after the first, in strings or not), so the values hold no member and encode again
    as they are written, and in UTF-8 (a Raw value's strings were never decoded, so a plain decode would
    be the first to find a byte that is not UTF-8: such a text takes that decode, and its message).
    Encoding the dict is a copy in C, where decoding the text builds every string in it (a timeline file:
    about 4 ms instead of 90 ms for 6 MB).
    """
    return (
        isinstance(value, dict) and all(isinstance(member, msgspec.Raw) for member in value.values())
    ) and _one_object_in_utf8(data)


def _one_object_in_utf8(data: bytes) -> bool:
    """Whether ``data`` holds one ``{`` at most, and is UTF-8 (see :func:`_verbatim`)."""
    if data.find(b"{", data.find(b"{") + 1) >= 0:
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:  # a plain decode says where, and raw_members leaves such a text to it
        return False
    return True


_UNDECODED = object()
_PLAIN = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()


def no_repeated_key(text: bytes, path: Input, where: str | None = None, value: Any = _UNDECODED) -> None:
    """Refuse ``text`` (one JSON text within :data:`MAX_DEPTH`) when an object in it, at any depth, repeats a key.

    Decoding keeps one member per key, so the text encoded again from its value has fewer members
    (:func:`members`, the colons outside strings) exactly when a key is repeated. Unless ``text`` writes
    a colon as an escape (``\\u003a``), every colon inside one of its strings is written again as a
    colon (msgspec escapes none), and the strings of a member decoding dropped only take colons away,
    so counting all colons on both sides gives the same answer in C: with ``m`` the members and
    ``s`` the colons inside strings, ``m_kept + s_kept < m_written + s_written`` exactly when
    ``m_kept < m_written``. ``value`` is ``text`` already decoded as plain JSON, when
    the caller has it. A difference, or a text msgspec cannot decode as plain JSON (a lone surrogate
    inside a value read as :class:`msgspec.Raw`), is settled by :func:`_first_repeat`, which names
    the key and, when ``where`` does not, the object's path.
    """
    try:
        encoded = _ENCODER.encode(_PLAIN.decode(text) if value is _UNDECODED else value)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        reason = _not_utf8(error, text)  # bytes inside a value read as msgspec.Raw, never decoded so far
        if reason is not None:
            raise InputError(f"not UTF-8 text ({reason})", path, where) from None
        encoded = None
    if encoded is not None:
        if b"\\" not in text or b"\\u003" not in text:  # no colon written as an escape (\u003a or \u003A)
            if encoded.count(b":") >= text.count(b":"):
                return
        elif members(encoded) >= members(text):
            return
    found = _first_repeat(text)
    if found is not None:
        place, key = found
        raise InputError(f"an object repeats the key {excerpt(key)}", path, where or place)


def _not_utf8(error: Exception, data: bytes) -> str | None:
    """Why ``data`` is not UTF-8 (``invalid start byte``), when that is why msgspec's ``error`` stopped its decode;
    else None. msgspec raised a :class:`UnicodeDecodeError` before 0.23, and since then a
    :class:`msgspec.DecodeError` ("Invalid UTF-8 encoded string") that says neither which byte nor why: the text
    is decoded again here, on the way to an error only."""
    if isinstance(error, UnicodeDecodeError):
        return error.reason
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:  # the answer: its reason is what the caller's one line says
        return bad.reason
    return None


def members(text: bytes) -> int:
    """The members of all objects in ``text`` (one JSON text within :data:`MAX_DEPTH`): its colons outside strings.

    When every quote is a string's edge (:func:`edges_plain`), the parts between quotes are alternately
    outside and inside strings, and the colons of the outer ones are counted in C; otherwise the text is
    followed byte by byte.
    """
    if edges_plain(text):
        return b"".join(text.split(b'"')[::2]).count(b":")
    structure = _Structure()
    structure.feed(text)
    return structure.colons


#: Parse events that start a value (an array's next item).
_VALUES = frozenset({"start_map", "start_array", "string", "number", "boolean", "null"})


def _first_repeat(text: bytes) -> tuple[str, str] | None:
    """The first object in ``text`` that repeats a key: its path (``top level``, ``a[0].b``) and the key."""
    frames: list[list] = []  # [keys so far, last key] for an object, [index] for an array
    try:
        for _, event, value in ijson.parse(io.BytesIO(text), use_float=True):
            if frames and len(frames[-1]) == 1 and event in _VALUES:
                frames[-1][0] += 1
            if event == "map_key":
                if value in frames[-1][0]:
                    return _place(frames[:-1]), value
                frames[-1][0].add(value)
                frames[-1][1] = value
            elif event == "start_map":
                frames.append([set(), None])
            elif event == "start_array":
                frames.append([-1])
            elif event in ("end_map", "end_array"):
                frames.pop()
    except (ijson.JSONError, UnicodeDecodeError):  # a lone surrogate: name the key, not where it is
        try:
            json.loads(text, object_pairs_hook=_unique_pairs)
        except _RepeatedKey as error:  # the repeated key the parser's callback found
            return "", error.args[0]
    return None


def _place(frames: list[list]) -> str:
    """``patient_bundles[0].note_bundles[1]``: the path the frames of the containers around an object spell."""
    place = ""
    for frame in frames:
        if len(frame) == 1:
            place += f"[{frame[0]}]"
        else:
            key = frame[1]
            name = key if key.isidentifier() and len(key) <= 40 else excerpt(key)
            place += f".{name}" if place else name
    return _tail(place) if place else "top level"


def _tail(place: str, limit: int = 2 * EXCERPT) -> str:
    """A long path by its last ``limit`` characters: the object's own key and the containers nearest it."""
    return place if len(place) <= limit else f"…{place[-limit:]}"


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = set()
    for key, _ in pairs:
        if key in keys:
            raise _RepeatedKey(key)
        keys.add(key)
    return dict(pairs)


def items(
    handle: BinaryIO, path: Input, line_type: Any = Any, *, keys_checked: bool = True, fallback_types: Sequence = ()
) -> Iterator[Any]:
    """Yield each item of the JSON array in ``handle`` (positioned at the start of the file).

    ``keys_checked=False`` leaves out :func:`no_repeated_key` on the lines decoded by msgspec, for a
    pass that only counts what a checked pass reads again. With ``fallback_types``, a line that is JSON
    but not of ``line_type`` is decoded into the first of them it is of (its reader says what is odd).
    """
    first = handle.readline(MAX_LINE + 1)  # a longer first line is no lone "[": ijson streams it
    if first.startswith(BOM):
        first = first[len(BOM) :]
    if first.strip() != b"[":
        handle.seek(0)
        if handle.read(len(BOM)) != BOM:
            handle.seek(0)
        yield from _ijson_items(handle, path)
        return
    decoder = msgspec.json.Decoder(line_type)
    fallbacks = [msgspec.json.Decoder(fallback_type) for fallback_type in fallback_types]
    offset = handle.tell()  # where the line being read starts
    count, comma = 0, False  # items read so far; whether the last one was followed by a comma
    lines = bounded_lines(handle)
    try:
        for line in lines:
            stripped = line.strip()
            if stripped == b"]" and (count == 0 or not comma) and not any(rest.strip() for rest in lines):
                return
            if not stripped:
                offset += len(line)
                continue
            if count and not comma:
                break  # an item follows one without a comma: let ijson say so
            followed = stripped.endswith(b",")
            text = stripped[:-1] if followed else stripped
            try:
                item = _decoded(text, decoder, fallbacks)  # msgspec bounds its own recursion
                proven = keys_checked and line_type is not Any and _no_key_repeated(text, item)
                # a proven item nests no deeper than its type; any other line is checked before it is yielded,
                # settled at once when it opens no more brackets than the limit, in strings or not
                if not proven and text.count(b"[") + text.count(b"{") > MAX_DEPTH:
                    check(text)
            except (InputError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                break  # ijson, behind its own depth limit, says what is wrong
            if keys_checked and not proven:
                no_repeated_key(text, path, f"record {count}", item if line_type is Any else _UNDECODED)
            offset += len(line)
            comma = followed
            count += 1
            yield item
    except LineTooLong:
        pass  # a line too long to hold: ijson streams it
    # The file ended early, or a line is not one whole item: hand the rest to
    # ijson behind a stand-in for what was read, so that it continues the same
    # array and accepts or refuses exactly what it would have.
    handle.seek(offset)
    prefix = b"[" if count == 0 else b"[0," if comma else b"[0"
    yield from _ijson_items(_Prefixed(prefix, handle), path, count, skip_first=count > 0)


def _no_key_repeated(text: bytes, item: Any) -> bool:
    """Whether ``item`` (``text`` decoded into a struct) proves that no object in ``text`` repeats a key, without
    decoding the whole text again as plain JSON; False leaves it to :func:`no_repeated_key`.

    The struct type must be *faithful*: it never writes a member the text lacks when encoded (no default but
    ``msgspec.UNSET``, or ``omit_defaults``; the same for its nested structs), its :class:`msgspec.Raw`
    members are its own fields, and its other members are structs, lists and scalars nesting within
    :data:`MAX_DEPTH` (no ``Any``, no dict): a proven item needs no depth check (:func:`items`). Only an item
    whose Raw members are strings is taken (a record whose arrays were all read: decoding the arrays left
    undecoded costs more than decoding the text again). Then each Raw member decoded as plain JSON (checking
    its UTF-8; msgspec encodes a Raw member as written, which writes the colons of the string it holds, as no
    text with a colon written as an escape is taken), the item encoded holds at most the
    members of the text's plain decoding, colons in strings included (:func:`no_repeated_key`), so as many
    colons as the text means that decoding kept every member: no key is repeated. A struct keeps one value of a
    repeated key and drops unknown members of nested structs: fewer colons, and the plain decode decides. So
    does a text that writes a colon as an escape, or a Raw member that is not plain JSON (a lone surrogate).
    For an annotation record decoded into rows, this is one encoding instead of a second decoding of it.
    """
    if not isinstance(item, msgspec.Struct) or (b"\\" in text and b"\\u003" in text):
        return False
    raw = [value for name in _raw_fields(type(item)) if isinstance(value := getattr(item, name), msgspec.Raw)]
    if any(memoryview(value)[:1] != b'"' for value in raw):  # decoding them costs more than it saves
        return False
    try:
        for value in raw:  # checked only: encoded as written, a string keeps its colons (none is escaped)
            _PLAIN.decode(value)
    except (msgspec.DecodeError, UnicodeDecodeError):  # unproven: the plain check decodes it and says what is wrong
        return False
    return _ENCODER.encode(item).count(b":") >= text.count(b":")


@cache
def _raw_fields(kind: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of a struct type that a decoding may fill with a :class:`msgspec.Raw`: those typed ``Raw``,
    alone or in a union; any other field's value is never one."""
    return tuple(
        field.name
        for field in msgspec.structs.fields(kind)
        if field.type is msgspec.Raw or msgspec.Raw in get_args(field.type)
    )


def _decoded(text: bytes, decoder: msgspec.json.Decoder, fallbacks: list[msgspec.json.Decoder]) -> Any:
    """``text`` decoded by ``decoder``, or by the first of ``fallbacks`` whose type it is of when it is JSON of
    another type (the last one's error, if none)."""
    for fallback in [decoder, *fallbacks][:-1]:
        try:
            return fallback.decode(text)
        except msgspec.ValidationError:  # JSON of another type: the next decoder's turn
            pass
    return fallbacks[-1].decode(text) if fallbacks else decoder.decode(text)


def _ijson_items(handle: BinaryIO | _Prefixed, path: Input, before: int = 0, skip_first: bool = False) -> Iterator[Any]:
    index = before
    repeated: dict[int, str] = {}  # id of an object that repeats a key: the key

    class UniqueKeys(dict):
        """The objects ijson builds, noting a repeated key (raising inside ijson's C code would not reach here)."""

        def __setitem__(self, key: str, value: Any) -> None:
            if key in self:
                repeated.setdefault(id(self), key)
            super().__setitem__(key, value)

    try:
        stream = ijson.items(_DepthLimited(handle), "item", use_float=True, map_type=UniqueKeys)
        if skip_first:
            next(stream, None)
        for item in stream:
            # ijson may build the next items before it yields this one: name the key only if it is this item's
            key = _repeated_within(item, repeated) if repeated else None
            if key is not None:
                raise InputError(f"an object repeats the key {excerpt(key)}", path, f"record {index}")
            yield item
            index += 1
    except ijson.JSONError as error:
        raise InputError(f"malformed JSON after record {index}: {error}", path) from None
    except _TooDeep as error:
        raise InputError(str(error), path, f"record {index}") from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text or a lone surrogate ({error.reason})", path, f"record {index}") from None


def _repeated_within(value: Any, repeated: dict[int, str]) -> str | None:
    """The key repeated by the first object of ``repeated`` (ids) found in ``value``, if any."""
    pending = [value]
    while pending:
        container = pending.pop()
        if isinstance(container, dict):
            if id(container) in repeated:
                return repeated[id(container)]
            pending.extend(reversed(container.values()))
        elif isinstance(container, list):
            pending.extend(reversed(container))
    return None


# Outside the hierarchy on purpose: these two only carry a finding out of a third-party parser's callback (ijson
# reading through _DepthLimited, json.loads calling _unique_pairs), which has no other way out, and never leave
# this module (each is caught at once and becomes an InputError naming the record).
class _TooDeep(Exception):
    """The stream nests deeper than MAX_DEPTH: the message says how deep."""


class _RepeatedKey(Exception):
    """An object repeats a key: ``args[0]`` is the key."""


class _DepthLimited:
    """A binary stream that refuses to hand out JSON nested deeper than :data:`MAX_DEPTH`."""

    def __init__(self, handle: Any):
        self.handle = handle
        self.structure = _Structure()

    def read(self, size: int = -1) -> bytes:
        piece = self.handle.read(size)
        try:
            self.structure.feed(piece)
        except ValueError as error:
            raise _TooDeep(str(error)) from None
        return piece


class _Prefixed:
    """A binary stream that reads ``prefix`` first, then the rest of ``handle``."""

    def __init__(self, prefix: bytes, handle: BinaryIO):
        self.prefix, self.handle = prefix, handle

    def read(self, size: int = -1) -> bytes:
        if not self.prefix or size == 0:  # ijson reads 0 bytes to learn the stream's type
            return self.handle.read(size)
        head, self.prefix = self.prefix, b""
        return head + self.handle.read(max(size - len(head), 0) if size >= 0 else -1)


def json_lines(path: Source, line_type: type[msgspec.Struct] | None = None) -> Iterator[tuple[str, Any]]:
    """``("line N", value)`` for each non-blank line of a JSON Lines file, in order.

    A line that is not JSON, bytes that are not UTF-8, or a line longer than
    :data:`~nlpbench.files.MAX_LINE` stop the reading with an :class:`InputError` naming the line.

    With ``line_type``, each line is first decoded into it (:func:`typed`); a line that is not of that
    type is decoded as plain JSON, with every check and message of :func:`decode`.
    """
    decoder = msgspec.json.Decoder(line_type) if line_type is not None else None
    with opened(path) as handle:
        try:
            for number, line in enumerate(bounded_lines(handle), start=1):
                if number == 1 and line.startswith(BOM):
                    line = line[len(BOM) :]
                if not line.strip():
                    continue
                where = f"line {number}"
                value = typed(line, decoder, path, where) if decoder is not None else None
                yield where, decode(line, path, where) if value is None else value
        except LineTooLong as error:
            raise InputError(str(error), path, f"line {error.number}") from None


def typed(data: bytes, decoder: msgspec.json.Decoder, path: Input, where: str) -> Any:
    """``data`` (one JSON text, no byte order mark) decoded by ``decoder`` into a struct, checked; None when
    it is not of the decoder's type or not decodable, for :func:`decode` to read and to say what is wrong.

    The struct type must refuse unknown fields and give no field a default but ``msgspec.UNSET`` (so must its
    nested structs): then encoding the value writes every member the text wrote, each key once, and
    :func:`no_repeated_key` settles repeated keys on the value as it does on plain JSON. A value of such a
    type nests no deeper than the type, within :data:`MAX_DEPTH`, and its strings were all decoded as UTF-8.
    """
    try:
        value = decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # msgspec.ValidationError included
        return None
    no_repeated_key(data, path, where, value)
    return value
