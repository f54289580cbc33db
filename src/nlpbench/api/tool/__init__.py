"""Any annotator as an NLP Sandbox 1.2.0 tool, and the de-identifier (see :mod:`nlpbench.api.tool.app`)."""

from nlpbench.api.limits import MAX_BODY_BYTES
from nlpbench.api.tool.answers import tool_type
from nlpbench.api.tool.app import BASE_PATH, create_app, create_deidentifier_app

__all__ = ["BASE_PATH", "MAX_BODY_BYTES", "create_app", "create_deidentifier_app", "tool_type"]
