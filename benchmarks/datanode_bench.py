"""The store and the data node at scale, on SQLite and PostgreSQL: import, paging, concurrent reads, memory.

    python benchmarks/datanode_bench.py [--notes 100000] [--backends sqlite,postgresql] [--clients 50]
                                        [--workers 1,2] [--seconds 20]

Needs ``wrk`` (Debian: ``apt-get install -y --no-install-recommends wrk``) for the read phase.

For each backend, in a fresh database (a SQLite file in a temporary folder; a schema of its own on
``$NLPBENCH_TEST_PG``, default the local server, dropped afterwards):

1. **import**: ``--notes`` synthetic notes with their gold go into one dataset through
   ``nlpbench.cli.dataset.import_documents`` — what ``dataset import`` and ``synth --into-store`` run
   after reading — in one transaction, every span checked. The notes are the first ``--distinct``
   notes of ``nlpbench synth`` (seed 0) repeated under new ids: generating 100,000 distinct notes
   takes Faker far longer than importing them, and the store does not care that texts repeat.
   Resident memory is sampled as the import goes (every tenth of the notes);
2. **paging**: ``nlpbench datanode serve`` runs as its own process; one client pages through every
   note with ``limit=100``, following ``links.next`` until it is empty;
3. **concurrent reads**, twice, closed loop (each client sends its next request when the last is
   answered): first ``wrk -c CLIENTS -t 1 -d SECONDS`` with a Lua script that asks for random notes
   by id (``GET …/fhir/Note/{noteId}``) and prints p50/p95/p99 from wrk's latency histogram — a
   load generator in C, cheap enough not to be what limits the rate on a small machine; then
   ``--clients`` httpx clients (asyncio, one connection each) each fetching ``--reads`` random notes,
   which costs the client about as much CPU as the server. For the wrk run, the CPU time the server
   (all its processes) and wrk spent, per request. The server's resident memory (all its processes)
   is read from ``/proc`` before and after.

There is no reference implementation to run beside it: the original data node (Connexion on
MongoDB) is not installable from a package registry.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import platform
import random
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil

from nlpbench.cli.dataset import import_documents
from nlpbench.model import Annotation, Document
from nlpbench.store import open_store
from nlpbench.synth import generate

PG_URL = os.environ.get("NLPBENCH_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
DATASET = "bench"
#: wrk's script: a random note id per request; at the end, counts and percentiles (µs) on stdout.
WRK_SCRIPT = """
math.randomseed(12345)
request = function()
  return wrk.format("GET", string.format("%sbench-%07d", PREFIX, math.random(0, NOTES - 1)))
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("requests %d\\nerrors %d\\nstatus %d\\nseconds %.6f\\n", summary.requests,
    e.connect + e.read + e.write + e.timeout, e.status, summary.duration / 1e6))
  for _, p in ipairs({50, 95, 99}) do io.write(string.format("p%d %d\\n", p, latency:percentile(p))) end
end
"""


def rss_mib(pid: int | str = "self") -> float:
    """Resident memory of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc")


def notes(count: int, distinct: list[Document]) -> Iterator[Document]:
    """``count`` notes: the distinct ones over and over, each copy under ids of its own."""
    for index, base in zip(range(count), itertools.cycle(distinct), strict=False):
        note_id = f"bench-{index:07d}"
        yield Document(
            note_id,
            base.text,
            [Annotation(note_id, a.span, a.label, a.text, a.attributes, a.confidence, a.id) for a in base.annotations],
            metadata={"patientId": f"patient-{index // 3:07d}", "noteType": base.metadata.get("noteType", "")},
        )


@contextmanager
def database(backend: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="nlpbench-bench-") as folder:
            yield f"sqlite:///{folder}/bench.db"
        return
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(PG_URL)
    schema = f"nlpbench_bench_{uuid.uuid4().hex[:10]}"
    conninfo = {"host": url.host, "port": url.port or 5432, "user": url.username, "dbname": url.database}
    with psycopg.connect(**conninfo, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(**conninfo, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def bench_import(url: str, count: int, distinct: list[Document]) -> dict:
    store = open_store(url)
    samples: list[tuple[int, float]] = []
    done = 0

    def advance(*_: object) -> None:
        nonlocal done
        done += 1
        if done % max(1, count // 10) == 0:
            samples.append((done, rss_mib()))

    start = time.perf_counter()
    imported = import_documents(store, DATASET, notes(count, distinct), "bench", advance=advance)
    seconds = time.perf_counter() - start
    store.close()
    return {
        "seconds": seconds,
        "notes": imported.summary.notes,
        "annotations": imported.summary.annotations,
        "rss": samples,
    }


def tree(pid: int) -> list[psutil.Process]:
    """A process and all its descendants (the server's workers)."""
    process = psutil.Process(pid)
    return [process, *process.children(recursive=True)]


def tree_rss_mib(pid: int) -> float:
    return sum(rss_mib(process.pid) for process in tree(pid))


def tree_cpu_seconds(pid: int) -> float:
    return sum(sum(process.cpu_times()[:2]) for process in tree(pid))


@contextmanager
def served(url: str, workers: int) -> Iterator[tuple[str, int]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "nlpbench", "datanode", "serve", "--db", url, "--port", str(port)]
    if workers > 1:  # so that the bench also runs a data node from before the option
        command += ["--workers", str(workers)]
    server = subprocess.Popen([*command, "--log-level", "warning"])
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{base}/healthCheck", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the data node did not start")
            time.sleep(0.2)
        yield base, server.pid
    finally:
        server.terminate()
        server.wait(timeout=30)


def bench_paging(base: str, count: int) -> dict:
    seen = 0
    url = f"{base}/datasets/{DATASET}/fhirStores/evaluation/fhir/Note?limit=100"
    start = time.perf_counter()
    with httpx.Client(timeout=60) as client:
        while url:
            page = client.get(url).raise_for_status().json()
            seen += len(page["notes"])
            url = page["links"]["next"]
    seconds = time.perf_counter() - start
    if seen != count:
        raise RuntimeError(f"paged through {seen} notes, expected {count}")
    return {"seconds": seconds, "pages": -(-count // 100)}


def bench_wrk(base: str, pid: int, count: int, clients: int, seconds: int) -> dict:
    """``wrk`` in a closed loop over random notes; the CPU the server and wrk spent per request, in µs."""
    prefix = f"{urlsplit(base).path}/datasets/{DATASET}/fhirStores/evaluation/fhir/Note/"
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(f'PREFIX = "{prefix}"\nNOTES = {count}\n{WRK_SCRIPT}')
        script.flush()
        command = ["wrk", "-c", str(clients), "-t", "1", "-d", f"{seconds}s", "-s", script.name, base]
        server_before, children_before = tree_cpu_seconds(pid), resource.getrusage(resource.RUSAGE_CHILDREN)
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        server_cpu = tree_cpu_seconds(pid) - server_before
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    wrk_cpu = children.ru_utime + children.ru_stime - children_before.ru_utime - children_before.ru_stime
    found = dict(re.findall(r"^(\w+) ([\d.]+)$", output, re.MULTILINE))
    requests, failed = int(found["requests"]), int(found["errors"]) + int(found["status"])
    if failed:
        raise RuntimeError(f"wrk: {failed} of {requests} requests failed or were not 2xx")
    return {
        "requests": requests,
        "per_second": requests / float(found["seconds"]),
        **{p: int(found[p]) / 1000 for p in ("p50", "p95", "p99")},
        "server_us": server_cpu / requests * 1e6,
        "wrk_us": wrk_cpu / requests * 1e6,
    }


def bench_concurrent(base: str, count: int, clients: int, reads: int) -> dict:
    rng = random.Random(0)
    plans = [[f"bench-{rng.randrange(count):07d}" for _ in range(reads)] for _ in range(clients)]
    latencies: list[float] = []

    async def client(ids: list[str]) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            for note_id in ids:
                start = time.perf_counter()
                response = await http.get(f"/datasets/{DATASET}/fhirStores/evaluation/fhir/Note/{note_id}")
                latencies.append(time.perf_counter() - start)
                response.raise_for_status()

    async def run() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(client(ids) for ids in plans))
        return time.perf_counter() - start

    seconds = asyncio.run(run())
    latencies.sort()

    def percentile(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {
        "requests": len(latencies),
        "per_second": len(latencies) / seconds,
        "p50": percentile(0.50),
        "p95": percentile(0.95),
        "p99": percentile(0.99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--distinct", type=int, default=500, help="distinct synthetic notes to repeat")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--workers", default="1", help="server processes (datanode serve --workers); several, e.g. 1,2, serve in turn"
    )
    parser.add_argument("--seconds", type=int, default=20, help="how long wrk reads")
    parser.add_argument("--reads", type=int, default=40, help="notes each httpx client reads (0: no httpx run)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk not found: apt-get install -y --no-install-recommends wrk")
    worker_counts = [int(n) for n in args.workers.split(",")]

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at start: {load()}")
    distinct = list(generate(args.distinct, 0))
    rows = []
    for backend in args.backends.split(","):
        with database(backend) as url:
            imported = bench_import(url, args.notes, distinct)
            print(f"{backend}: imported {imported['notes']} notes, {imported['annotations']} annotations "
                  f"in {imported['seconds']:.1f} s; RSS MiB by notes: "
                  + ", ".join(f"{n}: {mib:.0f}" for n, mib in imported["rss"]), flush=True)  # fmt: skip
            paging = None
            for workers in worker_counts:
                with served(url, workers) as (base, pid):
                    before = tree_rss_mib(pid)
                    if paging is None:  # one client: more workers do not make it faster
                        paging = bench_paging(base, args.notes)
                        print(f"{backend}: paged {paging['pages']} pages in {paging['seconds']:.1f} s", flush=True)
                    fast = bench_wrk(base, pid, args.notes, args.clients, args.seconds)
                    print(f"{backend}: wrk, {args.clients} connections, {workers} workers: {fast['requests']} reads, "
                          f"{fast['per_second']:.0f}/s, p50 {fast['p50']:.1f} ms, p95 {fast['p95']:.1f} ms, "
                          f"p99 {fast['p99']:.1f} ms; CPU per read: server {fast['server_us']:.0f} µs, "
                          f"wrk {fast['wrk_us']:.0f} µs; load average {load()}", flush=True)  # fmt: skip
                    concurrent = bench_concurrent(base, args.notes, args.clients, args.reads) if args.reads else None
                    after = tree_rss_mib(pid)
                if concurrent:
                    print(f"{backend}: httpx, {concurrent['requests']} reads by {args.clients} clients, "
                          f"{concurrent['per_second']:.0f}/s, p50 {concurrent['p50']:.1f} ms, "
                          f"p95 {concurrent['p95']:.1f} ms, p99 {concurrent['p99']:.1f} ms", flush=True)  # fmt: skip
                print(f"{backend}: server RSS ({workers} workers) {before:.0f} → {after:.0f} MiB", flush=True)
                rows.append((backend, imported, paging, workers, fast, concurrent, before, after))
    print(f"load average at end: {load()}")
    print()
    print("| backend | import s | import RSS MiB (10 % → 100 %) | paging s | workers | wrk reads/s | p50 ms | p95 ms "
          "| p99 ms | server µs/read | httpx reads/s | httpx p95 ms | server MiB |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for backend, imported, paging, workers, fast, concurrent, before, after in rows:
        first, last = imported["rss"][0][1], imported["rss"][-1][1]
        httpx_cells = f"{concurrent['per_second']:.0f} | {concurrent['p95']:.1f}" if concurrent else "– | –"
        print(
            f"| {backend} | {imported['seconds']:.1f} | {first:.0f} → {last:.0f} | {paging['seconds']:.1f} | "
            f"{workers} | {fast['per_second']:.0f} | {fast['p50']:.1f} | {fast['p95']:.1f} | {fast['p99']:.1f} | "
            f"{fast['server_us']:.0f} | {httpx_cells} | {before:.0f} → {after:.0f} |"
        )


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
