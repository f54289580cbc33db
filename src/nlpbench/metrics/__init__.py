"""Pure functions from model objects to counts, and from counts to scores."""
