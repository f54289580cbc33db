"""Run a tool over a dataset: validate it, send it every note, collect its annotations.

:class:`~nlpbench.runner.client.ToolClient` speaks the NLP Sandbox 1.2.0 tool
API (asyncio and httpx, bounded concurrency, timeouts, retries with backoff)
and checks every response against the schemas; :class:`~nlpbench.runner.run.AnnotationRun`
streams notes through it, in input order, with a resumable checkpoint.

Import each name from its module: the package itself loads nothing, so that
:mod:`nlpbench.runner.limits` or :mod:`nlpbench.runner.sandbox` does not load
the client (httpx, pydantic).
"""
