"""The FastAPI services: the tool API and de-identifier, the data node and the platform API.

Each is an app factory taking its settings and store; the schemas of the tool API they serve live in
:mod:`nlpbench.toolapi`, below the runner and the platform that also speak them.
"""
