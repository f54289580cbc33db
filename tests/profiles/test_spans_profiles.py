import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from nltk.tokenize import TreebankWordTokenizer

from nlpbench import profiles
from nlpbench.metrics.counts import PRF
from nlpbench.metrics.spans import SpanRules, cut_many, tokens_as_arrays
from nlpbench.model import Annotation, Span, phi_type
from nlpbench.profiles.spans import legacy_whitespace_tokens, round_then_f1
from nlpbench.profiles.treebank import treebank_search_tokens, treebank_tokens


def ann(start, text):
    return Annotation("n", Span.of(start, len(text)), "person_name", text)


def placed(tokenizer, annotation):
    """The tokens a tokeniser cuts, placed in the text as the metrics compare them."""
    return SpanRules(tokenize=tokenizer, type_attribute="t").tokens(annotation)


def test_treebank_tokens_follow_the_text():
    # Treebank keeps "Dr." whole and splits the possessive: Dr. | O'Neil | 's
    assert placed(treebank_search_tokens, ann(100, "Dr. O'Neil's")) == [(100, 3), (104, 6), (110, 2)]


def test_treebank_quotes_are_not_found_and_shift_one_back():
    # Treebank turns " into `` and '': str.find gives -1, so the token lands one
    # character before where the search started, as nlpsandbox-client 4.3 does:
    # say at 0; `` not found from 3 → 2; Bob found at 5; '' not found from 8 → 7.
    assert placed(treebank_search_tokens, ann(10, 'say "Bob"')) == [(10, 3), (12, 2), (15, 3), (17, 2)]
    # an opening quote at the very start of a note puts its token at -1
    assert placed(treebank_search_tokens, ann(0, '"Bob"')) == [(-1, 2), (1, 3), (3, 2)]


def test_legacy_tokens_assume_one_character_between_tokens():
    assert placed(legacy_whitespace_tokens, ann(0, "a  bc")) == [(0, 1), (2, 2)]
    assert placed(legacy_whitespace_tokens, ann(5, " a ")) == [(5, 0), (6, 1), (8, 0)]


@pytest.mark.parametrize(
    ("prf", "expected"),
    [
        (PRF(2, 1, 1), (0.67, 0.67, 0.67)),
        (PRF(5, 1, 2), (0.83, 0.71, 0.77)),  # F1 of rounded P and R: 0.7653… → 0.77
        (PRF(0, 0, 0), (0, 0, 0)),
        (PRF(0, 3, 0), (0.0, 0, 0)),
    ],
)
def test_round_then_f1(prf, expected):
    assert round_then_f1(prf, 2) == expected


def test_profiles_are_registered_and_documented():
    assert profiles.names("spans") == ["nlpsandbox", "nlpsandbox-legacy", "standard"]
    described = dict((name, doc) for name, _, doc in profiles.describe(profiles.get("spans", "nlpsandbox")))
    assert "last one read" in described["collapse_by_start"]


def test_which_rows_each_profile_reports():
    nlpsandbox, standard = profiles.get("spans", "nlpsandbox"), profiles.get("spans", "standard")
    assert nlpsandbox.metrics(phi_type("date")) == ["instance_strict", "instance_relax", "token"]
    assert nlpsandbox.metrics(phi_type("location"))[-1] == "type"
    assert standard.metrics(phi_type("date"))[-1] == "date_format"
    assert standard.metrics(phi_type("location"))[-2:] == ["type", "hipaa"]


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(LookupError, match="known: nlpsandbox, nlpsandbox-legacy, standard"):
        profiles.get("spans", "i2b2-2006")


#: Characters and pieces every Treebank rule reacts to, and plain ones it leaves alone.
TREEBANK_PIECES = [
    *"ab Z9/\n\t\"'`.,:;-()?$@!&%#[]{}<>",
    *("n't", "'s", "...", "--", "cannot", "Gonna", "wanna ", "more'n", "'tis"),
]
#: and what the fast paths cut: phone numbers, e-mails, dates, ids, names, other whitespace, letter pairs
#: of contractions
TREEBANK_ALPHABET = st.sampled_from(
    [
        *TREEBANK_PIECES,
        "2019-03-04",
        "03/04/2019",
        "365-42015",
        "Dr. Kim",
        "Anna",
        "LEMME",
        "x-",
        "4.5",
        " 'Twas",
        "d'ye",
        "(617) 555-1234",
        "a.b@c.org",
        "x²",
        "é",
        "\xa0",
        "\x1c",
        "GoNNa",
        "gımme",
        "Tch",
    ]
)


#: What the many-at-a-time cut reads (words of letters, digits, ``/ - .`` one space apart; phone numbers,
#: e-mails, dates with a comma; Latin letters outside ASCII), with the rules those characters can still meet:
#: ``--``, ``...``, a final period, contractions, and the letters that ignoring case reads as ASCII ones
#: (``İ ı ſ`` and the Kelvin sign), a combining mark, a contraction made by reading ``ä`` as ``a``; line breaks.
PLAIN_ALPHABET = st.sampled_from(
    [
        *"ab Z9/-.()@",
        *"éØäñọÿ",
        *"İıſ\u212aß",
        "e\u0301",
        "Zoë",
        "Ngọc",
        "wännä",
        "gİmme",
        "Cannöt",
        "\n",
        "Street\nBoston, MA",
        " ",
        "--",
        "...",
        "cannot",
        "Gonna",
        "wanna",
        "GoNNa",
        "gımme",
        "Tch",
        "2019-03-04",
        "Dr. Kim",
        "(617) 555-1234",
        "a.b@c.org",
        "March 4, 2019",
        ",",
        ", ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(TREEBANK_ALPHABET, max_size=12).map("".join))
def test_treebank_offsets_equal_the_tokenizer_search(text):
    # the fast paths (texts no Treebank rule touches, or only its padding rules) must agree with NLTK itself
    assert_treebank_offsets(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(PLAIN_ALPHABET, min_size=1, max_size=8).map("".join))
def test_plain_treebank_offsets_equal_the_tokenizer_search(text):
    assert_treebank_offsets(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(*(st.lists(alphabet, max_size=8).map("".join) for alphabet in (TREEBANK_ALPHABET, PLAIN_ALPHABET)))
    )
)
@example(["a,,b", "a:,b", "1,000", "10:30 a.m", "x ,y", "(617) 555-1234,", "a,.", "March 4, 2019"])
def test_many_texts_cut_at_once_are_cut_as_one_at_a_time(texts):
    # score sandbox cuts a batch's new texts together (numpy over the simple ones): the same tokens, in text order
    count, offset, length = cut_many(treebank_search_tokens, texts)
    expected = tokens_as_arrays([treebank_search_tokens(text, len(text)) for text in texts])
    assert [a.tolist() for a in (count, offset, length)] == [a.tolist() for a in expected]


@pytest.mark.parametrize("text", ["a. \x1c", "a.\x1c", "(617) 555. \x1f", "a. \xa0", "a.) \x1e\n", "a.\x1c b."])
def test_a_final_period_before_separators_the_rules_do_not_call_whitespace(text):
    # NLTK 3.10 matches its rules with the regex module, whose \s leaves out U+001C-U+001F: a period before
    # them is not final (one token "a."), though str.split() and str.isspace() call them whitespace
    assert_treebank_offsets(text)
    assert treebank_tokens(text) == TreebankWordTokenizer().tokenize(text)


def assert_treebank_offsets(text):
    expected, position = [], 0
    for token in TreebankWordTokenizer().tokenize(text):
        position = text[position:].find(token) + position
        expected.append((position, len(token)))
        position += len(token)
    assert placed(treebank_search_tokens, ann(0, text)) == expected


def test_treebank_loads_without_the_rest_of_nltk():
    # run in a fresh interpreter: the point is what gets imported
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from nlpbench.profiles.treebank import _treebank\n"
        "tokenizer = _treebank()\n"
        "assert 'nltk' not in sys.modules and 'sklearn' not in sys.modules, sorted(sys.modules)\n"
        "import nltk\n"
        "from nltk.tokenize import TreebankWordTokenizer\n"
        "assert type(tokenizer) is TreebankWordTokenizer\n"
        "assert tokenizer.tokenize('can\\'t') == ['ca', \"n't\"]\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


#: Spaces, line breaks, quotes and every character class some Treebank rule reacts to.
SENTENCE_PIECES = st.sampled_from(
    [
        *TREEBANK_PIECES,
        *'  \n\t"([<.:#',
        " \n ",
        "''",
        "``",
        "...",
        "x.",
        "'ll",
        "N'T",
        "Gimme",
        "3,36",
        ",b",
        " 't",
        "a.b@c.org",
        ".)",
    ]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(SENTENCE_PIECES, max_size=16).map("".join))
def test_word_by_word_treebank_is_treebank(text):
    from nlpbench.profiles.treebank import treebank_tokens

    assert treebank_tokens(text) == TreebankWordTokenizer().tokenize(text)
