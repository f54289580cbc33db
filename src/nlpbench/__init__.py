"""nlpbench: score, run and rank clinical NLP systems with exact-parity scorers."""

__version__ = "0.1.0"
