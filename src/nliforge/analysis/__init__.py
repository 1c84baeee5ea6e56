"""Analyses of data and models (CLI: nliforge-analyze): dataset statistics and data maps (stats.py),
partial-input baselines (partial_input.py), word-label correlations (word_label.py), premise-hypothesis
similarity per label (similarity.py), and token attributions of a classifier's predictions
(attributions.py; rendered by attribution_render.py)."""
