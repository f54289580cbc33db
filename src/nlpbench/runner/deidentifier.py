"""Run an NLP Sandbox ``phi-deidentifier`` over notes: check it, then de-identify the notes in order.

:func:`validate_deidentifier` is the de-identifier's counterpart of
:func:`~nlpbench.runner.client.validate_tool`: health, ``GET /tool`` of the type
``nlpsandbox:phi-deidentifier``, and one schema-valid answer for the example
note. :func:`deidentified` sends notes with at most ``window`` in flight (each
request bounded by the client's concurrency, timeouts and retries) and yields
each note's answer — a document holding the de-identified text, the tool's
annotations of it in its metadata — in the order the notes came. Messages name notes, offsets
and sizes, never text (:mod:`nlpbench.runner.client`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from nlpbench.model import Document
from nlpbench.runner.client import PROBE_NOTE, ToolCheck, ToolClient, ToolError, checked, health_and_tool

#: The tool type of a de-identifier.
DEIDENTIFIER_TYPE = "nlpsandbox:phi-deidentifier"


async def validate_deidentifier(client: ToolClient, steps: Sequence[dict[str, Any]]) -> ToolCheck:
    """Check a de-identifier before sending it data: health, ``/tool`` of type :data:`DEIDENTIFIER_TYPE`,
    and one schema-valid answer for the example note de-identified by ``steps``."""
    health, tool = await health_and_tool(client)
    if tool.type != DEIDENTIFIER_TYPE:
        raise ToolError(f"{client.url}: the tool is a {tool.type}, not a de-identifier ({DEIDENTIFIER_TYPE})")
    await client.deidentify(PROBE_NOTE, steps)
    return checked(tool, (), health)


async def deidentified(
    client: ToolClient, notes: Iterable[Document], steps: Sequence[dict[str, Any]], window: int
) -> AsyncIterator[Document]:
    """Each note de-identified by ``steps``, in the order the notes came, at most ``window`` in flight;
    the first note that fails after its retries stops the run with its :class:`ToolError`."""
    pending: deque[asyncio.Task[Document]] = deque()
    try:
        for note in notes:
            pending.append(asyncio.ensure_future(client.deidentify(note, steps)))
            if len(pending) >= window:
                yield await pending.popleft()
        while pending:
            yield await pending.popleft()
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
