"""The NLP Sandbox 1.2.0 data node over the store (see :mod:`nlpbench.api.datanode.app`)."""

from nlpbench.api.datanode.app import BASE_PATH, Settings, create_app

__all__ = ["BASE_PATH", "Settings", "create_app"]
