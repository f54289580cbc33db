"""The batch engine computes what the one-document definitions in metrics.spans say."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.span_batch import TokenTable, batch_counts
from nlpbench.metrics.spans import SpanRules, instance_matching, whitespace_tokens
from nlpbench.model import Annotation, Span, SpanColumns
from nlpbench.profiles.spans import legacy_whitespace_tokens
from nlpbench.profiles.treebank import treebank_search_tokens

#: None: no subtype; and JSON values that are not strings: equal across types (1, true), unhashable (a list)
SUBTYPES = st.sampled_from(["city", "state", "zip", None, 1, True, ["city"], ""])


@st.composite
def annotations(draw):
    found = []
    for _ in range(draw(st.integers(0, 6))):
        start, length = draw(st.integers(0, 12)), draw(st.integers(1, 6))
        words = draw(st.lists(st.sampled_from(["a", "bb", "c"]), min_size=1, max_size=3))
        text = " ".join(words)[:length].ljust(length, "x") + draw(st.sampled_from(["", " d", "'s"]))  # misfits too
        subtype = draw(SUBTYPES)
        attributes = {} if subtype is None else {"locationType": subtype}
        found.append(Annotation("d", Span.of(start, length), "location", text, attributes))
    return found


def label_of(annotation):
    return slice_label(annotation.attributes.get("locationType"))


def slice_label(subtype):
    return subtype if isinstance(subtype, str) and subtype else "(none)"


def columns(pairs):
    return [(SpanColumns.of(gold, "locationType"), SpanColumns.of(pred, "locationType")) for gold, pred in pairs]


def oracle(gold, pred, rules, metric):
    """One document's counts straight from the definitions."""
    if metric == "token":
        gold_tokens = [t for a in gold for t in rules.tokens(a)]
        pred_tokens = [t for a in pred for t in rules.tokens(a)]
        if rules.distinct_tokens:
            gold_tokens, pred_tokens = set(gold_tokens), set(pred_tokens)
        matched = sum((Counter(gold_tokens) & Counter(pred_tokens)).values())
        return PRF(matched, len(pred_tokens) - matched, len(gold_tokens) - matched)
    return instance_matching(rules.instances(gold), rules.instances(pred), rules, metric).counts


@settings(max_examples=200)
@given(
    st.lists(st.tuples(annotations(), annotations()), min_size=1, max_size=4),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.integers(0, 3),
    st.sampled_from([whitespace_tokens, treebank_search_tokens, legacy_whitespace_tokens]),
)
def test_batch_equals_the_definitions(pairs, collapse, distinct, untyped_never_equal, tolerance, tokenize):
    rules = SpanRules(
        tokenize=tokenize,
        type_attribute="locationType",
        collapse_by_start=collapse,
        distinct_tokens=distinct,
        untyped_never_equal=untyped_never_equal,
        tolerance=tolerance,
    )
    metrics = ["instance_strict", "instance_relax", "token", "type", "hipaa"]
    batch = batch_counts(columns(pairs), rules, metrics, slice_label)
    for index, (gold, pred) in enumerate(pairs):
        for metric in metrics:
            assert batch.document(metric, index) == oracle(gold, pred, rules, metric), (metric, index)
    names = {label_of(a) for gold, pred in pairs for a in gold + pred}
    for metric in ("instance_strict", "instance_relax", "token"):
        expected: dict[str, PRF] = {}
        for gold, pred in pairs:
            for name, prf in sliced_oracle(gold, pred, rules, metric).items():
                expected[name] = expected.get(name, PRF()) + prf
        assert sum(expected.values(), PRF()) == sum((batch.document(metric, i) for i in range(len(pairs))), PRF())
        for name in names:
            assert batch.labels[metric, name] == expected.get(name, PRF()), (metric, name)


def sliced_oracle(gold, pred, rules, metric) -> dict[str, PRF]:
    """One document's counts per label: matched as a whole, TP and FN by gold label, FP by predicted label."""
    counts: dict[str, list[int]] = {}

    def add(name, kind):
        counts.setdefault(name, [0, 0, 0])[kind] += 1

    if metric == "token":
        labelled = {}
        for side, found in (("gold", gold), ("pred", pred)):
            tokens = [(t, label_of(a)) for a in found for t in rules.tokens(a)]
            if rules.distinct_tokens:
                tokens = list({t: (t, name) for t, name in reversed(tokens)}.values())[::-1]
            labelled[side] = tokens
        for token in {t for t, _ in labelled["gold"] + labelled["pred"]}:
            gold_names = [name for t, name in labelled["gold"] if t == token]
            pred_names = [name for t, name in labelled["pred"] if t == token]
            matched = min(len(gold_names), len(pred_names))
            for index, name in enumerate(gold_names):
                add(name, 0 if index >= len(gold_names) - matched else 2)  # the last gold ones, as instances pair
            for name in pred_names[matched:]:
                add(name, 1)
    else:
        matching = instance_matching(rules.instances(gold), rules.instances(pred), rules, metric)
        for g, _ in matching.pairs:
            add(label_of(g), 0)
        for p in matching.spurious:
            add(label_of(p), 1)
        for g in matching.missed:
            add(label_of(g), 2)
    return {name: PRF(*values) for name, values in counts.items()}


def vars_of(rules: SpanRules) -> dict:
    return {name: getattr(rules, name) for name in rules.__slots__}


def test_an_empty_batch_scores_zero():
    rules = SpanRules(tokenize=whitespace_tokens, type_attribute="t")
    batch = batch_counts(columns([([], [])]), rules, ["instance_strict", "token"])
    assert batch.document("instance_strict", 0) == PRF() == batch.document("token", 0)


def test_a_token_before_the_text_start_matches_nothing_in_another_note():
    # Treebank's unfound opening quote puts a token at -1 in the second note; keyed without care,
    # (note 1, start -1) is (note 0, the largest start) and would pair with a token there.
    rules = SpanRules(tokenize=treebank_search_tokens, type_attribute="t", distinct_tokens=True)
    quoted = Annotation("b", Span.of(0, 5), "x", '"Bob"')  # tokens (-1, 2) (1, 3) (3, 2)
    far = Annotation("a", Span.of(7, 2), "x", "Al")
    batch = batch_counts(columns([([far], []), ([], [quoted])]), rules, ["token"])
    assert batch.document("token", 0) == PRF(0, 0, 1)
    assert batch.document("token", 1) == PRF(0, 3, 0)


@settings(max_examples=100)
@given(st.lists(st.tuples(annotations(), annotations()), min_size=1, max_size=4), st.integers(1, 8))
def test_a_token_table_kept_across_batches_counts_as_a_fresh_one(pairs, kept):
    # texts numbered in earlier batches (and forgotten past KEPT) give each batch the same tokens
    rules = SpanRules(tokenize=treebank_search_tokens, type_attribute="locationType", distinct_tokens=True)
    texts = TokenTable(rules.tokenize)
    texts.KEPT = kept
    for pair in columns(pairs):
        shared = batch_counts([pair], rules, ["token"], slice_label, texts)
        fresh = batch_counts([pair], rules, ["token"], slice_label)
        assert shared.document("token", 0) == fresh.document("token", 0)
        assert shared.labels == fresh.labels
