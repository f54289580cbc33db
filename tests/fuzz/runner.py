"""Run ``nlpbench`` commands in this process, one after another; print what each did as JSON lines.

The fuzz test starts this script in a subprocess under a memory limit, with
one JSON list of argument lists on standard input, so that the start-up of
Python and nlpbench is paid once for several inputs. Each command runs through
Typer's test runner, which reports an exception the command let escape
instead of ending the process.
"""

from __future__ import annotations

import json
import sys
import traceback

from typer.testing import CliRunner

from nlpbench.cli import app


def main() -> None:
    runner = CliRunner()
    for argv in json.load(sys.stdin):
        result = runner.invoke(app, argv)
        escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
        outcome = {
            "argv": argv,
            "exit": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "traceback": "".join(traceback.format_exception(*result.exc_info)) if escaped else None,
        }
        sys.stdout.write(json.dumps(outcome) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
