"""The services' default bounds, in a module light enough for the command line to import at once.

Every service enforces its request-body bound with the one guard that
:func:`nlpbench.api.problems.install_problem_handlers` installs; the bounds are here (the platform API's,
a prediction file and a little more, is its ``Settings``).
"""

#: Request bodies above this many bytes get a 413 problem (``serve --max-body-bytes``).
MAX_BODY_BYTES = 10 * 2**20
#: The data node's default bound on a request body (a batch of notes or annotations).
DATANODE_MAX_BODY_BYTES = 16 * 2**20
#: The leaderboard site's bound on a request body: it serves GETs only.
SITE_MAX_BODY_BYTES = 64 * 2**10
#: The note cache keeps annotations up to this many bytes in all (``serve --cache-bytes``).
CACHE_BYTES = 64 * 2**20
#: Seconds a client has to send a request's line and headers (:mod:`nlpbench.api.server`).
HEADER_TIMEOUT = 10.0
#: Seconds a client has to send a request's body once its headers are in.
BODY_TIMEOUT = 60.0
#: Seconds an idle kept-alive connection stays open (uvicorn's own ``timeout_keep_alive``).
KEEP_ALIVE_TIMEOUT = 5
