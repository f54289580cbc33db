"""The fixtures of the LLM tests: the local OpenAI-compatible test server (:mod:`tests.llm.server`)."""

from __future__ import annotations

import pytest

from tests.llm.server import openai_app
from tests.toolkit import served


@pytest.fixture
def endpoint():
    """The test server's app and its ``/v1`` URL."""
    app = openai_app()
    with served(app) as url:
        yield app, f"{url}/v1"
