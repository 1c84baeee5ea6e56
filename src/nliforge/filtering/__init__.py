"""Filters over generated examples: heuristic rules, variability selection."""
