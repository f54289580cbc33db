"""The ``X-Nlpbench-Account`` header, latency percentiles and price tables (issue 22 §1)."""

from __future__ import annotations

import json

import pytest

from nlpbench.toolapi.account import Account, AccountError
from nlpbench.toolapi.cost import Price, PriceError, Usage, note_account, percentile, read_prices


def test_an_account_goes_through_its_header_and_adds():
    account = Account(exact=3, normalised=1, fuzzy=0, unplaced=2, tokens_in=812, tokens_out=64, latency_ms=431)
    header = account.header()
    assert header == (
        "exact=3; normalised=1; fuzzy=0; unplaced=2; tokens-in=812; tokens-out=64; latency-ms=431; cached=0"
    )
    assert Account.parse(header) == account and (account + account).unplaced == 4 and account.placed == 4


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("exact=1", "X-Nlpbench-Account lacks normalised, fuzzy, unplaced"),
        ("exact=1; exact=2", "X-Nlpbench-Account: exact is given twice"),
        ("exact=-1", "X-Nlpbench-Account: exact is not a count"),
        ("exact=١", "X-Nlpbench-Account: exact is not a count"),  # an Arabic-Indic digit: isdigit, not ASCII
        ("John Smith=1", "X-Nlpbench-Account has a field that is not one of exact, normalised"),
        ("x" * 401, "X-Nlpbench-Account is 401 characters, over the 400 an account takes"),
    ],
)
def test_a_header_that_is_not_an_account_is_named_never_quoted(value, message):
    with pytest.raises(AccountError) as raised:
        Account.parse(value)
    assert str(raised.value).startswith(message) and "John" not in str(raised.value)


def test_a_note_counts_its_tokens_once_and_its_grounding_over_types():
    usage = Account(tokens_in=100, tokens_out=10, latency_ms=50)
    accounts = {"date": Account(exact=2) + usage, "person_name": Account(unplaced=1) + usage}
    assert note_account(accounts) == Account(exact=2, unplaced=1, tokens_in=100, tokens_out=10, latency_ms=50)
    run = Usage()
    for latency in (10, 20, 30, 40):
        run.add({"date": Account(exact=1, tokens_in=5, tokens_out=1, latency_ms=latency)})
    assert run.latency() == {50: 20, 95: 40, 99: 40} and run.per_type["date"] == Account(exact=4)
    assert run.summary(Price(1.0, 2.0)).endswith("tokens 20 in, 4 out; latency per note p50 20 ms, p95 40 ms, "
                                                 "p99 40 ms; cost $0.0000")  # fmt: skip


def test_nearest_rank_percentiles():
    values = list(range(1, 101))
    assert [percentile(values, p) for p in (50, 95, 99, 100)] == [50, 95, 99, 100]
    assert percentile([7], 99) == 7


def test_price_tables(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"m": {"input": 0.3, "output": 0.9}}}))
    price = read_prices(path)["m"]
    assert price.cost(1_000_000, 2_000_000) == pytest.approx(0.3 + 1.8)
    for bad, message in (
        ("[", "not a JSON price table"),
        ("{}", 'a price table is {"models"'),
        ('{"models": {"m": {"input": -1, "output": 1}}}', "models.m: give input and output"),
        ('{"models": {"m": {"input": true, "output": 1}}}', "models.m: give input and output"),
    ):
        path.write_text(bad)
        with pytest.raises(PriceError) as raised:
            read_prices(path)
        assert str(raised.value).startswith(f"{path}: {message}")
