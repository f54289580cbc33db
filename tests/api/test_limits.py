"""The tool API's bounds through HTTP: request body size (413 problems) and the note cache's bytes."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc

import httpx
import pytest

from nlpbench.api.tool import MAX_BODY_BYTES, create_app, create_deidentifier_app
from tests.toolkit import NOTE, AsgiClient, RegexPhi, served

LIMIT = 4096
JSON = {"content-type": "application/json"}


def note_body(text: str, identifier: str = "n-1") -> bytes:
    return json.dumps({"note": {**NOTE, "identifier": identifier, "text": text}}).encode()


def assert_413(response: httpx.Response, limit: int = LIMIT) -> None:
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {
        "title": "Content Too Large",
        "status": 413,
        "detail": f"the request body is over the {limit} bytes this service accepts",
        "type": "about:blank",
    }


def test_the_default_limit_refuses_a_20_mb_note_on_a_real_server():
    body = note_body("x" * (20 * 2**20))
    with served(create_app(RegexPhi())) as url:
        response = httpx.post(f"{url}/api/v1/textDateAnnotations", content=body, timeout=60)
        assert_413(response, MAX_BODY_BYTES)
        fits = httpx.post(f"{url}/api/v1/textDateAnnotations", content=note_body("On 12/26/2020." * 1000), headers=JSON)
        assert fits.status_code == 200 and len(fits.json()["textDateAnnotations"]) == 1000


@pytest.mark.parametrize("factory", [create_app, create_deidentifier_app])
def test_a_declared_length_over_the_limit_is_refused_on_every_path(factory):
    client = AsgiClient(factory(RegexPhi(), max_body_bytes=LIMIT))
    body = note_body("x" * LIMIT)
    for path in ("/api/v1/textDateAnnotations", "/api/v1/deidentifiedNotes", "/api/v1/tool", "/api/v1/nothing"):
        assert_413(client.post(path, content=body))
    assert client.post("/api/v1/tool", content=b"{}").status_code == 405  # a small body is routed as usual


def test_a_chunked_body_is_refused_once_it_passes_the_limit_without_reading_the_rest():
    """A body of unknown length that never ends: the app stops reading right after the limit."""
    app = create_app(RegexPhi(), max_body_bytes=LIMIT)
    chunk, sent = b"x" * 1000, 0

    async def endless():
        nonlocal sent
        while True:
            sent += 1
            yield chunk

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://tool") as client:
            return await client.post("/api/v1/textDateAnnotations", content=endless())

    assert_413(asyncio.run(post()))
    assert sent <= LIMIT // len(chunk) + 2


def test_a_chunked_body_over_the_limit_on_a_real_server():
    def chunks():
        for _ in range(64):
            yield b"x" * 1024

    with served(create_app(RegexPhi(), max_body_bytes=LIMIT)) as url:
        response = httpx.post(f"{url}/api/v1/textDateAnnotations", content=chunks())
        assert "content-length" not in response.request.headers
        assert_413(response)
        small = note_body("On 12/26/2020.")
        fits = httpx.post(f"{url}/api/v1/textDateAnnotations", content=iter([small[:10], small[10:]]), headers=JSON)
        assert fits.status_code == 200 and fits.json()["textDateAnnotations"][0]["text"] == "12/26/2020"


def dates_note(i: int, dates: int = 400) -> str:
    """A note of its own with ``dates`` dates (each a cached annotation)."""
    return f"Note {i}. " + " ".join(f"{1 + d % 12}/{1 + i % 28}/2020" for d in range(dates))


def retained(app, notes: int) -> int:
    """Bytes still allocated after ``notes`` distinct notes went through the app (tracemalloc)."""
    client = AsgiClient(app)
    client.post(
        "/api/v1/textDateAnnotations", content=note_body(dates_note(-1)), headers=JSON
    )  # warm up FastAPI's own caches
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(notes):
            response = client.post(
                "/api/v1/textDateAnnotations", content=note_body(dates_note(i), f"n-{i}"), headers=JSON
            )
            assert response.status_code == 200 and len(response.json()["textDateAnnotations"]) == 400
            assert app.state.note_cache.bytes <= app.state.note_cache.max_bytes
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_the_note_cache_stays_within_its_bytes():
    budget = 400_000
    bounded = create_app(RegexPhi(), cache_bytes=budget)
    kept = retained(bounded, 24)
    cache = bounded.state.note_cache
    assert 1 <= len(cache) < 24 and budget / 2 < cache.bytes <= budget
    assert kept < 1.5 * budget  # what the process really keeps follows the cache's own count

    unbounded = create_app(RegexPhi(), cache_bytes=10**9)
    kept_all = retained(unbounded, 24)
    assert len(unbounded.state.note_cache) == 25  # the warm-up note too
    assert kept_all > 4 * kept  # without the bound the same notes keep far more
    assert 0.5 < kept_all / unbounded.state.note_cache.bytes < 2  # the estimate is close to the real size


def test_a_note_larger_than_the_cache_is_answered_but_not_kept():
    app = create_app(RegexPhi(), cache_bytes=10_000)
    client = AsgiClient(app)
    response = client.post("/api/v1/textDateAnnotations", content=note_body(dates_note(1)), headers=JSON)
    assert response.status_code == 200 and len(response.json()["textDateAnnotations"]) == 400
    assert len(app.state.note_cache) == 0 and app.state.note_cache.bytes == 0
