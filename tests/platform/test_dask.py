"""``nlpbench worker --scheduler``: a submission annotated from the workers of a real Dask cluster on 127.0.0.1.

The cluster is a ``LocalCluster`` of two single-threaded workers listening on
127.0.0.1; the worker command connects to its scheduler as it would to a
remote one. The scores equal those of the same tool annotated by a worker
without Dask, and the scheduler ran the runner's batches.
"""

from __future__ import annotations

import pytest

from tests.platform.test_worker import run_worker, shown, submit
from tests.toolkit import local_cluster

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(n_workers=2, threads_per_worker=1, processes=False) as local:
        yield local


def batches_run(cluster) -> int:
    prefix = cluster.scheduler.task_prefixes.get("annotate_batch")
    return 0 if prefix is None else sum(prefix.state_counts.values())


def test_a_worker_with_a_scheduler_annotates_on_dask_and_scores_as_a_local_one(nb, dataset, tool, cluster):
    before = batches_run(cluster)
    on_dask = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", tool.url)
    run_worker(nb, "--scheduler", cluster.scheduler_address)
    assert batches_run(cluster) > before
    local = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", tool.url)
    run_worker(nb)
    dask_data, local_data = shown(nb, on_dask), shown(nb, local)
    assert dask_data["status"] == local_data["status"] == "SCORED", (dask_data["reason"], local_data["reason"])
    assert dask_data["progress"] == {"done": len(dataset), "total": len(dataset)}
    assert dask_data["results"][0]["scores"] == local_data["results"][0]["scores"]


def test_an_unreachable_scheduler_fails_the_submission_with_one_line(nb, dataset, tool):
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    nb("submissions", "queue", "default", "--timeout", "2")
    run_worker(nb, "--scheduler", "tcp://127.0.0.1:9")
    data = shown(nb, submission)
    assert data["status"] == "FAILED"
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in data["reason"]
    assert "\n" not in data["reason"]
