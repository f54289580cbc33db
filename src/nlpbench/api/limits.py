"""The services' default bounds, in a module light enough for the command line to import at once."""

#: Request bodies above this many bytes get a 413 problem (``serve --max-body-bytes``).
MAX_BODY_BYTES = 10 * 2**20
#: The note cache keeps annotations up to this many bytes in all (``serve --cache-bytes``).
CACHE_BYTES = 64 * 2**20
#: Seconds a client has to send a request's line and headers (:mod:`nlpbench.api.server`).
HEADER_TIMEOUT = 10.0
#: Seconds a client has to send a request's body once its headers are in.
BODY_TIMEOUT = 60.0
#: Seconds an idle kept-alive connection stays open (uvicorn's own ``timeout_keep_alive``).
KEEP_ALIVE_TIMEOUT = 5
