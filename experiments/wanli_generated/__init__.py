"""experiments/wanli_generated: its scripts, run as `python -m experiments.wanli_generated.<module>` from the checkout root."""
