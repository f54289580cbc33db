"""The services' default bounds, in a module light enough for the command line to import at once."""

#: Request bodies above this many bytes get a 413 problem (``serve --max-body-bytes``).
MAX_BODY_BYTES = 10 * 2**20
#: The note cache keeps annotations up to this many bytes in all (``serve --cache-bytes``).
CACHE_BYTES = 64 * 2**20
