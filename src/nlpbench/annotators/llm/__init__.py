"""An LLM behind an OpenAI-compatible chat-completions endpoint as a PHI annotator (``nlpbench serve --llm``).

For each note the :class:`LLMAnnotator` looks in its answer cache
(:mod:`~nlpbench.annotators.llm.cache`, keyed by template hash, model and note
hash); on a miss it asks the model with a prompt template
(:mod:`~nlpbench.annotators.llm.prompts`) through a rate-limited client
(:mod:`~nlpbench.annotators.llm.client`), parses the mentions it lists, and
places each at every occurrence in the note
(:mod:`~nlpbench.annotators.llm.grounding`). Overlapping placements are
resolved as for every adapter (the longest span wins:
:func:`nlpbench.annotators.adapters.annotations`). A placed mention's
confidence says how it was placed, not how sure the model was (models give
no calibrated score): :data:`CONFIDENCE`. A location, id or contact gets the
subtype the model gave when the template asks for one and it is valid, else
``other``.

Beside the annotations it keeps an :class:`~nlpbench.toolapi.account.Account`
per type — the grounding counts of that type, and the note's tokens, latency
and whether the answer was cached — which the tool sends in the
``X-Nlpbench-Account`` header. The tool's version is the template's with its
hash as SemVer build metadata (``1.0.0+3f2a…``), so the tool object, which a
result's reproducibility fields keep, names the exact prompt; so does the
tool object of the de-identifier on the model (:meth:`LLMAnnotator.deidentifier_info`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from nlpbench.annotators import Annotator, ToolInfo, adapters
from nlpbench.annotators.llm.cache import Answer, AnswerCache, answer_key
from nlpbench.annotators.llm.client import ChatClient
from nlpbench.annotators.llm.grounding import ground
from nlpbench.annotators.llm.prompts import Template, parse
from nlpbench.model import PHI_TYPES, Annotation, Document
from nlpbench.toolapi.account import Account

#: The confidence of an annotation by the stage that placed its mention.
CONFIDENCE = {"exact": 95.0, "normalised": 85.0, "fuzzy": 70.0}
#: The hex digits of the template's hash in the tool's version.
VERSION_HASH_DIGITS = 12


def tool_name(model: str) -> str:
    """``llm-`` and the model's name as a resource id: ``Qwen/Qwen2.5-7B`` → ``llm-qwen-qwen2-5-7b``."""
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return f"llm-{slug}"[:60].rstrip("-") if slug else "llm-model"


class LLMAnnotator(Annotator):
    """The PHI mentions ``client``'s model finds with ``template``, grounded; ``types`` narrows the template's."""

    def __init__(
        self,
        client: ChatClient,
        template: Template,
        cache: AnswerCache | None = None,
        types: tuple[str, ...] | None = None,
    ):
        unknown = [t for t in types or () if t not in template.types]
        if unknown:
            raise ValueError(f"prompt template {template.name} does not ask for {', '.join(unknown)}")
        self.client = client
        self.template = template
        self.cache = cache
        self.types = tuple(types or template.types)
        self.info = ToolInfo(
            name=tool_name(client.model),
            version=f"{template.version}+{template.sha256[:VERSION_HASH_DIGITS]}",
            description=(
                f"The model {client.model[:80]} at an OpenAI-compatible endpoint, asked with prompt template "
                f"{template.name} (sha256 {template.sha256}); each mention it lists placed in the note."
            )[:280],
            license="none",
        )

    def deidentifier_info(self) -> ToolInfo:
        """The tool object of the de-identifier that finds PHI with this model (``serve --annotator deidentifier
        --llm``): ``…-deidentifier``, this annotator's version, so that it too names the exact prompt."""
        return ToolInfo(
            name=f"{self.info.name[:47].rstrip('-')}-deidentifier",
            version=self.info.version,
            description=(
                f"De-identifies clinical notes with the PHI mentions the model {self.client.model[:60]} at an "
                f"OpenAI-compatible endpoint lists, asked with prompt template {self.template.name} "
                f"(sha256 {self.template.sha256}), each placed in the note."
            )[:280],
            license="none",
        )

    def annotate(self, note: Document) -> list[Annotation]:
        return self.annotate_accounted(note)[0]

    def annotate_accounted(self, note: Document) -> tuple[list[Annotation], Mapping[str, Account]]:
        text = note.text or ""
        answer, cached = self._answer(text)
        grounded = ground(text, parse(answer.content, self.template, self.client.model))
        found = [
            adapters.Found(p.start, p.end, p.label, p.subtype or _default_subtype(p.label), CONFIDENCE[p.stage])
            for p in grounded.placements
            if p.label in self.types
        ]
        usage = Account(
            tokens_in=answer.tokens_in, tokens_out=answer.tokens_out, latency_ms=answer.latency_ms, cached=cached
        )
        accounts = {label: grounded.counts.get(label, Account()) + usage for label in self.types}
        return adapters.annotations(note, found), accounts

    def _answer(self, text: str) -> tuple[Answer, int]:
        """The model's answer about ``text``, from the cache (and 1) or asked (and 0); only parsable ones kept."""
        key = answer_key(self.template.sha256, self.client.model, text)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit, 1
        completion = self.client.complete(
            self.template.messages(text),
            temperature=self.template.temperature,
            response_format=self.template.response_format(),
        )
        answer = Answer(completion.content, completion.tokens_in, completion.tokens_out, completion.latency_ms)
        parse(answer.content, self.template, self.client.model)  # a malformed answer is refused, never cached
        if self.cache is not None:
            self.cache.put(key, answer)
        return answer, 0


def _default_subtype(label: str) -> str | None:
    """``other`` for a type whose 1.2.0 object requires a subtype (location, id, contact), else None."""
    return "other" if "other" in PHI_TYPES[label].subtypes else None
