"""Validate JSON against the official NLP Sandbox 1.2.0 OpenAPI files (YAML, ``$ref``s resolved)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")


@cache
def _load(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _retrieve(uri: str) -> referencing.Resource:
    contents = _load(Path(uri.removeprefix("file://")))
    return referencing.Resource.from_contents(contents, default_specification=referencing.jsonschema.DRAFT4)


class OfficialSpec:
    """One tool's ``openapi.yaml``: the schema of any documented response or request."""

    def __init__(self, openapi_file: Path):
        self.file = openapi_file.resolve()
        self.registry = referencing.Registry(retrieve=_retrieve)

    def _deref(self, node: Any, base: Path) -> tuple[Any, Path]:
        while isinstance(node, dict) and "$ref" in node:
            base = (base.parent / node["$ref"]).resolve()
            node = _load(base)
        return node, base

    def _operation(self, method: str, path: str) -> tuple[dict, Path]:
        paths = _load(self.file)["paths"]
        if path not in paths:
            raise KeyError(f"{path} is not in {self.file}")
        item, base = self._deref(paths[path], self.file)
        return item[method.lower()], base

    def validate_response(self, method: str, path: str, status: int, body: Any) -> None:
        operation, base = self._operation(method, path)
        response, base = self._deref(operation["responses"][str(status)], base)
        self._validate(response["content"]["application/json"]["schema"], base, body)

    def validate_request(self, method: str, path: str, body: Any) -> None:
        operation, base = self._operation(method, path)
        self._validate(operation["requestBody"]["content"]["application/json"]["schema"], base, body)

    def _validate(self, schema: dict, base: Path, body: Any) -> None:
        if "$ref" in schema:
            schema = {"$ref": (base.parent / schema["$ref"]).resolve().as_uri()}
        validator = jsonschema.Draft4Validator(schema, registry=self.registry)
        validator.validate(body)


def spec(vectors: Path, tool: str) -> OfficialSpec:
    """``tool`` is a folder of ``nlpsandbox-schemas-1.2.0/openapi``: ``phi-annotator``, ``date-annotator``…"""
    return OfficialSpec(vectors / "nlpsandbox-schemas-1.2.0" / "openapi" / tool / "openapi.yaml")
