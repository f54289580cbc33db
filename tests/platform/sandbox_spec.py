"""The OpenAPI document an NLP Sandbox example tool loads, made as openapi-generator's python-flask generator made it.

Upstream, each tool's ``server/openapi_server/openapi/openapi.yaml`` was generated from the released NLP Sandbox
schema of its API type and committed. The schemas split each API across files (``$ref: ../commons/paths/tool.yaml``);
the generator read them bundled into one document and wrote one document back, with what connexion 2 needs to route
each operation to the tool's code:

- a path item's file is put in place of its ``$ref``; every other file a ``$ref`` names becomes
  ``components.<section>.<file stem>``, referred to as ``#/components/<section>/<file stem>``, in the section of
  the place it is used in (a schema, a response, …);
- every ``operationId`` is written in snake case (``createTextDateAnnotations`` → ``create_text_date_annotations``),
  the name of the controller function, and every operation gets ``x-openapi-router-controller:
  openapi_server.controllers.<first tag in snake case>_controller``, the module that function is in.

What the generator adds besides (a ``title`` on each schema, an ``_allOf`` schema for each inline ``allOf`` member,
examples gathered onto schemas) changes nothing connexion routes or validates. The released tool schemas ask for no
security, so the generator added no ``x-apikeyInfoFunc`` or ``x-tokenInfoFunc`` and the tools' security controller
is empty: a schema that asks for security is refused. Set beside the documents the three example tools commit
upstream, those made here have the same paths, servers, operation ids and controllers and, every reference
resolved, the same schemas but for descriptions, titles, examples and the order of ``required``.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import yaml

#: The methods of an OpenAPI path item that are operations.
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class SpecError(Exception):
    """The released schema cannot be made into the tool's document (one line saying why)."""


class SchemaMissing(SpecError):
    """The vectors have no released schema of the tool's API type and version."""


def schema_source(tool: Path) -> tuple[str, str]:
    """The API type and the NLP Sandbox schemas version a tool was generated from.

    The type is the one its ``package.json`` regenerates it from (``…/nlpsandbox-schemas/<type>/latest/openapi.json``
    in the ``generate:server:latest`` script), the version its ``.nlpsandbox-version``.
    """
    script = json.loads((tool / "package.json").read_text())["scripts"]["generate:server:latest"]
    found = re.search(r"/nlpsandbox-schemas/([a-z-]+)/latest/openapi\.json", script)
    if found is None:
        raise SpecError(f"{tool.name}: package.json names no NLP Sandbox schema to generate from")
    return found.group(1), (tool / ".nlpsandbox-version").read_text().strip()


def section(where: tuple[str | int, ...]) -> str | None:
    """The ``components`` section a ``$ref`` at ``where`` (the keys from the document's root) names, as the
    generator's parser files it: by where it is used, not by the folder of the file (``Note.yaml``'s
    ``identifier`` is ``../parameters/NoteId.yaml``, a schema); ``None`` for a path item, which is put in place."""
    *_, parent, key = ("", "", *where)
    if where[:1] == ("paths",) and len(where) == 2:
        return None
    if key in ("schema", "items", "additionalProperties", "not") or parent in ("properties", "allOf", "anyOf", "oneOf"):
        return "schemas"
    if key == "requestBody":
        return "requestBodies"
    if parent in ("responses", "parameters", "headers"):
        return str(parent)
    if where[:1] == ("components",) and len(where) == 3:
        return str(where[1])
    raise SpecError(f"a $ref at {'/'.join(map(str, where))} is not one the generator's parser files")


def bundled(root: Path) -> dict[str, Any]:
    """The document of ``root`` with every ``$ref`` to another file resolved, as one document.

    A file a path item refers to is put in place of its ``$ref``; any other is added once as
    ``components.<section>.<file stem>`` (:func:`section`; two different files of one name in one section are an
    error). Paths in ``$ref`` are relative to the file they are written in.
    """
    components: dict[str, dict[str, Any]] = {}
    sources: dict[tuple[str, str], Path] = {}

    def resolve(node: Any, base: Path, where: tuple[str | int, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, base, (*where, index)) for index, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        if "$ref" not in node or str(node["$ref"]).startswith("#"):
            return {key: resolve(value, base, (*where, key)) for key, value in node.items()}
        target = (base / node["$ref"]).resolve()
        kind = section(where)
        if kind is None:
            return resolve(yaml.safe_load(target.read_text()), target.parent, where)
        name = target.stem
        known = sources.setdefault((kind, name), target)
        if known != target:
            raise SpecError(f"components.{kind}.{name} is both {known} and {target}")
        if name not in components.setdefault(kind, {}):
            components[kind][name] = None  # a schema that refers to itself meets its name, not a loop
            content = yaml.safe_load(target.read_text())
            components[kind][name] = resolve(content, target.parent, ("components", kind, name))
        return {"$ref": f"#/components/{kind}/{name}"}

    document = resolve(yaml.safe_load(root.read_text()), root.parent, ())
    document.setdefault("components", {})
    for kind, entries in components.items():
        document["components"].setdefault(kind, {}).update(entries)
    return document


def snake_case(name: str) -> str:
    """``camelCase`` or ``PascalCase`` in snake case, as the generator names modules and functions."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def routed(document: dict[str, Any], controllers: Path) -> dict[str, Any]:
    """``document`` with each operation routed as the python-flask generator routes it to ``controllers``.

    Raises :class:`SpecError` when an operation's function is not in the controller module the generator names,
    or when the document asks for security (the generator would route it to functions these tools do not have).
    """
    functions: dict[str, set[str]] = {}
    for module in controllers.glob("*_controller.py"):
        tree = ast.parse(module.read_text())
        functions[module.stem] = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    for path, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            if "security" in operation or "security" in document:  # the document's applies to every operation
                raise SpecError(f"{method.upper()} {path} asks for security, which the tool does not implement")
            function = snake_case(operation["operationId"])
            module = f"{snake_case(operation['tags'][0])}_controller"
            if function not in functions.get(module, set()):
                raise SpecError(f"{method.upper()} {path}: {module}.py of the tool has no function {function}")
            operation["operationId"] = function
            operation["x-openapi-router-controller"] = f"openapi_server.controllers.{module}"
    return document


def generated(tool: Path) -> str:
    """The ``openapi.yaml`` of the tool in ``tool`` (a folder of the vectors' ``nlpsandbox-tools/``), made from the
    released schema of its API type in the vectors' ``nlpsandbox-schemas-<version>/openapi/<type>/``."""
    api, version = schema_source(tool)
    root = tool.parent.parent / f"nlpsandbox-schemas-{version}" / "openapi" / api / "openapi.yaml"
    if not root.is_file():
        raise SchemaMissing(f"the vectors have no {api} schema {version}")
    document = routed(bundled(root), tool / "server" / "openapi_server" / "controllers")
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
