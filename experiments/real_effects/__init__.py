"""experiments/real_effects: its scripts, run as `python -m experiments.real_effects.<module>` from the checkout root."""
