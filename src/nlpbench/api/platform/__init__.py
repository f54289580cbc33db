"""The platform API: submissions over HTTP (see :mod:`nlpbench.api.platform.app`)."""

from nlpbench.api.platform.app import BASE_PATH, Settings, create_app

__all__ = ["BASE_PATH", "Settings", "create_app"]
