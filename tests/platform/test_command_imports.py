"""Start-up of the platform's commands that only read: they load the store, not the tool client (httpx, pydantic),
the sandbox (psutil) or numpy, which only running, submitting or scoring needs (a site's ``site jobs`` loads no
site runner)."""

from __future__ import annotations

import pytest

from nlpbench.store import open_store
from tests.cli.test_startup_imports import imported

#: What a command that reads the store and prints needs none of.
NOT_FOR_READING = {
    "httpx",
    "pydantic",
    "numpy",
    "psutil",
    "scipy",
    "fastapi",
    "nlpbench.runner.client",
    "nlpbench.runner.sandbox",
    "sqlalchemy.dialects.postgresql",
}


@pytest.mark.parametrize(
    "argv",
    [["submissions", "list"], ["submissions", "queue", "default"], ["datanode", "keys", "list"], ["site", "jobs"]],
)
def test_a_command_that_only_reads_loads_neither_the_tool_client_nor_the_sandbox_nor_numpy(argv, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(url).close()
    unwanted = NOT_FOR_READING & imported(*argv, "--db", url)
    assert not unwanted
