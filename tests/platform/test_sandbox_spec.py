"""The OpenAPI document of an NLP Sandbox example tool, generated from a released schema
(:mod:`tests.platform.sandbox_spec`): one document whose every reference resolves, each operation routed to a
function the tool has; what cannot be generated is refused in one line."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.platform.sandbox_spec import SchemaMissing, SpecError, bundled, generated, routed, schema_source
from tests.platform.test_nlpsandbox_tools import tool_folder

#: The tools of the vectors' ``nlpsandbox-tools/``.
TOOLS = ("date-annotator-example", "phi-annotator-example", "phi-deidentifier-example")


def references(node: Any) -> list[str]:
    """Every ``$ref`` in ``node``."""
    if isinstance(node, list):
        return [ref for item in node for ref in references(item)]
    if not isinstance(node, dict):
        return []
    return [node["$ref"]] if "$ref" in node else [ref for value in node.values() for ref in references(value)]


def write(root: Path, files: dict[str, Any]) -> None:
    """Each of ``files`` (a path under ``root``: its content) written as YAML."""
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(yaml.safe_dump(content))


@pytest.mark.vectors
@pytest.mark.parametrize("name", TOOLS)
def test_a_tools_document_is_whole_and_routes_each_operation_to_its_function(name):
    tool = tool_folder(name)
    try:
        document = yaml.safe_load(generated(tool))
    except SchemaMissing as missing:
        pytest.skip(str(missing))
    for ref in references(document):
        assert ref.startswith("#/components/"), ref
        section, component = ref.split("/")[2:]
        assert document["components"][section][component] is not None, ref
    server = tool / "server"
    routes = [operation for item in document["paths"].values() for operation in item.values()]
    assert {"/healthCheck", "/tool", "/tool/dependencies"} <= set(document["paths"]) and routes
    for operation in routes:
        module = server / (operation["x-openapi-router-controller"].replace(".", "/") + ".py")
        defined = {node.name for node in ast.parse(module.read_text()).body if isinstance(node, ast.FunctionDef)}
        assert operation["operationId"] in defined


def test_a_reference_is_filed_where_it_is_used_and_a_path_item_put_in_place(tmp_path):
    write(
        tmp_path,
        {
            "api/openapi.yaml": {"openapi": "3.0.3", "paths": {"/notes": {"$ref": "paths/notes.yaml"}}},
            "api/paths/notes.yaml": {
                "get": {
                    "operationId": "listNotes",
                    "parameters": [{"$ref": "../components/parameters/Limit.yaml"}],
                    "responses": {"200": {"$ref": "../components/responses/Page.yaml"}},
                }
            },
            "api/components/parameters/Limit.yaml": {"name": "limit", "in": "query", "schema": {"type": "integer"}},
            "api/components/responses/Page.yaml": {
                "description": "a page",
                "content": {"application/json": {"schema": {"$ref": "../schemas/Page.yaml"}}},
            },
            "api/components/schemas/Page.yaml": {
                "type": "object",
                "properties": {"id": {"$ref": "../parameters/NoteId.yaml"}, "next": {"$ref": "Page.yaml"}},
            },
            "api/components/parameters/NoteId.yaml": {"type": "string"},
        },
    )
    document = bundled(tmp_path / "api" / "openapi.yaml")
    operation = document["paths"]["/notes"]["get"]
    assert operation["parameters"] == [{"$ref": "#/components/parameters/Limit"}]
    assert operation["responses"]["200"] == {"$ref": "#/components/responses/Page"}
    page = document["components"]["schemas"]["Page"]
    assert page["properties"] == {
        "id": {"$ref": "#/components/schemas/NoteId"},
        "next": {"$ref": "#/components/schemas/Page"},
    }
    assert document["components"]["schemas"]["NoteId"] == {"type": "string"}
    assert document["components"]["parameters"]["Limit"]["name"] == "limit"


def test_two_files_of_one_name_in_one_section_are_refused(tmp_path):
    write(
        tmp_path,
        {
            "api/openapi.yaml": {
                "openapi": "3.0.3",
                "components": {"schemas": {"A": {"$ref": "one/Note.yaml"}, "B": {"$ref": "two/Note.yaml"}}},
            },
            "api/one/Note.yaml": {"type": "string"},
            "api/two/Note.yaml": {"type": "integer"},
        },
    )
    with pytest.raises(SpecError, match=r"components\.schemas\.Note is both .*one/Note\.yaml and .*two/Note\.yaml"):
        bundled(tmp_path / "api" / "openapi.yaml")


def operations(**operation: Any) -> dict[str, Any]:
    """A document of one operation, ``GET /tool`` (``getTool``, tagged ``Tool``), with ``operation``'s fields."""
    return {"paths": {"/tool": {"get": {"operationId": "getTool", "tags": ["Tool"], **operation}}}}


def test_an_operation_is_routed_to_its_controller_or_refused_in_one_line(tmp_path):
    (tmp_path / "tool_controller.py").write_text("def get_tool():\n    return {}, 200\n")
    document = routed(operations(), tmp_path)
    assert document["paths"]["/tool"]["get"] == {
        "operationId": "get_tool",
        "tags": ["Tool"],
        "x-openapi-router-controller": "openapi_server.controllers.tool_controller",
    }
    (tmp_path / "tool_controller.py").write_text("def get_tool_info():\n    return {}, 200\n")
    with pytest.raises(SpecError, match=r"^GET /tool: tool_controller\.py of the tool has no function get_tool$"):
        routed(operations(), tmp_path)
    with pytest.raises(SpecError, match=r"^GET /tool asks for security"):
        routed(operations(security=[{"api_key": []}]), tmp_path)


def test_the_api_type_and_version_are_those_the_tool_was_generated_from(tmp_path):
    scripts = {
        "generate:server:latest": "openapi-generator-cli generate -g python-flask -o server -i "
        "https://nlpsandbox.github.io/nlpsandbox-schemas/date-annotator/latest/openapi.json"
    }
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    (tmp_path / ".nlpsandbox-version").write_text("1.2.0\n")
    assert schema_source(tmp_path) == ("date-annotator", "1.2.0")
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"generate:server:latest": "echo"}}))
    with pytest.raises(SpecError, match=r"package\.json names no NLP Sandbox schema"):
        schema_source(tmp_path)
