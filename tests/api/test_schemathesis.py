"""Property-based API tests: schemathesis against each app's own OpenAPI document."""

from __future__ import annotations

import pytest

from nlpbench.api.tool import create_app, create_deidentifier_app
from tests.toolkit import RegexPhi

schemathesis = pytest.importorskip("schemathesis")
hypothesis = pytest.importorskip("hypothesis")

phi_schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", create_app(RegexPhi()))
deidentifier_schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", create_deidentifier_app(RegexPhi()))
SETTINGS = hypothesis.settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
)


@phi_schema.parametrize()
@SETTINGS
def test_phi_annotator(case):
    case.call_and_validate()


@deidentifier_schema.parametrize()
@SETTINGS
def test_deidentifier(case):
    case.call_and_validate()
