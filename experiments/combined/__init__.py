"""experiments/combined: its scripts, run as `python -m experiments.combined.<module>` from the checkout root."""
