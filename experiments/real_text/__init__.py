"""experiments/real_text: its scripts, run as `python -m experiments.real_text.<module>` from the checkout root."""
