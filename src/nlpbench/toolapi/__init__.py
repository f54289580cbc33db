"""The NLP Sandbox tool API (1.2.0): the schemas tools exchange, below every layer that speaks to a tool.

The runner checks tools' answers against them, the platform validates submitted tools with them and the
services (:mod:`nlpbench.api`) serve them; none of those layers owns them, so they live beneath all three.
"""
