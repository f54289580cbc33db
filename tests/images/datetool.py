"""A date annotator of the standard library only: what the test images run (their Python has nothing else).

``python datetool.py [ATTACK_STORE ATTACK_MARKER]`` serves the NLP Sandbox tool
API 1.2.0 on ``$PORT`` (8080 by default) as a ``nlpsandbox:date-annotator``:
dates written ``MM/DD/YYYY`` are found by a regular expression. It is the tool
of an OCI image a team submits in the tests of podman.
"""

from __future__ import annotations

import json
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b")
TOOL = {
    "name": "image-date",
    "version": "1.0.0",
    "license": "apache-2.0",
    "repository": "github:nlpbench/image-date",
    "description": "Dates written MM/DD/YYYY, from an OCI image",
    "author": "nlpbench tests",
    "authorEmail": "tests@example.org",
    "url": "https://example.org/image-date",
    "type": "nlpsandbox:date-annotator",
    "apiVersion": "1.2.0",
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status: int, body: object, content_type: str = "application/json") -> None:
        data = json.dumps(body).encode() if content_type == "application/json" else body
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/":
            self.send_response(302)
            self.send_header("location", "/api/v1/tool")
            self.send_header("content-length", "0")
            self.end_headers()
        elif self.path == "/api/v1/healthCheck":
            self.answer(200, {"status": "pass"})
        elif self.path == "/api/v1/tool":
            self.answer(200, TOOL)
        elif self.path == "/api/v1/tool/dependencies":
            self.answer(200, {"tools": []})
        elif self.path.startswith("/api/v1/ui"):
            self.answer(200, b"<html><body>image-date</body></html>", "text/html")
        else:
            self.answer(404, {"title": "Not Found", "status": 404})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if self.path != "/api/v1/textDateAnnotations":
            self.answer(404, {"title": "Not Found", "status": 404})
            return
        text = body["note"]["text"]
        found = [
            {"start": m.start(), "length": len(m.group()), "text": m.group(), "dateFormat": "MM/DD/YYYY",
             "confidence": 95.0}
            for m in DATE.finditer(text)
        ]  # fmt: skip
        self.answer(200, {"textDateAnnotations": found})

    def log_message(self, *args) -> None:
        pass


ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8080"))), Handler).serve_forever()
