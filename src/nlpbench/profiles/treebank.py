"""NLTK's Treebank tokeniser as nlpsandbox-client 4.3 applies it to an annotation's text, emulated exactly.

The client cuts each annotation's ``text`` with ``TreebankWordTokenizer`` and searches each token in the
text from the end of the previous one. :func:`treebank_tokens` gives Treebank's tokens a word at a time
(only words some Treebank rule touches go through NLTK), :func:`treebank_search_tokens` the searched
offsets, and ``treebank_search_tokens.many`` those of a batch of texts at once with numpy. The ``nlpsandbox``
profile of :mod:`nlpbench.profiles.spans` tokenises with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, lru_cache
from itertools import compress
from typing import TYPE_CHECKING

from nlpbench.loading import import_alone
from nlpbench.metrics.spans import (
    TokenArrays,
    Unit,
    in_text_order,
    tokens_as_arrays,
)

if TYPE_CHECKING:  # numpy is loaded by the first batch of texts cut together, not by this module
    import numpy as np


@cache
def _treebank():
    """NLTK's Treebank tokeniser, loaded without the rest of NLTK.

    ``import nltk`` imports nearly all of NLTK, and with it scipy.stats and
    scikit-learn when they are installed: 1 to 1.5 s and 100 MB, against the
    six small modules the tokeniser needs (:func:`nlpbench.loading.import_alone`).
    """
    return import_alone("nltk.tokenize.treebank", ["nltk", "nltk.tokenize"]).TreebankWordTokenizer()


#: What some Treebank rule rewrites: quotes, punctuation it splits off, brackets,
#: ``--``, ``...``, a final period and the contractions it cuts ("cannot" → can not).
#: A text with none of these comes out of the tokeniser exactly as ``str.split()``.
_TREEBANK_TOUCHES = re.compile(
    r"""["'`;@#$%&?!()\[\]{}<>:,]|--|\.\.\.|\.\s*$|(?i:cannot|gimme|gonna|gotta|lemme|wanna|whaddya|whatcha)"""
)


#: The characters Treebank only pads with spaces, wherever they are: in a word with no
#: other touch (and no period to end the text with) they are all that cuts it.
_PADDED = re.compile(r"[;@#$%&?!()\[\]{}<>]")
_BEYOND_PADDING = re.compile(r"""["'`:,]|--|\.\.\.|(?i:cannot|gimme|gonna|gotta|lemme|wanna|whaddya|whatcha)""")
#: Every character ``str.isspace()`` calls whitespace (what ``str.split()`` cuts at).
_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)


@cache
def _end_space() -> str:
    """The whitespace Treebank's end-of-text period rule looks past (the ``\\s*$`` after the period), asked
    of the installed tokeniser: NLTK 3.10 matches its rules with the ``regex`` module, whose ``\\s``
    leaves out the separators U+001C–U+001F that ``str.split()`` cuts at (``"a.\\x1c"`` is one token)."""
    tokenizer = _treebank()
    return "".join(c for c in _WHITESPACE if tokenizer.tokenize("a." + c) == ["a", "."])


@cache
def _final_period() -> re.Pattern[str]:
    """Where Treebank's end-of-text period rule can cut a word with no other touch: a period followed
    only by closing brackets and :func:`_end_space` (a period inside, as in an e-mail address, is left alone)."""
    return re.compile(rf"\.[\])}}>]*[{re.escape(_end_space())}]*$")


def _last_word(pieces: list[str]) -> int:
    """The index of the last piece (of a text cut at single spaces) that Treebank's end-of-text rules
    see as a word: one holding more than :func:`_end_space` (a piece of U+001C alone makes no token
    but keeps the period rule off the word before it)."""
    end_space = _end_space()
    return max((i for i, piece in enumerate(pieces) if piece.strip(end_space)), default=-1)


def treebank_tokens(text: str) -> list[str]:
    """Exactly ``TreebankWordTokenizer().tokenize(text)``, computed a word at a time.

    Treebank's rules rewrite characters and the single space around a word;
    none looks past that space. Cut at single spaces, each word is therefore
    tokenised on its own with its context: a space before it unless it opens
    the text, and after it a space and a stand-in word (whose token is then
    dropped) unless only whitespace follows, so that the end-of-text rules (a
    final period, a final comma) apply only to the last word. Words repeat
    far more than texts do, and each is tokenised once. A text no rule
    touches is split on whitespace directly.
    """
    if not _TREEBANK_TOUCHES.search(text):
        return text.split()
    pieces = text.split(" ")
    last = _last_word(pieces)
    tokens: list[str] = []
    for index, piece in enumerate(pieces):
        if piece and not piece.isspace():  # a piece of line breaks or tabs alone makes no token
            tokens.extend(_word_tokens(piece, index == 0, index == last))
    return tokens


@lru_cache(maxsize=1 << 16)
def _word_tokens(word: str, opens_text: bool, ends_text: bool) -> tuple[str, ...]:
    """The Treebank tokens of one word (it may hold line breaks or tabs) in its place in a text."""
    if not _TREEBANK_TOUCHES.search(word):
        return tuple(word.split())
    if not _BEYOND_PADDING.search(word) and not (ends_text and _final_period().search(word)):
        return tuple(_PADDED.sub(r" \g<0> ", word).split())
    tokens = _treebank().tokenize(("" if opens_text else " ") + word + ("" if ends_text else " a"))
    return tuple(tokens if ends_text else tokens[:-1])


def treebank_search_tokens(text: str | None, length: int) -> tuple[Unit, ...]:
    """Tokens as nlpsandbox-client 4.3 finds them, as offsets from the annotation's start.

    NLTK's Treebank tokeniser cuts the annotation's ``text`` (whatever its length); each token is
    then searched for in the text from the end of the previous one. Treebank
    rewrites double quotes as ``````/``''``, which the search does not find: its
    -1 then moves the token one character before the previous token's end
    (before the annotation itself when it opens with a quote).
    """
    return _treebank_offsets(text or "")


def _treebank_search_many(texts: list[str]) -> TokenArrays:
    """:func:`treebank_search_tokens` of many texts at once (each as long as it is), the same tokens.

    Most annotation texts hold only letters, digits, ``/ - .``, the characters Treebank pads
    (``;@#$%&?!()[]{}<>``), commas, colons and spaces (:data:`_SIMPLE`, a letter that is not ASCII read as
    ``a`` and a line break as a space: :func:`_as_plain`). Unless a rule beyond these can
    meet them (a ``--``, a ``...``, a contraction, a period ending the text before closing brackets
    and spaces, two commas or colons in a row), each padded character is a token, and so is a comma or
    colon not followed by a digit; each run of the other characters between spaces is a token, where
    it stands. Joined a line each, they are cut by numpy over their bytes; every other text is cut on
    its own.
    """
    import numpy as np

    classes = _byte_classes()
    as_plain = _as_plain()
    shapes = [text if text.isascii() and "\n" not in text else text.translate(as_plain) for text in texts]
    simple = list(map(_SIMPLE.fullmatch, shapes))
    chosen = list(compress(shapes, simple))
    joined = "\n".join(chosen)
    codes = np.frombuffer(joined.encode("ascii"), np.uint8)
    breaks = np.flatnonzero(codes == _NEWLINE)
    # a comma or colon is cut off unless a digit follows it (1,000 and 10:30 stay whole)
    comma = classes["comma"][codes]
    before_digit = np.concatenate((classes["digit"][codes[1:]], [False]))
    word = classes["word"][codes] | (comma & before_digit)
    padded = classes["padded"][codes] | (comma & ~before_digit)
    starts = np.flatnonzero(padded | (word & ~np.concatenate(([False], word[:-1]))))
    ends = np.flatnonzero(padded | (word & ~np.concatenate((word[1:], [False])))) + 1
    owner = np.searchsorted(breaks, starts)  # the chosen text each token is in
    apart = np.zeros(len(chosen), bool)
    apart[_beyond_padding(chosen, joined, codes, breaks)] = True
    kept = ~apart[owner]
    place = np.flatnonzero(np.fromiter(map(bool, simple), bool, len(texts)))  # the chosen texts' places
    first = np.concatenate(([0], breaks + 1))  # where each chosen text starts in ``joined``
    owner = owner[kept]
    cut_here = (np.bincount(owner, minlength=len(chosen))[~apart], starts[kept] - first[owner], (ends - starts)[kept])
    other = np.ones(len(texts), bool)
    other[place[~apart]] = False
    others = np.flatnonzero(other)
    cut_apart = tokens_as_arrays([_treebank_offsets(texts[i]) for i in others.tolist()])
    return in_text_order([(place[~apart], cut_here), (others, cut_apart)], len(texts))


@cache
def _as_plain() -> dict[int, str]:
    """A translation table that writes as ``a`` each Latin letter outside ASCII that Treebank reads as it reads ``a``
    (``Zoë``, ``Núñez``, ``Ngọc`` cut as ``Zoa``, ``Naaez``, ``Ngac``: the same characters, the same tokens), and a
    line break as a space (an address over two lines).

    Treebank's rules name characters (quotes, brackets, punctuation), and where they name classes, a letter is
    what ``a`` is: a word character (``\\b`` of the contractions), not a digit (the comma rule's ``\\d``),
    not whitespace; a line break is what a space is (``\\s``, and ``str.split``) but to the rules that name a
    space, which all need a quote, which these texts lack. The one way a letter is read otherwise is ignoring
    case, in the contractions (``cannot``, ``gimme``): a letter some case mapping turns into ASCII (``İ``, ``ı``,
    ``ſ``; Python's ``re`` matches them against ``i`` and ``s``) is left out, and such a text is cut on its own.
    A contraction that ``a`` would make (``wännä`` read as ``wanna``) only sends the text to be cut on its own.
    Combining marks are not letters: a text holding one is cut on its own too."""
    latin = [*range(0xC0, 0x250), *range(0x1E00, 0x1F00)]
    table = {
        code: "a"
        for code in latin
        if (letter := chr(code)).isalpha()
        and not any(c.isascii() for c in letter.lower() + letter.upper() + letter.casefold())
    }
    return table | {ord("\n"): " "}


#: Texts whose every character Treebank leaves alone or pads, spaces included (see :func:`_treebank_search_many`).
_SIMPLE = re.compile(r"[0-9A-Za-z/.\-;@#$%&?!()\[\]{}<>,: ]+")
_NEWLINE, _PERIOD = ord("\n"), ord(".")
#: What may follow a final period for Treebank's rule: closing brackets, then spaces.
_AFTER_PERIOD = " ])}>"
#: The bytes of each class the batch cut reads (:func:`_byte_classes`).
_CLASSES = {
    "word": b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz/.-",
    "digit": b"0123456789",
    "comma": b",:",
    "padded": b";@#$%&?!()[]{}<>",
    "after_period": _AFTER_PERIOD.encode(),
}


@cache
def _byte_classes() -> dict[str, np.ndarray]:
    """For each class of :data:`_CLASSES`, a table of 256 flags: whether a byte is in it. Made on the first batch:
    numpy is loaded then, not when a profile is chosen."""
    import numpy as np

    tables = {}
    for name, members in _CLASSES.items():
        tables[name] = np.zeros(256, bool)
        tables[name][list(members)] = True
    return tables


def _beyond_padding(texts: list[str], joined: str, codes: np.ndarray, breaks: np.ndarray) -> list[int]:
    """Which of ``texts`` (``joined`` a line each, as ``codes``; ``breaks`` where the lines end) a rule beyond
    padding and commas may touch: one holding ``--``, ``...``, a contraction (ignoring case), or two commas
    or colons in a row (Treebank's comma rule takes the second as the character after the first), or whose
    last character but closing brackets and spaces is a period."""
    found = [
        at
        for text, pieces in ((joined, ("--", "...")), (joined.lower(), _CONTRACTION_WORDS))
        for piece in pieces
        for at in _occurrences(text, piece)
    ]
    import numpy as np

    classes = _byte_classes()
    comma = classes["comma"][codes]
    found += np.flatnonzero(comma[:-1] & comma[1:]).tolist()
    apart = np.searchsorted(breaks, found).tolist()
    last = codes[np.append(breaks, len(codes)) - 1] if texts else codes
    apart += np.flatnonzero(last == _PERIOD).tolist()
    for index in np.flatnonzero(classes["after_period"][last]).tolist():
        if texts[index].rstrip(_AFTER_PERIOD).endswith("."):
            apart.append(index)
    return apart


def _occurrences(text: str, piece: str) -> Iterator[int]:
    """Where ``piece`` starts in ``text``, overlapping occurrences included."""
    at = text.find(piece)
    while at >= 0:
        yield at
        at = text.find(piece, at + 1)


def _treebank_offsets(text: str) -> tuple[Unit, ...]:
    """(offset in ``text``, length) of each token found as nlpsandbox-client searches for it.

    Found a word at a time (cut at single spaces, as :func:`treebank_tokens`
    cuts) while every word's tokens tile it: found in order with only
    whitespace between and after them, so that a search from the previous
    token's end cannot land anywhere else. A word whose tokens do not tile it
    (Treebank rewrote a quote) sends the whole text through the search itself.

    A text that only padding rules touch (a phone number's brackets, an
    e-mail's ``@``; or none at all) is cut directly: each padded character is a
    token, and so is each run of other characters between whitespace. (Scoring
    cuts most texts many at a time, :func:`_treebank_search_many`; the texts it
    leaves come here.)
    """
    if _only_padding(text):
        words = text.split()
        if _PADDED_CHARACTERS.isdisjoint(text) and " ".join(words) == text:  # words one space apart
            spaced, position = [], 0
            for word in words:
                spaced.append((position, len(word)))
                position += len(word) + 1
            return tuple(spaced)
        return tuple((m.start(), m.end() - m.start()) for m in _PADDED_OR_WORD.finditer(text))
    pieces = text.split(" ")
    last = _last_word(pieces)
    found: list[Unit] = []
    position = 0
    for index, piece in enumerate(pieces):
        if piece and not piece.isspace():
            offsets = _word_offsets(piece, index == 0, index == last)
            if offsets is None:
                return _searched(text)
            if position:
                found.extend([(position + offset, length) for offset, length in offsets])
            else:
                found.extend(offsets)
        position += len(piece) + 1
    return tuple(found)


def _only_padding(text: str) -> bool:
    """Whether no Treebank rule but padding touches ``text``: ``_BEYOND_PADDING`` finds nothing and
    ``_final_period()`` does not match; said with string methods first, several times faster than the
    regexes. Every contraction holds one of ``_CONTRACTION_PAIRS``, and no character but those
    letters matches them ignoring case, so the contractions are searched for only in a text that
    holds one."""
    if not _QUOTES_COLON_COMMA.isdisjoint(text) or "--" in text or "..." in text:
        return False
    if text.rstrip(_end_space()).rstrip("])}>").endswith("."):
        return False
    lowered = text.lower()
    return not (any(pair in lowered for pair in _CONTRACTION_PAIRS) and _CONTRACTIONS.search(text))


_QUOTES_COLON_COMMA = frozenset("\"'`:,")
_CONTRACTION_WORDS = ("cannot", "gimme", "gonna", "gotta", "lemme", "wanna", "whaddya", "whatcha")
_CONTRACTIONS = re.compile(f"(?i:{'|'.join(_CONTRACTION_WORDS)})")
_CONTRACTION_PAIRS = ("nn", "mm", "tt", "dd", "tch")
_PADDED_CHARACTERS = frozenset(";@#$%&?!()[]{}<>")
_PADDED_OR_WORD = re.compile(rf"{_PADDED.pattern}|[^\s{_PADDED.pattern[1:-1]}]+")


@lru_cache(maxsize=1 << 16)
def _word_offsets(word: str, opens_text: bool, ends_text: bool) -> tuple[Unit, ...] | None:
    """Where the Treebank tokens of one word sit in it, or None when they do not tile it."""
    found: list[Unit] = []
    position = 0
    for token in _word_tokens(word, opens_text, ends_text):
        at = word.find(token, position)
        if at < 0 or (at > position and not word[position:at].isspace()):
            return None
        found.append((at, len(token)))
        position = at + len(token)
    if position < len(word) and not word[position:].isspace():
        return None
    return tuple(found)


def _searched(text: str) -> tuple[Unit, ...]:
    """Each Treebank token searched for in ``text`` from the end of the previous one, as the client does."""
    found: list[Unit] = []
    position = 0
    for token in treebank_tokens(text):
        position = text[position:].find(token) + position
        found.append((position, len(token)))
        position += len(token)
    return tuple(found)


treebank_search_tokens.many = _treebank_search_many  # type: ignore[attr-defined]
