"""``nlpbench llm``: what serving an LLM endpoint as a tool uses — its prompt templates."""

from __future__ import annotations

import typer

llm_app = typer.Typer(help="LLM endpoints as NLP Sandbox tools: the prompt templates `serve --llm` can use.")


@llm_app.command("templates")
def templates() -> None:
    """List the prompt templates by name: version, SHA-256 (part of a result's reproducibility), types asked for.

    A template is a pair of data files (NAME.json: version, types, the answer's
    JSON schema; NAME.txt: the system prompt); `nlpbench serve --llm URL
    --model NAME --template NAME` asks a model with one.
    """
    from nlpbench.annotators.llm import prompts

    for name in prompts.names():
        template = prompts.load(name)
        typer.echo(f"{name}\t{template.version}\tsha256:{template.sha256}\t{','.join(template.types)}")


def add_commands(app: typer.Typer) -> None:
    app.add_typer(llm_app, name="llm")
