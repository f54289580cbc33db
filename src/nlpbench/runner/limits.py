"""What a sandboxed tool may use, in a module of its own: the platform's challenges and specs name limits
without loading the sandbox (psutil, httpx, the handoff transport).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What a sandboxed tool may use: bytes resident, CPU seconds, seconds in all, processes, log bytes.

    ``network=True`` leaves out the network namespace (a test's control only):
    the tool then listens on this machine, where its port must be free.
    """

    memory_bytes: int = 2 * 2**30
    cpu_seconds: float = 3600.0
    wall_seconds: float = 7200.0
    processes: int = 64
    log_bytes: int = 2**20
    network: bool = False
