"""Filters over generated examples: heuristic rules, variability selection, z-statistics and
z-filtering (features.py, zstats.py, zcounts.py, zfilter.py)."""
