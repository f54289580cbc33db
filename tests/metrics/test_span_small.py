"""The plain-Python count of small batches gives the batch engine's numbers: per metric, per document, per label."""

from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.metrics.span_batch import TokenTable, batch_counts
from nlpbench.metrics.span_small import small_counts
from nlpbench.metrics.spans import SpanRules, whitespace_tokens
from nlpbench.profiles.spans import legacy_whitespace_tokens
from nlpbench.profiles.treebank import treebank_search_tokens
from tests.metrics.test_span_batch import annotations, columns, slice_label

TOKENIZERS = st.sampled_from([whitespace_tokens, treebank_search_tokens, legacy_whitespace_tokens])
RULES = st.builds(
    SpanRules, TOKENIZERS, st.just("locationType"), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 3)
)


@settings(max_examples=300)
@given(st.lists(st.tuples(annotations(), annotations()), min_size=1, max_size=5), RULES, st.booleans())
def test_small_counts_equal_the_batch_engine(pairs, rules, sliced):
    """Collapsing, distinct tokens, untyped subtypes, tolerances 0-3 and the three tokenisers, with and without
    slices."""
    metrics = ["instance_strict", "instance_relax", "token", "type", "hipaa"]
    label = slice_label if sliced else None
    given_pairs = columns(pairs)
    batch = batch_counts(given_pairs, rules, metrics, label, TokenTable(rules.tokenize))
    small = small_counts(given_pairs, rules, metrics, label)
    for metric in metrics:
        assert small.total(metric) == batch.total(metric), metric
        for index in range(len(pairs)):
            assert small.document(metric, index) == batch.document(metric, index), (metric, index)
    assert small.labels == batch.labels
    assert small.collapsed == batch.collapsed
