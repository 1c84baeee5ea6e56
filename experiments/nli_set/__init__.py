"""experiments/nli_set: its scripts, run as `python -m experiments.nli_set.<module>` from the checkout root."""
