"""Run a tool over a dataset: validate it, send it every note, collect its annotations.

:class:`~nlpbench.runner.client.ToolClient` speaks the NLP Sandbox 1.2.0 tool
API (asyncio and httpx, bounded concurrency, timeouts, retries with backoff)
and checks every response against the schemas; :class:`~nlpbench.runner.run.AnnotationRun`
streams notes through it, in input order, with a resumable checkpoint.
"""

from nlpbench.runner.client import RetryPolicy, ToolClient, ToolError, validate_tool
from nlpbench.runner.run import AnnotationRun, RunStats

__all__ = ["AnnotationRun", "RetryPolicy", "RunStats", "ToolClient", "ToolError", "validate_tool"]
