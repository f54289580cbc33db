"""The attacking team's tests use the platform's fixtures: ``nb``, ``dataset``, ``tool``, ``db_url`` (both backends)."""

from tests.platform.conftest import dataset, nb, served_tool, tool  # noqa: F401
from tests.store.backends import db_url, store  # noqa: F401
