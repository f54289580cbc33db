"""A score command loads numpy with OpenBLAS threads that sleep when idle, and leaves the environment as it was."""

from __future__ import annotations

import os
import sys

import pytest

from nlpbench.cli.common import BLAS_THREAD_TIMEOUT, sleeping_blas_threads

VARIABLE = "OPENBLAS_THREAD_TIMEOUT"


@pytest.fixture
def numpy_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a fresh command: numpy not in ``sys.modules`` (the test's own copy is put back after)."""
    monkeypatch.delitem(sys.modules, "numpy", raising=False)


@pytest.mark.usefixtures("numpy_not_loaded")
def test_set_while_numpy_may_load_and_removed_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    with sleeping_blas_threads():
        assert os.environ[VARIABLE] == BLAS_THREAD_TIMEOUT
    assert VARIABLE not in os.environ


@pytest.mark.usefixtures("numpy_not_loaded")
def test_removed_after_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    with pytest.raises(ValueError), sleeping_blas_threads():
        raise ValueError
    assert VARIABLE not in os.environ


@pytest.mark.usefixtures("numpy_not_loaded")
def test_a_value_the_user_gives_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, "20")
    with sleeping_blas_threads():
        assert os.environ[VARIABLE] == "20"
    assert os.environ[VARIABLE] == "20"


def test_nothing_set_once_numpy_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy  # noqa: F401  # OpenBLAS has read its settings: setting one now would only reach child processes

    monkeypatch.delenv(VARIABLE, raising=False)
    with sleeping_blas_threads():
        assert VARIABLE not in os.environ
