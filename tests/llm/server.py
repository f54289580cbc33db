"""A local OpenAI-compatible chat-completions server for the tests: deterministic answers, usage, and faults.

``openai_app(answer)`` is a FastAPI app serving ``POST /v1/chat/completions``:
the user message (the note) goes to ``answer(note) -> entities`` and the reply
is ``{"entities": entities}`` as the message content, with ``usage`` of
``prompt_tokens`` = characters of all messages // 4 and ``completion_tokens``
= characters of the content // 4. Faults, each set on ``app.state``:

- ``rate_limits``: answer this many requests 429 with ``Retry-After: 1`` first;
- ``malformed``: answer content that is not JSON;
- ``reject_schema``: answer 400 to a request with ``response_format``;
- ``fenced``: wrap the JSON in a Markdown code fence, as chat models do.

``app.state.calls`` records each request's body. ``python -m tests.llm.server --port PORT`` serves it (:func:`main`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

#: The dates and titled names :func:`regex_entities` finds.
DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b")
TITLED = re.compile(r"\b(?:Ms|Mr|Dr)\. ([A-Z][a-z]+(?: [A-Z][a-z]+)?)")


def regex_entities(note: str) -> list[dict[str, str]]:
    """Dates (MM/DD/YYYY) and the names after Ms., Mr. or Dr., each listed once, in order of first occurrence."""
    found = [("date", m.group()) for m in DATE.finditer(note)] + [("person_name", m[1]) for m in TITLED.finditer(note)]
    return [{"text": text, "type": label} for label, text in dict.fromkeys(found)]


def openai_app(answer: Callable[[str], list[dict[str, str]]] = regex_entities) -> FastAPI:
    app = FastAPI()
    app.state.calls = []
    app.state.rate_limits = 0
    app.state.malformed = False
    app.state.reject_schema = False
    app.state.fenced = False

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        app.state.calls.append(body)
        if app.state.rate_limits > 0:
            app.state.rate_limits -= 1
            return JSONResponse({"error": {"message": "slow down"}}, status_code=429, headers={"Retry-After": "1"})
        if app.state.reject_schema and "response_format" in body:
            return JSONResponse({"error": {"message": "response_format is not supported"}}, status_code=400)
        note = next(m["content"] for m in body["messages"] if m["role"] == "user")
        content = json.dumps({"entities": answer(note)})
        if app.state.malformed:
            content = content[: len(content) // 2]
        elif app.state.fenced:
            content = f"```json\n{content}\n```"
        prompt_chars = sum(len(m["content"]) for m in body["messages"])
        return {
            "id": f"chatcmpl-{len(app.state.calls)}",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_chars // 4,
                "completion_tokens": len(content) // 4,
                "total_tokens": prompt_chars // 4 + len(content) // 4,
            },
        }

    return app


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.llm.server [--port PORT]``: :func:`openai_app` on 127.0.0.1 until stopped, as the
    how-to of LLM tools on the platform (``docs/how-to/llm-on-the-platform.md``) runs it."""
    import argparse

    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m tests.llm.server", description=main.__doc__)
    parser.add_argument("--port", type=int, default=18431, help="the port to listen on (default 18431)")
    uvicorn.run(openai_app(), host="127.0.0.1", port=parser.parse_args(argv).port, log_level="warning")


if __name__ == "__main__":
    main()
