"""experiments/world_calibration: its scripts, run as `python -m experiments.world_calibration.<module>` from the checkout root."""
