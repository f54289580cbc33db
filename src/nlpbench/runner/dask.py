"""The Dask executor: the same requests, sent from the workers of a Dask cluster.

The driver (the machine running ``nlpbench annotate``) validates the tool,
reads the notes, keeps the checkpoint and writes the output; it cuts the notes
into batches and submits each as a task. A worker sends its batch's notes to
the tool with the same :class:`~nlpbench.runner.client.ToolClient` — bounded
concurrency, timeouts, retries — and returns their annotations. Every worker
needs nlpbench installed and must reach the tool's URL.
"""

from __future__ import annotations

import asyncio
from typing import Any

from nlpbench.model import Document
from nlpbench.runner.client import ClientStats, RetryPolicy, ToolClient, ToolError


def annotate_batch(
    url: str,
    notes: list[Document],
    labels: tuple[str, ...],
    concurrency: int,
    timeout: float,
    retry: RetryPolicy,
) -> tuple[list[Document], ClientStats]:
    """Runs on a worker: the annotations of each note of the batch, in order, and the client's counts."""

    async def send() -> tuple[list[Document], ClientStats]:
        async with ToolClient(url, concurrency=concurrency, timeout=timeout, retry=retry) as client:
            documents = await asyncio.gather(*(client.annotate(note, labels) for note in notes))
            return list(documents), client.stats

    return asyncio.run(send())


async def connect(address: str, timeout: float) -> Any:
    """An asynchronous ``distributed.Client`` of the scheduler at ``address``, waiting at most ``timeout`` s."""
    try:
        from distributed import Client
    except ImportError:
        raise ToolError("the Dask executor needs distributed: pip install 'nlpbench[dask]'") from None
    try:
        return await Client(address, asynchronous=True, timeout=timeout)
    except (OSError, TimeoutError) as error:
        raise ToolError(f"cannot reach the Dask scheduler at {address}: {error}") from None
