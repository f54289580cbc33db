"""The words the store's tables hold as text: API key scopes, submission statuses, quota windows, phase visibilities.

Kept apart from the table definitions (:mod:`nlpbench.store.models`,
:mod:`nlpbench.store.submissions`), so that the command line can offer them as
choices without importing SQLAlchemy.
"""

from __future__ import annotations

#: What an API key of a data node may do: ``read`` (GET only) or ``write`` (also create and delete).
SCOPES = ("read", "write")

RECEIVED, VALIDATING, INVALID, ANNOTATING, SCORING, SCORED, FAILED, CANCELLED = (
    "RECEIVED",
    "VALIDATING",
    "INVALID",
    "ANNOTATING",
    "SCORING",
    "SCORED",
    "FAILED",
    "CANCELLED",
)
#: Every status of a submission, in the order a submission passes through them.
STATUSES = (RECEIVED, VALIDATING, INVALID, ANNOTATING, SCORING, SCORED, FAILED, CANCELLED)
#: The periods a submission quota counts over.
WINDOWS = ("day", "week", "month")
#: Who sees a challenge phase's scores: everyone as they come; the organisers only until the phase closes;
#: the organisers only until it closes, each team seeing its own submissions' status and nothing of others'.
PHASE_VISIBILITIES = ("public", "private", "blind")
