"""Prompt templates: data files, versioned and hashed, and the parsing of what a model answers to them.

A template is two files of ``nlpbench/annotators/llm/templates/``:
``NAME.json`` (its ``name``, SemVer ``version``, ``description``, the
``types`` it asks for, the sampling ``temperature`` and the JSON ``schema``
of the answer) and ``NAME.txt`` (the system prompt). The note goes as the
user message, verbatim. A template's :attr:`Template.sha256` — of the JSON
file's bytes, a NUL byte and the text file's bytes — names exactly what was
asked, so it is part of a result's reproducibility fields and of the answer
cache's key: editing a template changes its hash and no cached answer of the
old one is reused. A changed template is a new file with a new version
(``phi-entities-v2``), so old results stay reproducible.

:func:`parse` reads the model's message: the JSON object the schema
describes, alone or inside a Markdown code fence. What cannot be read is an
:class:`~nlpbench.annotators.UpstreamError` naming the model and the size of
the message, never its text (it may quote the note).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from nlpbench.annotators import UpstreamError
from nlpbench.annotators.llm.grounding import Mention
from nlpbench.model import PHI_TYPES

DEFAULT_TEMPLATE = "phi-entities-v1"
#: Most mentions one answer may hold: more is a model that lost its way, refused before it is grounded.
MAX_MENTIONS = 5_000
_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class Template:
    """A prompt template: what to ask (``system``), for which ``types``, and the ``schema`` of the answer."""

    name: str
    version: str
    description: str
    types: tuple[str, ...]
    temperature: float
    schema: dict[str, Any]
    system: str
    sha256: str

    def messages(self, note_text: str) -> list[dict[str, str]]:
        """The chat messages asking about one note: the system prompt, then the note as the user's message."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": note_text}]

    def response_format(self) -> dict[str, Any]:
        """The OpenAI ``response_format`` asking for JSON that follows :attr:`schema`."""
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", self.name)[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": self.schema, "strict": True}}


def _folder():
    return resources.files("nlpbench.annotators.llm") / "templates"


def names() -> list[str]:
    """The names of the templates shipped, sorted."""
    return sorted(entry.name.removesuffix(".json") for entry in _folder().iterdir() if entry.name.endswith(".json"))


def load(name: str) -> Template:
    """The template called ``name``; an unknown name is a :class:`LookupError` listing the known ones."""
    if name not in names():
        raise LookupError(f"unknown prompt template {name!r}; known: {', '.join(names())}")
    meta_bytes = (_folder() / f"{name}.json").read_bytes()
    system_bytes = (_folder() / f"{name}.txt").read_bytes()
    meta = json.loads(meta_bytes)
    unknown = [t for t in meta["types"] if t not in PHI_TYPES]
    if unknown or meta["name"] != name:
        raise ValueError(f"prompt template {name}: its name or types ({', '.join(unknown)}) are not valid")
    return Template(
        name=name,
        version=meta["version"],
        description=meta["description"],
        types=tuple(meta["types"]),
        temperature=float(meta.get("temperature", 0)),
        schema=meta["schema"],
        system=system_bytes.decode("utf-8"),
        sha256=hashlib.sha256(meta_bytes + b"\0" + system_bytes).hexdigest(),
    )


def parse(content: str, template: Template, model: str) -> list[Mention]:
    """The mentions of a model's message ``{"entities": [{"text": …, "type": …, "subtype"?: …}]}``.

    An entity of a type the template did not ask for is ignored (a model may
    find an age); one without a string ``text`` or ``type``, or a message that
    is not such an object, is an :class:`~nlpbench.annotators.UpstreamError`
    (502) naming the model and the message's size only.
    """
    fenced = _FENCE.match(content)
    try:
        data = json.loads(fenced.group(1) if fenced else content)
    except (ValueError, RecursionError):
        raise _unreadable(model, content, "is not JSON") from None
    entities = data.get("entities") if isinstance(data, dict) else None
    if not isinstance(entities, list):
        raise _unreadable(model, content, 'is not an object with an "entities" array')
    if len(entities) > MAX_MENTIONS:
        raise _unreadable(model, content, f"lists {len(entities)} entities, over the {MAX_MENTIONS} allowed")
    mentions = []
    for index, entity in enumerate(entities):
        text = entity.get("text") if isinstance(entity, dict) else None
        label = entity.get("type") if isinstance(entity, dict) else None
        if not isinstance(text, str) or not isinstance(label, str):
            raise _unreadable(model, content, f"has entities[{index}] without a string text and type")
        if label not in template.types:
            continue
        subtype = entity.get("subtype")
        allowed = PHI_TYPES[label].subtypes
        mentions.append(Mention(text, label, subtype if isinstance(subtype, str) and subtype in allowed else None))
    return mentions


def _unreadable(model: str, content: str, what: str) -> UpstreamError:
    size = len(content.encode("utf-8", "surrogatepass"))
    return UpstreamError(f"model {model}: its answer ({size} bytes) {what}")
