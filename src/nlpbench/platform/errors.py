"""What the queue refuses: a request it cannot find or allow, a quota used up, a status that forbids it;
and a worker's lost hold on a submission."""

from __future__ import annotations


class PlatformError(Exception):
    """A request the queue refuses or cannot find; one line."""


class NotFound(PlatformError):
    pass


class QuotaExceeded(PlatformError):
    pass


class Forbidden(PlatformError):
    """A team may not do this: give a tool URL on a private dataset or into the worker's networks, or a
    prediction file of a private dataset's notes."""


class Conflict(PlatformError):
    """The submission is not in a status that allows this."""


class Lost(Exception):
    """This worker no longer holds the submission: its lease was taken over, or the submission cancelled."""
