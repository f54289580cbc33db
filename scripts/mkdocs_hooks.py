"""MkDocs hooks: the reference pages generated from the code when the site is built.

- ``reference/cli.md``: every command of ``nlpbench``, walked from the Typer app as click sees it
  (usage, help, arguments, options with their choices and defaults), so the page cannot drift from
  ``--help``.
- ``reference/rest/*.md``: each service's endpoints, rendered from the OpenAPI document its FastAPI
  app factory produces, with that document beside the page (``*.openapi.json``).

Nothing here needs the network: the apps are built in process on a throwaway SQLite store and
never served.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

#: Rich markup in help texts: ``[bold]word[/]`` (the only style they use).
RICH_BOLD = re.compile(r"\[bold\](.*?)\[/(?:bold)?\]")
#: page -> (title, what the service is)
SERVICES = {
    "tool": ("Tool API", "An NLP Sandbox 1.2.0 PHI annotator as `nlpbench serve --annotator phi` serves it."),
    "deidentifier": (
        "De-identifier API",
        "The NLP Sandbox de-identifier as `nlpbench serve --annotator deidentifier --phi-annotator phi` serves it.",
    ),
    "datanode": ("Data node API", "The NLP Sandbox 1.2.0 data node as `nlpbench datanode serve` serves it."),
    "platform": ("Platform API", "Submissions, queues and results as `nlpbench submissions serve` serves them."),
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated reference pages to the site."""
    files.append(File.generated(config, "reference/cli.md", content=cli_page()))
    for name, spec in openapi_documents().items():
        title, about = SERVICES[name]
        files.append(File.generated(config, f"reference/rest/{name}.md", content=rest_page(title, about, name, spec)))
        files.append(File.generated(config, f"reference/rest/{name}.openapi.json", content=json.dumps(spec, indent=2)))
    return files


# --- the command line ------------------------------------------------------------------------------


def cli_page() -> str:
    """The whole command line as one Markdown page, a section per command in the order help lists them."""
    from nlpbench.cli import build_app

    root = typer.main.get_command(build_app())
    lines = [
        "# Command line",
        "",
        "Generated from the `nlpbench` Typer app when the site is built: what `--help` prints, as a page.",
        "",
    ]
    for path, command in walk(root, ["nlpbench"]):
        lines += command_section(path, command)
    return "\n".join(lines) + "\n"


def walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    """``command`` and every command under it, depth first, with the words that call each."""
    yield path, command
    if hasattr(command, "list_commands"):  # a group
        context = command.context_class(command, info_name=path[-1])
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                yield from walk(sub, [*path, name])


def command_section(path: list[str], command: Any) -> list[str]:
    """A command's usage, help and parameters; each parameter as ``--help`` shows it (metavar, choices, default)."""
    context = command.context_class(command, info_name=" ".join(path))
    level = "#" * min(len(path) + 1, 4)
    lines = [f"{level} `{' '.join(path)}`", "", "```text", command.get_usage(context).strip(), "```", ""]
    if command.help:
        lines += [clean(command.help), ""]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option" and not p.hidden]
    if arguments:
        lines += ["| argument | required | help |", "| --- | --- | --- |"]
        for p in arguments:
            name = p.metavar or p.name.upper()
            lines.append(f"| `{name}` | {'yes' if p.required else 'no'} | {cell(getattr(p, 'help', None) or '')} |")
        lines.append("")
    if options:
        lines += ["| option | help |", "| --- | --- |"]
        for p in options:
            names, help_ = p.get_help_record(context) or (", ".join(p.opts), "")  # help says [required]
            lines.append(f"| `{names}` | {cell(help_)} |")
        lines.append("")
    return lines


def clean(text: str) -> str:
    """Help text as Markdown: click's no-rewrap markers dropped, Rich's ``[bold]…[/]`` bold, ``<`` literal."""
    text = "\n".join(line for line in text.splitlines() if line.strip() != "\b").strip()
    text = RICH_BOLD.sub(r"**\1**", text)
    return text.replace("<", "&lt;")


def cell(text: str) -> str:
    """``text`` on one line, safe inside a Markdown table cell."""
    return " ".join(clean(text).split()).replace("|", "\\|")


# --- the services -----------------------------------------------------------------------------------


def openapi_documents() -> dict[str, dict[str, Any]]:
    """Each service's OpenAPI document, from its app factory (the stores are a throwaway SQLite file)."""
    from nlpbench.annotators import REGISTRY
    from nlpbench.api import tool
    from nlpbench.api.datanode.app import create_app as datanode_app
    from nlpbench.api.platform.app import create_app as platform_app
    from nlpbench.store.engine import open_store

    phi = REGISTRY.get("phi")()
    documents = {"tool": tool.create_app(phi).openapi(), "deidentifier": tool.create_deidentifier_app(phi).openapi()}
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'openapi.db'}")
        try:
            documents["datanode"] = datanode_app(store).openapi()
            documents["platform"] = platform_app(store).openapi()
        finally:
            store.close()
    return documents


def rest_page(title: str, about: str, name: str, spec: dict[str, Any]) -> str:
    """The endpoints of an OpenAPI document as Markdown: a section per operation, then its schemas."""
    info = spec.get("info", {})
    lines = [
        f"# {title}",
        "",
        f"{about} Generated from its OpenAPI document ({info.get('title', '')} {info.get('version', '')}), "
        f"which is [beside this page]({name}.openapi.json); a running service serves the same document "
        "and its Swagger UI.",
        "",
    ]
    for path, operations in spec.get("paths", {}).items():
        for method, operation in operations.items():
            lines += operation_section(method, path, operation)
    schemas = spec.get("components", {}).get("schemas", {})
    if schemas:
        lines += ["## Schemas", ""]
        for schema_name, schema in schemas.items():
            lines += schema_section(schema_name, schema)
    return "\n".join(lines) + "\n"


def operation_section(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"## `{method.upper()} {path}`", ""]
    if operation.get("summary"):
        lines += [f"**{operation['summary']}**", ""]
    if operation.get("description"):
        lines += [operation["description"].strip(), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | description |", "| --- | --- | --- | --- | --- |"]
        for p in parameters:
            required = "yes" if p.get("required") else "no"
            lines.append(
                f"| `{p['name']}` | {p['in']} | {schema_type(p.get('schema', {}))} | {required} | "
                f"{cell(p.get('description', ''))} |"
            )
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines += [f"Request body (`{media}`): {schema_type(content.get('schema', {}))}", ""]
    responses = operation.get("responses", {})
    if responses:
        lines += ["| status | description | body |", "| --- | --- | --- |"]
        for status, response in responses.items():
            content = response.get("content", {})
            bodies = [f"`{media}`: {schema_type(c.get('schema', {}))}" for media, c in content.items()]
            lines.append(f"| {status} | {cell(response.get('description', ''))} | {'<br>'.join(bodies)} |")
        lines.append("")
    return lines


def schema_section(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [cell(schema["description"]), ""]
    properties = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", []))
        lines += ["| field | type | required | description |", "| --- | --- | --- | --- |"]
        for field, spec in properties.items():
            lines.append(
                f"| `{field}` | {schema_type(spec)} | {'yes' if field in required else 'no'} | "
                f"{cell(spec.get('description', ''))} |"
            )
        lines.append("")
    elif "enum" in schema:
        lines += ["One of " + ", ".join(f"`{value}`" for value in schema["enum"]) + ".", ""]
    return lines


def schema_type(schema: dict[str, Any]) -> str:
    """A schema in a few words: a link to a named schema, ``array of …``, a union, or the JSON type."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return " or ".join(schema_type(option) for option in schema[union])
    if schema.get("type") == "array":
        return f"array of {schema_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    return str(schema.get("type", "any"))
