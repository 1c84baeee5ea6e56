"""nliforge: make and judge training data for natural language inference."""

__version__ = "0.1.0"
