"""experiments/real_lm: its scripts, run as `python -m experiments.real_lm.<module>` from the checkout root."""
