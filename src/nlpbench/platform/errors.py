"""What the queue refuses: a request it cannot find or allow, a quota used up, a status that forbids it;
and a worker's lost hold on a submission."""

from __future__ import annotations

from nlpbench.errors import Kind, NlpbenchError


class PlatformError(NlpbenchError):
    """A request the queue refuses or cannot find; one line."""

    kind = Kind.input


class NotFound(PlatformError):
    """What the request names does not exist, or is another team's."""

    kind = Kind.not_found


class QuotaExceeded(PlatformError):
    """The team has used up the queue's quota of submissions."""

    kind = Kind.quota


class Forbidden(PlatformError):
    """A team may not do this: give a tool URL on a private dataset or into the worker's networks, or a
    prediction file of a private dataset's notes."""

    kind = Kind.forbidden


class Conflict(PlatformError):
    """The submission is not in a status that allows this."""

    kind = Kind.conflict


class Lost(NlpbenchError):
    """This worker no longer holds the submission: its lease was taken over, or the submission cancelled."""

    kind = Kind.conflict
