"""The store and the data node at scale, on SQLite and PostgreSQL: import, paging, concurrent reads, memory.

    python benchmarks/datanode_bench.py [--notes 100000] [--backends sqlite,postgresql] [--clients 50]

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
3. **concurrent reads**: ``--clients`` clients (asyncio, one connection each) each fetch
   ``--reads`` random notes by id (``GET …/fhir/Note/{noteId}``); latency percentiles over all
   requests. The server's resident memory is read from ``/proc`` before and after.

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
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from nlpbench.cli.dataset import import_documents
from nlpbench.model import Annotation, Document
from nlpbench.store import open_store
from nlpbench.synth import generate

PG_URL = os.environ.get("NLPBENCH_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
DATASET = "bench"


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


@contextmanager
def served(url: str) -> Iterator[tuple[str, int]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "nlpbench", "datanode", "serve", "--db", url, "--port", str(port)]
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
    parser.add_argument("--reads", type=int, default=40, help="notes each client reads")
    args = parser.parse_args()

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    distinct = list(generate(args.distinct, 0))
    rows = []
    for backend in args.backends.split(","):
        with database(backend) as url:
            imported = bench_import(url, args.notes, distinct)
            print(f"{backend}: imported {imported['notes']} notes, {imported['annotations']} annotations "
                  f"in {imported['seconds']:.1f} s; RSS MiB by notes: "
                  + ", ".join(f"{n}: {mib:.0f}" for n, mib in imported["rss"]), flush=True)  # fmt: skip
            with served(url) as (base, pid):
                before = rss_mib(pid)
                paging = bench_paging(base, args.notes)
                print(f"{backend}: paged {paging['pages']} pages in {paging['seconds']:.1f} s", flush=True)
                concurrent = bench_concurrent(base, args.notes, args.clients, args.reads)
                after = rss_mib(pid)
            print(f"{backend}: {concurrent['requests']} reads by {args.clients} clients, "
                  f"{concurrent['per_second']:.0f}/s, p50 {concurrent['p50']:.1f} ms, p95 {concurrent['p95']:.1f} ms, "
                  f"p99 {concurrent['p99']:.1f} ms; server RSS {before:.0f} → {after:.0f} MiB", flush=True)  # fmt: skip
            rows.append((backend, imported, paging, concurrent, before, after))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    print()
    print("| backend | import s | import RSS MiB (10 % → 100 %) | paging s | reads/s | p50 ms | p95 ms | server MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for backend, imported, paging, concurrent, before, after in rows:
        first, last = imported["rss"][0][1], imported["rss"][-1][1]
        print(
            f"| {backend} | {imported['seconds']:.1f} | {first:.0f} → {last:.0f} | {paging['seconds']:.1f} | "
            f"{concurrent['per_second']:.0f} | {concurrent['p50']:.1f} | {concurrent['p95']:.1f} | "
            f"{before:.0f} → {after:.0f} |"
        )


if __name__ == "__main__":
    main()
