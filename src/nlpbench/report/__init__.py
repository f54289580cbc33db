"""Score reports and their renderings: terminal table, JSON, Markdown and HTML."""

from nlpbench.report.model import Report
from nlpbench.report.render import FORMATS, render

__all__ = ["FORMATS", "Report", "render"]
