"""The options that say how a tool started from a command is sandboxed, shared by ``annotate`` and ``worker``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer


class SandboxChoice(StrEnum):
    auto = "auto"
    bwrap = "bwrap"
    runsc = "runsc"
    unshare = "unshare"


SANDBOX_OPTION = typer.Option(
    SandboxChoice.auto,
    "--sandbox",
    help="The sandbox a tool started from a command runs in: bwrap (bubblewrap), runsc (gVisor), "
    "auto (the first that works here), or unshare (network and processes only; a weaker fallback).",
)
RUNTIME_OPTION = typer.Option(
    [],
    "--runtime",
    help="A host path the tool may read (its runtime), besides the system's /usr and libraries and the Python "
    "running nlpbench; repeatable. Nothing else of this machine is visible to the tool.",
)
TOOL_DIR_OPTION = typer.Option(
    None,
    "--tool-dir",
    help="The tool's own directory: readable (not writable) by the tool, and its working directory. "
    "It writes in $HOME and $TMPDIR, size-limited folders of its own.",
)


DISK_OPTION = typer.Option(
    256, "--tool-disk", min=1, help="MiB a tool may write in each of its folders ($HOME, $TMPDIR); memory, counted."
)


def sandbox_settings(choice: SandboxChoice, runtime: list[Path], disk_mib: int = 256):
    """The :class:`~nlpbench.runner.isolation.Sandbox` the options ask for; choosing ``unshare`` allows it."""
    from nlpbench.runner.isolation import Sandbox

    paths = tuple(str(path.resolve()) for path in runtime)
    return Sandbox(
        backend=choice.value, runtime=paths, disk_bytes=disk_mib * 2**20, weak=choice is SandboxChoice.unshare
    )
