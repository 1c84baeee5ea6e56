"""Analysis of data and models: token attributions of a classifier's predictions (attributions.py),
with more to come (partial-input baselines, word-label correlations, similarity, plots)."""
