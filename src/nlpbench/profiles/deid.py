"""Profiles of the de-identification task (``nlpbench score deid``).

- ``standard``: the definitions of :mod:`nlpbench.metrics.deidentified` — tokens of letters and digits,
  aligned by :class:`difflib.SequenceMatcher`; the headline is the HIPAA-token recall, the share of gold
  HIPAA PHI tokens removed or replaced. No official scorer of de-identified *text* exists to reproduce:
  the NLP Sandbox never scored its ``phi-deidentifier`` tools, and the i2b2 2014 script scores tags
  (``nlpbench score i2b2``).
"""

from __future__ import annotations

from dataclasses import dataclass

from nlpbench.profiles.base import Profile, register


@dataclass(frozen=True)
class DeidProfile(Profile):
    """How ``score deid`` counts a de-identified note."""


register(DeidProfile("deid", "standard", "Residual PHI, over-redaction, format, date shifts, alignment."))
