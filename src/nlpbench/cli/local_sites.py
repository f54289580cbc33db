"""Data sites on one machine, as ``nlpbench demo`` runs them: the centre's API in a thread, each site's runner in
another, every site talking to the centre over HTTP on 127.0.0.1 as a remote one would over HTTPS.

:func:`centre_served` serves the platform API of the centre's store on a free port while its block runs;
:func:`serve_sites` runs a :class:`~nlpbench.platform.site_runner.SiteRunner` per site, at once, until the centre
has no run left for any of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from nlpbench.cli.serve import listen
from nlpbench.platform.site_runner import SiteRunner
from nlpbench.runner.sandbox import Sandbox
from nlpbench.store import Store

#: The queue a site's runs are made in, in the site's own store.
SITE_QUEUE = "site"


@contextmanager
def centre_served(store: Store) -> Iterator[str]:
    """The base URL of the platform API serving ``store`` on a free port of 127.0.0.1, while the block runs."""
    import uvicorn

    from nlpbench.api.platform import create_app
    from nlpbench.api.server import TimedConfig

    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(TimedConfig(create_app(store), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def serve_sites(
    sites: Mapping[str, tuple[Store, str]],
    central: str,
    said: Callable[[str], None],
    sandbox: Sandbox | None = None,
) -> dict[str, int]:
    """Run each site (``{name: (its store, its key)}``) until the centre at ``central`` has no run for it, all at
    once; how many runs each ran. The first error of a site is raised once every site has stopped."""
    ran: dict[str, int] = {}
    errors: list[BaseException] = []

    def serve(name: str, store: Store, key: str) -> None:
        runner = SiteRunner(store, central, key, SITE_QUEUE, poll=0.2, beat=1.0, name=f"{name}-worker",
                            sandbox=sandbox or Sandbox(), said=lambda line: said(f"{name}: {line}"))  # fmt: skip
        try:
            ran[name] = runner.run(until_idle=True)
        except BaseException as error:  # told once every site has stopped, in the caller's thread
            errors.append(error)

    threads = [threading.Thread(target=serve, args=(name, *site), daemon=True) for name, site in sites.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return ran
