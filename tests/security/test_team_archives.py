"""How a team brings its code: a source archive or an OCI image, uploaded and run where only its sandbox is.

A team uploads an archive through the platform API (``POST /archives``) with
its team key and submits its digest: a source archive with its start command
(unpacked and started inside the worker's bubblewrap sandbox), or an image
archive (run by podman with no network). A team runs only what it uploaded
itself — a digest shown on the public site must not let another team submit
the same tool as its own — uploads are bounded, and an archive whose members
try to land outside its folder lands nowhere on the host. The command line
(the organisers') uploads and submits in one step.
"""

from __future__ import annotations

import gzip
import io
import shutil
import tarfile
from pathlib import Path

import pytest

from nlpbench.api.platform import Settings, create_app
from nlpbench.runner.podman import podman_works
from tests.images.build import HERE, registry_with, tool_image
from tests.platform.conftest import arena  # noqa: F401
from tests.platform.test_worker import shown, submit
from tests.toolkit import unique_marker

START = "python3 datetool.py"
#: The team's tool: a date annotator of the standard library (a script: importing it would serve).
DATETOOL = HERE / "datetool.py"


pytestmark = pytest.mark.usefixtures("bubblewrap")


def source_archive(members: dict[str, bytes] | None = None) -> bytes:
    """A .tar.gz of the date tool's source, plus ``members`` (hostile names included, as given)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(DATETOOL, "datetool.py")
        for name, data in (members or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)  # the same bytes each time


def uploaded(arena, data: bytes, kind: str = "source", who: str = "team") -> dict:  # noqa: F811
    response = arena.call("POST", f"/archives?kind={kind}", who, content=data)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_team_uploads_its_source_and_the_worker_runs_it_in_the_sandbox(arena):  # noqa: F811
    first = uploaded(arena, source_archive())
    assert first["kind"] == "source" and first["digest"].startswith("sha256:") and first["size"] > 0
    assert uploaded(arena, source_archive())["digest"] == first["digest"]  # the same bytes, one archive
    submission = arena.submitted(archive=first["digest"], command=START)
    arena.work()
    data = arena.shown(submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["kind"] == "archive" and data["tool"]["name"] == "image-date"


def test_a_team_runs_only_what_it_uploaded(arena):  # noqa: F811
    digest = uploaded(arena, source_archive())["digest"]
    stolen = arena.submit("other", archive=digest, command=START)
    assert stolen.status_code == 404 and stolen.headers["content-type"] == "application/problem+json"
    assert stolen.json()["detail"] == f"team team-b uploaded no archive {digest}"
    as_image = arena.submit(image=digest)
    assert as_image.status_code == 400 and "is a source-archive, not a oci-archive" in as_image.json()["detail"]
    unknown = arena.submit(archive="sha256:" + "1" * 64, command=START)
    assert unknown.status_code == 404
    for body in ({"archive": digest}, {"archive": "sha256:xyz", "command": START}, {"image": "ubuntu:latest"}):
        refused = arena.submit(**body)
        assert refused.status_code == 400, body


def test_an_upload_past_its_limit_is_refused_and_nothing_is_kept(arena):  # noqa: F811
    from fastapi.testclient import TestClient

    small = TestClient(create_app(arena.store, Settings(max_archive_bytes=1000)))
    data = source_archive({"padding.bin": bytes(range(256)) * 64})
    headers = {"X-API-Key": arena.keys["team"]}
    said = small.post("/api/v1/archives?kind=source", content=data, headers=headers)
    assert (
        said.status_code == 413
        and said.json()["detail"] == "the request body is over the 1000 bytes this service accepts"
    )
    chunked = small.post("/api/v1/archives?kind=source", content=iter([data[:600], data[600:]]), headers=headers)
    assert chunked.status_code == 413
    with arena.store.session(readonly=True) as session:
        from nlpbench.store.submissions import Artifact

        assert session.query(Artifact).count() == 0
    wrong = arena.call("POST", "/archives?kind=binary", content=b"x")
    assert wrong.status_code == 400


def test_an_archive_that_reaches_outside_its_folder_reaches_nothing_of_the_host(arena, tmp_path):  # noqa: F811
    marker = unique_marker("escaped")
    hostile = {
        f"../../../../../../tmp/{marker}": b"out",
        f"/tmp/{marker}-absolute": b"out",
        "../../../../../../usr/lib/python3/dist-packages/zz-evil.pth": b"import os\n",
    }
    digest = uploaded(arena, source_archive(hostile))["digest"]
    submission = arena.submitted(archive=digest, command=START)
    arena.work()
    data = arena.shown(submission)  # GNU tar refuses the members with '..' (and says so in the tool's log)
    ended = "the tool ended before it answered GET /api/v1/healthCheck: the tool exited with status 2"
    assert (data["status"], data["reason"]) == ("FAILED", f"the tool did not start: {ended}")
    assert "Member name contains '..'" in arena.logs(submission)["tool"]["output"]["content"]
    assert not list(Path("/tmp").glob(f"{marker}*"))
    assert not Path("/usr/lib/python3/dist-packages/zz-evil.pth").exists()


def test_the_command_line_packs_uploads_and_submits_a_folder(nb, dataset, tmp_path):
    folder = tmp_path / "source"
    folder.mkdir()
    shutil.copy(DATETOOL, folder / "datetool.py")
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--archive", folder, "--command", START)
    result = nb("worker", "--until-idle", "--poll", "0.05", "--lease", "10")
    assert result.exit_code == 0, result.stderr
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    (folder / "link").symlink_to("/etc/passwd")
    refused = nb("submit", "--team", "team-a", "--task", "date", "--dataset", "notes", "--archive", folder,
                 "--command", START)  # fmt: skip
    assert refused.exit_code == 2 and refused.stderr.endswith(
        "link is not a file or a folder: pack the source yourself\n"
    )


@pytest.fixture(scope="module")
def image_archive(tmp_path_factory) -> Path:
    if (why := podman_works()) is not None:
        pytest.skip(why)
    return tool_image(tmp_path_factory.mktemp("image"))


def test_a_team_uploads_an_image_and_the_worker_runs_it_under_podman(arena, image_archive):  # noqa: F811
    digest = uploaded(arena, image_archive.read_bytes(), "image")["digest"]
    submission = arena.submitted(image=digest)
    arena.work()
    data = arena.shown(submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["kind"] == "image" and data["tool"]["name"] == "image-date"


def test_the_command_line_uploads_an_image_archive(nb, dataset, image_archive):
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--image", image_archive)
    result = nb("worker", "--until-idle", "--poll", "0.05", "--lease", "10")
    assert result.exit_code == 0, result.stderr
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]


def test_an_image_comes_only_from_a_registry_the_organisers_named(arena):  # noqa: F811
    reference = "registry.example.org/team-a/tool@sha256:" + "2" * 64
    refused = arena.submit(image=reference)
    assert refused.status_code == 403
    assert (
        refused.json()["detail"]
        == "images come from the registries the organisers named, not from registry.example.org"
    )
    arena.queue("--image-registry", "registry.example.org")
    assert arena.submit(image=reference).status_code == 201


def test_an_image_from_a_named_registry_is_pulled_by_its_digest_and_run(arena, image_archive, tmp_path):  # noqa: F811
    with registry_with(image_archive, tmp_path) as reference:
        registry = reference.split("/")[0]
        arena.queue("--image-registry", f"http://{registry}")
        submission = arena.submitted(image=reference)
        arena.work()
    data = arena.shown(submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["image"] == reference and data["tool"]["name"] == "image-date"
