"""The Dask executor: the same requests, sent from the workers of a Dask cluster.

The driver (the machine running ``nlpbench annotate``) validates the tool,
reads the notes, keeps the checkpoint and writes the output; it cuts the notes
into batches and submits each as a task, with the run's
:class:`~nlpbench.runner.client.ClientOptions`. A worker sends its batch's
notes to the tool with the client those options build — the same bounded
concurrency, timeouts, retries, response cap and ``--show-text`` as the local
executor — and returns their annotations. Every worker
needs nlpbench installed and must reach the tool's URL.

Lost work is bounded in time. A batch whose worker dies is run again on
another worker by the scheduler (Dask allows a task three such deaths, then
the batch fails with one line). :class:`DaskCluster` asks the scheduler every
``POLL_SECONDS`` how many workers it has: with none for ``grace`` seconds, or
a scheduler that no longer answers within ``grace``, every batch in flight
fails with one line instead of waiting for a worker forever; so does a lost
connection to the scheduler. Every failure is a
:class:`~nlpbench.runner.client.ToolError` naming the scheduler, never a
batch's notes; once one is raised, the Dask client's own complaints (its
reconnection attempts, with tracebacks) are not logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from nlpbench.model import Document
from nlpbench.runner.client import ClientOptions, ClientStats, ToolError

#: How often the driver asks the scheduler whether any worker is left.
POLL_SECONDS = 0.5


def annotate_batch(
    url: str, notes: list[Document], labels: tuple[str, ...], options: ClientOptions
) -> tuple[list[Document], ClientStats, str | None]:
    """Runs on a worker: the annotations of each note of the batch, in order, the client's counts, and None.

    The client is the one the local executor would use (:meth:`ClientOptions.client`): the same
    concurrency, timeout, retries, response cap and ``show_text``. A failure comes back as its one
    line, the third item, instead of being raised: a worker logs a task that raises with its
    arguments, and the notes' texts are among them.
    """

    async def send() -> tuple[list[Document], ClientStats]:
        async with options.client(url) as client:
            documents = await asyncio.gather(*(client.annotate(note, labels) for note in notes))
            return list(documents), client.stats

    try:
        documents, stats = asyncio.run(send())
    except ToolError as error:  # the batch's failure travels back as its third value
        return [], ClientStats(), str(error)
    except Exception as error:  # named by its type only: its message may quote a response
        return [], ClientStats(), f"Dask executor: batch from note {notes[0].id}: {type(error).__name__}"
    return documents, stats, None


async def connect(address: str, timeout: float) -> DaskCluster:
    """The cluster whose scheduler is at ``address``, waiting at most ``timeout`` s for it.

    ``timeout`` is also how long the cluster may stay without a worker (or its
    scheduler without an answer) before the batches in flight fail.
    """
    try:
        from distributed import Client
        from distributed.comm.addressing import resolve_address
    except ImportError:
        raise ToolError("the Dask executor needs distributed: pip install 'nlpbench[dask]'") from None
    try:
        resolve_address(address)  # before a Client exists: a half-built one prints tracebacks when collected
    except OSError as error:
        raise ToolError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    except ValueError as error:
        raise ToolError(
            f"--scheduler {address!r} is not a Dask scheduler address such as tcp://HOST:8786: {error}"
        ) from None
    client = Client(address, asynchronous=True, timeout=timeout)
    try:
        await client
    except (OSError, TimeoutError) as error:
        await client.close()
        raise ToolError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    return DaskCluster(client, address, grace=timeout)


class DaskCluster:
    """The driver's side of a cluster: submits batches and stops them when no worker is left to run them."""

    def __init__(self, client: Any, address: str, grace: float):
        self._client = client
        self.address = address
        self.grace = grace
        self._stopped = asyncio.Event()
        self._reason = ""
        self._watcher = asyncio.ensure_future(self._watch())
        self._quiet = _QuietOnceStopped(self._stopped)
        logging.getLogger("distributed.client").addFilter(self._quiet)

    def scheduler_info(self) -> dict[str, Any]:
        """The scheduler's description of the cluster: ``["workers"]`` maps each worker's address to it."""
        return self._client.scheduler_info()

    async def submit(self, function: Any, *arguments: Any, pure: bool = False) -> Any:
        """``function(*arguments)`` run on a worker; a ToolError when no worker is left to run it."""
        from distributed import KilledWorker
        from distributed.client import FutureCancelledError

        future = self._client.submit(function, *arguments, pure=pure)
        result = asyncio.ensure_future(future.result())
        stopped = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({result, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not result.done():
                result.cancel()
        if not result.done() or result.cancelled():
            raise ToolError(self._reason)
        try:
            return result.result()
        except FutureCancelledError:  # the client lost the scheduler before the watcher noticed
            self._stop(f"lost the connection to the Dask scheduler at {self.address}")
            raise ToolError(self._reason) from None
        except KilledWorker as error:
            raise ToolError(
                f"Dask executor: Dask gave up a batch whose worker died ({error.allowed_failures} retries allowed, "
                f"last worker {error.last_worker.address}); see the workers' logs"
            ) from None

    async def close(self) -> None:
        self._watcher.cancel()
        await asyncio.gather(self._watcher, return_exceptions=True)
        try:
            await self._client.close(timeout=self.grace)
        finally:
            logging.getLogger("distributed.client").removeFilter(self._quiet)

    async def _watch(self) -> None:
        """Ask the scheduler for its workers until it has had none, or not answered, for ``grace`` seconds."""
        alone_since = None
        while True:
            try:
                workers = await asyncio.wait_for(self._client.scheduler.ncores(), self.grace)
            except Exception as error:  # a scheduler gone or stuck: CommClosedError, OSError, TimeoutError
                self._stop(f"the Dask scheduler at {self.address} stopped answering ({type(error).__name__})")
                return
            now = time.monotonic()
            if workers:
                alone_since = None
            elif alone_since is None:
                alone_since = now
            elif now - alone_since >= self.grace:
                self._stop(f"the Dask scheduler at {self.address} has had no worker for {self.grace:g} s")
                return
            await asyncio.sleep(POLL_SECONDS)

    def _stop(self, reason: str) -> None:
        if not self._stopped.is_set():
            self._reason = f"Dask executor: {reason}; the batches in flight cannot run"
            self._stopped.set()


class _QuietOnceStopped(logging.Filter):
    """Drops the Dask client's log records once the run has stopped with its own one-line reason."""

    def __init__(self, stopped: asyncio.Event):
        super().__init__()
        self._stopped = stopped

    def filter(self, record: logging.LogRecord) -> bool:
        return not self._stopped.is_set()
