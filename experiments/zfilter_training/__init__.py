"""experiments/zfilter_training: its scripts, run as `python -m experiments.zfilter_training.<module>` from the checkout root."""
