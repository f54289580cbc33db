"""The leaderboard site: server-rendered pages over the store's scored submissions (see :mod:`nlpbench.web.app`)."""
