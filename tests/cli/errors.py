"""What every failing command must look like: one line on standard error, exit status 2."""

PREFIX = "nlpbench: error: "


def one_line_error(result) -> str:
    """The message of a run that failed with exactly one ``nlpbench: error:`` line and exit status 2."""
    assert result.exit_code == 2, result.stdout
    assert result.stderr.startswith(PREFIX) and result.stderr.count("\n") == 1, result.stderr
    return result.stderr[len(PREFIX) : -1]
