"""A prediction file's text lives in a row of its own (revision 0380): a store of revision 0370 keeps every
submitted file through the upgrade, and a downgrade puts each back in its submission's row."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from nlpbench.store import open_store
from nlpbench.store.engine import MIGRATIONS
from nlpbench.store.submissions import Submission

FILE = '{"notes": [{"id": "n1"}]}\n' * 1000  # a long text, as a prediction file is


def migrate(url: str, revision: str, downgrade: bool = False) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            config = Config()
            config.set_main_option("script_location", str(MIGRATIONS))
            config.attributes["connection"] = connection
            (command.downgrade if downgrade else command.upgrade)(config, revision)
    finally:
        engine.dispose()


def submit(url: str, kind: str, predictions: str | None) -> None:
    engine = sa.create_engine(url)
    now = "2026-11-29 00:00:00"
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO submissions (queue, team, task, dataset, kind, predictions, predictions_name, "
                    "submitted_by, status, reason, created_at, updated_at, attempts, notes_total, notes_done, "
                    "warnings) VALUES ('default', 'team-a', 'ner', 'notes', :kind, :predictions, :name, 'team', "
                    "'RECEIVED', '', :now, :now, 0, 0, 0, '[]')"
                ),
                {"kind": kind, "predictions": predictions, "name": "pred.conll" if predictions else None, "now": now},
            )
    finally:
        engine.dispose()


def test_an_upgrade_keeps_every_prediction_file_and_a_downgrade_puts_it_back(db_url):
    migrate(db_url, "0370")
    submit(db_url, "predictions", FILE)
    submit(db_url, "command", None)
    store = open_store(db_url)  # upgrades to the head
    try:
        with store.session() as session:
            first, second = session.scalars(sa.select(Submission).order_by(Submission.id)).all()
            assert (first.predictions, second.predictions) == (FILE, None)
            session.delete(first)  # its file goes with it
        with store.session(readonly=True) as session:
            left = session.execute(sa.text("SELECT count(*) FROM submitted_predictions")).scalar_one()
            assert left == 0
        with store.session() as session:
            session.add(Submission(queue="default", team="team-b", task="ner", dataset="notes", kind="predictions",
                                   predictions="second file", predictions_name="pred.conll"))  # fmt: skip
    finally:
        store.close()
    migrate(db_url, "0370", downgrade=True)
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(sa.text("SELECT kind, predictions FROM submissions ORDER BY id")).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in rows] == [("command", None), ("predictions", "second file")]
