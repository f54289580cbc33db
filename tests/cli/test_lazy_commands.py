"""A command loads the modules it needs and no others; help still lists every command."""

from __future__ import annotations

import json
import subprocess
import sys

from nlpbench.cli import COMMANDS, build_app


def loaded_after(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``nlpbench ARGV…``."""
    script = (
        "import json, sys\n"
        "from nlpbench.cli import main\n"
        f"sys.argv = ['nlpbench', *{list(argv)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_scoring_with_json_output_loads_neither_the_web_stack_nor_rich():
    loaded = loaded_after("score", "sandbox", "--example", "--format", "json")
    assert "nlpbench.tasks.sandbox" in loaded
    assert not {"fastapi", "uvicorn", "faker", "httpx", "rich", "nlpbench.cli.demo", "nlpbench.synth"} & loaded


def test_help_lists_every_command(cli):
    shown = cli("--help").stdout
    assert all(name in shown for name in COMMANDS)


def test_an_app_built_for_one_command_holds_just_that_command():
    names = {command.name for command in build_app(["validate", "--format", "brat"]).registered_commands}
    assert names == {"convert", "validate", "formats", "profiles"}
    assert build_app(["--version"]).registered_groups[0].name == "score"
