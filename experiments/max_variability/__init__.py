"""experiments/max_variability: its scripts, run as `python -m experiments.max_variability.<module>` from the checkout root."""
