"""The record's experiments as one package: run a script as a module from the checkout root,
`python -m experiments.<folder>.<module>` (e.g. `python -m experiments.summary --check`), and import a
sibling by its full name (`from experiments.real_text.common import load_named`)."""
