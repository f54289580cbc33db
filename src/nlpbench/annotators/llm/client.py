"""A client of an OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp's server, Ollama, hosted APIs).

``POST {url}/chat/completions`` with the model, the messages, the template's
temperature and, where the endpoint takes it, ``response_format`` of type
``json_schema``. :attr:`ChatClient.structured` says whether to ask for it:
``on`` always, ``off`` never, ``auto`` (the default) asks and, the first
time the endpoint refuses the request with 400 or 422, asks again without it
and stops asking (one warning in the log, naming the status only).

Rate limits are honoured: a 429 or 503 is retried after the seconds its
``Retry-After`` gives (at most ``max_wait``), else after ``2^attempt``
seconds, up to ``retries`` times; then it is an
:class:`~nlpbench.annotators.UpstreamError` with ``retry_after`` set, which
the tool answers 503 with ``Retry-After``, so its own client backs off too.
At most ``concurrency`` requests are in flight to one endpoint however many
threads ask. Every request has a ``timeout``; a response over
``max_response_bytes`` is abandoned. No message quotes what the endpoint
sent (a model's answer quotes the note): they name the model, the status and
the size. The API key, if any, is read from ``$NLPBENCH_LLM_API_KEY`` and
sent as a bearer token, never shown.

Latency is the wall time of the exchange that gave the answer, waits for
rate limits excluded, so it measures the model and not the queue before it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from nlpbench.annotators import UpstreamError

API_KEY_VARIABLE = "NLPBENCH_LLM_API_KEY"
#: The largest answer read: a note's entities take a few kilobytes.
MAX_RESPONSE_BYTES = 4 * 2**20
Structured = Literal["auto", "on", "off"]
log = logging.getLogger("nlpbench.llm")


@dataclass(frozen=True, slots=True)
class Completion:
    """The message content a model answered, its usage (``prompt_tokens``, ``completion_tokens``) and latency."""

    content: str
    tokens_in: int
    tokens_out: int
    latency_ms: int


class ChatClient:
    """Asks ``model`` at the chat-completions endpoint under ``url`` (e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        concurrency: int = 4,
        timeout: float = 120.0,
        retries: int = 4,
        max_wait: float = 60.0,
        structured: Structured = "auto",
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        transport: httpx.BaseTransport | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.url = url.rstrip("/")
        self.model = model
        self.retries = retries
        self.max_wait = max_wait
        self.structured = structured
        self.max_response_bytes = max_response_bytes
        key = os.environ.get(API_KEY_VARIABLE)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self._http = httpx.Client(timeout=timeout, limits=limits, headers=headers, transport=transport)
        self._slots = threading.BoundedSemaphore(concurrency)
        #: Requests sent, and how many of them were retried after a rate limit.
        self.requests = 0
        self.rate_limited = 0

    def close(self) -> None:
        self._http.close()

    def complete(
        self, messages: list[dict[str, str]], *, temperature: float, response_format: dict[str, Any] | None
    ) -> Completion:
        """The model's answer to ``messages``; ``response_format`` is sent as :attr:`structured` says."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if response_format is not None and self.structured != "off":
            status, data, latency = self._send({**body, "response_format": response_format})
            if status in (400, 422) and self.structured == "auto":
                log.warning("model %s: the endpoint refused json_schema output (HTTP %d); asking without it",
                            self.model, status)  # fmt: skip
                self.structured = "off"
                status, data, latency = self._send(body)
        else:
            status, data, latency = self._send(body)
        if status >= 400:
            raise UpstreamError(f"model {self.model}: the endpoint answered HTTP {status}")
        return self._completion(data, latency)

    def _send(self, body: dict[str, Any]) -> tuple[int, bytes, int]:
        """The status, body and milliseconds of the first answer that is not a rate limit."""
        for attempt in range(self.retries + 1):
            with self._slots:
                self.requests += 1
                started = time.monotonic()
                status, headers, data = self._exchange(body)
                latency = round((time.monotonic() - started) * 1000)
            if status not in (429, 503):
                return status, data, latency
            wait = self._wait(attempt, headers.get("retry-after"))
            if attempt == self.retries:
                raise UpstreamError(
                    f"model {self.model}: the endpoint is rate-limited (HTTP {status}, {attempt + 1} attempts)",
                    retry_after=max(1, round(wait)),
                )
            self.rate_limited += 1
            time.sleep(wait)
        raise AssertionError("unreachable")

    def _wait(self, attempt: int, retry_after: str | None) -> float:
        """Seconds before the next attempt: ``Retry-After`` in seconds if given, else ``2^attempt``; ≤ max_wait."""
        if retry_after and retry_after.strip().isdigit():
            return min(float(retry_after.strip()), self.max_wait)
        return min(float(2**attempt), self.max_wait)

    def _exchange(self, body: dict[str, Any]) -> tuple[int, httpx.Headers, bytes]:
        try:
            with self._http.stream("POST", f"{self.url}/chat/completions", json=body) as response:
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_response_bytes:
                        raise UpstreamError(
                            f"model {self.model}: the answer is over the {self.max_response_bytes} bytes allowed"
                        )
                    chunks.append(chunk)
                return response.status_code, response.headers, b"".join(chunks)
        except httpx.TimeoutException:
            raise UpstreamError(f"model {self.model}: no answer within the timeout") from None
        except httpx.HTTPError as error:  # its text may quote what the server sent: named by type only
            raise UpstreamError(
                f"model {self.model}: the endpoint cannot be reached ({type(error).__name__})"
            ) from None

    def _completion(self, data: bytes, latency: int) -> Completion:
        """The first choice's message and the usage of a chat-completions body."""
        try:
            parsed = json.loads(data)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past Python's stack
            raise UpstreamError(f"model {self.model}: the endpoint's answer ({len(data)} bytes) is not JSON") from None
        try:
            content = parsed["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise UpstreamError(
                f"model {self.model}: the endpoint's answer ({len(data)} bytes) has no choices[0].message.content"
            )
        usage = parsed.get("usage") if isinstance(parsed.get("usage"), dict) else {}
        return Completion(content, _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), latency)


def _count(value: Any) -> int:
    """A token count as given, 0 when it is missing or not a non-negative integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
