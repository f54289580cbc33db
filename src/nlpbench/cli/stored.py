"""``store:DATASET/annotationStores/NAME``: an annotation store of nlpbench's own store as a scoring input.

The command line opens it (``--db URL``, else ``$NLPBENCH_DB``, else the
per-user SQLite file) and hands it to the scoring task in place of a file or a
data-node URL; the task reads it through :func:`nlpbench.formats.datanode.documents`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from nlpbench.errors import InputError
from nlpbench.formats import sandbox
from nlpbench.model import Document

PREFIX = "store:"
_REFERENCE = re.compile(r"store:(?P<dataset>[^/]+)/annotationStores/(?P<store>[^/]+)")


@dataclass(frozen=True)
class StoredAnnotations:
    """The records of one annotation store of the store at ``db``, one document per note, in annotation-id order."""

    dataset: str
    store: str
    db: str | None = None

    def __str__(self) -> str:
        return f"{PREFIX}{self.dataset}/annotationStores/{self.store}"

    def read(self, labels: Collection[str] | None = None) -> Iterator[Document]:
        """The records as the sandbox reader reads a file's list: checked, a note's records merged."""
        from nlpbench.store import StoreError, open_store, repository  # SQLAlchemy loads only when used

        opened = open_store(self.db, create=False)
        try:
            with opened.session(readonly=True) as session:

                def records() -> Iterator[dict]:
                    for record in repository.iter_records(session, self.dataset, self.store):
                        yield {"annotationSource": {"resourceSource": {"name": record.source}}, **record.arrays}

                yield from sandbox.read_records(records, str(self), labels)
        except StoreError as error:
            raise InputError(str(error), str(self)) from None
        finally:
            opened.close()


def scoring_input(given: str | Path | None, db: str | None) -> str | Path | StoredAnnotations | None:
    """``given`` as the task takes it: a store reference opened on ``db``, else the file or URL as it is."""
    if given is None or not str(given).startswith(PREFIX):
        return given
    found = _REFERENCE.fullmatch(str(given))
    if found is None:
        raise InputError("expected store:DATASET/annotationStores/NAME", given)
    return StoredAnnotations(found["dataset"], found["store"], db)
