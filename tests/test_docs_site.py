"""The documentation site builds with ``mkdocs build --strict``, offline, and its references come from the code.

Strict mode fails the build on any warning: a broken link or anchor, a page left out of the
navigation, a docstring mkdocstrings cannot read. The build runs with every proxy pointed at a
closed port, so a theme or plugin that fetched anything (fonts, social cards) would fail it, and
the pages it writes load nothing from another host.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install '.[docs]')")
pytest.importorskip("material", reason="the docs extra is not installed (pip install '.[docs]')")
pytest.importorskip("mkdocstrings", reason="the docs extra is not installed (pip install '.[docs]')")

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, every request through it fails


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT / "src"))
    env.update({name: CLOSED for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY")})
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    return out


def page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def test_the_site_builds_strict_and_loads_nothing_from_another_host(site: Path):
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, html
        external = re.findall(r"<(?:script|link)[^>]+(?:src|href)=\"(https?://[^\"]+)\"", text)
        assert not external, (html, external)


def test_every_command_of_the_cli_has_its_section_with_its_options(site: Path):
    from nlpbench.cli import COMMANDS

    text = page(site, "reference/cli")
    for command in COMMANDS:
        assert f"nlpbench {command}</code>" in text, command
    for subcommand in ("score sandbox", "score coref", "score i2b2", "dataset import", "datanode keys create"):
        assert f"nlpbench {subcommand}</code>" in text, subcommand
    start = text.index("nlpbench score sandbox</code>")
    following = re.compile(r"nlpbench [a-z0-9 -]+</code><a class=\"headerlink\"").search(text, start + 1)
    section = text[start : following.start() if following else len(text)]  # up to the next command
    for option in ("--gold", "--pred", "--profile", "--ci", "-f, --format"):
        assert option in section, option
    assert "nlpsandbox|nlpsandbox-legacy|standard" in section  # an enum option lists its choices


def test_every_service_has_its_rest_reference_from_its_openapi(site: Path):
    endpoints = {
        "tool": ["/api/v1/tool", "/api/v1/healthCheck", "/api/v1/textDateAnnotations"],
        "deidentifier": ["/api/v1/deidentifiedNotes"],
        "datanode": ["/api/v1/datasets", "/api/v1/datasets/{datasetId}/fhirStores/{fhirStoreId}/fhir/Note"],
        "platform": ["/api/v1/submissions", "/api/v1/submissions/{submission_id}"],
    }
    for service, paths in endpoints.items():
        text = page(site, f"reference/rest/{service}")
        for path in paths:
            assert f"{path}</code>" in text, (service, path)
        assert (site / "reference" / "rest" / f"{service}.openapi.json").is_file()


def test_the_python_reference_is_generated_from_docstrings(site: Path):
    text = page(site, "reference/python")
    for name in ("nlpbench.tasks", "Report", "Document", "InputError"):
        assert name in text, name
    assert "Decorator: register <code>score(gold, pred, *, profile, **options)</code>" in text  # a docstring, rendered


def test_contributing_and_the_changelog_are_pages_of_the_site(site: Path):
    assert "What a change brings" in page(site, "contributing")
    assert "Unreleased" in page(site, "changelog")
