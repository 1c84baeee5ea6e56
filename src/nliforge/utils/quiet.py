"""One line per Lightning message, no tips, no known deprecation warnings of the libraries.

`import lightning` gives the `lightning` logger its own console handler, and `lightning.pytorch` /
`lightning.fabric` one more (and stop propagating) when the root logger has none yet. Imported
after Hydra configured logging (inside nliforge-generate), each message was printed twice: by Hydra's
handler and by Lightning's. Imported before (nliforge-train), it skipped the run's log file.
`quiet_libraries()` (run by `run_cli` before Hydra starts) removes Lightning's handlers (once it is imported:
`--help` and config errors never import it) so every
message goes once through Hydra's (console and `<run>/<task>.log`), drops the litlogger tip, and
ignores warnings that appear on every run and ask nothing of the user (`KNOWN_WARNINGS`), and, when
stderr is not a terminal, turns off the Hugging Face libraries' bars (HF_HUB_DISABLE_PROGRESS_BARS).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import logging
import os
import sys
import warnings
from collections.abc import Callable

from nliforge.utils.progress import is_terminal

LIGHTNING_LOGGERS = ("lightning", "lightning.pytorch", "lightning.fabric")
TIPS = ("💡 Tip:",)   # Lightning's advertisement for its cloud logger, on every Trainer
KNOWN_WARNINGS = (    # message regexes (matched at the start): deprecations inside the libraries themselves
    r"`isinstance\(treespec, LeafSpec\)` is deprecated",
    # a run without data.val_sets: NLIDataModule.val_dataloader gives an empty list on purpose (an empty
    # DataLoader, `DataLoader` in the message, is still shown)
    r"Total length of `list` across ranks is zero\. Please make sure this was your intention",
)
SRUN_HINT = r"The `srun` command is available on your system but is not used"


class DropTips(logging.Filter):
    """Drop log records whose message starts with one of TIPS."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.getMessage()).startswith(TIPS)


def quiet_libraries() -> None:
    """Route Lightning's log messages through the root logger only, drop its tips, ignore KNOWN_WARNINGS
    (and Lightning's `srun` hint outside a Slurm job, where it can only mean a machine with Slurm tools)."""
    if not is_terminal():      # output to a file: no carriage-return bars of weight loading and saving
        hide_hf_progress_bars()
    if "lightning" in sys.modules:
        route_lightning_logs()
    else:   # its import adds the handlers: remove them once it happens, so `--help` need not import it
        after_import("lightning", route_lightning_logs)
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, DropTips) for f in logger.filters):
            logger.addFilter(DropTips())
    for message in KNOWN_WARNINGS:
        warnings.filterwarnings("ignore", message=message)
    if "SLURM_JOB_ID" not in os.environ:
        warnings.filterwarnings("ignore", message=SRUN_HINT)


def route_lightning_logs() -> None:
    """Remove the console handlers Lightning's import gave its loggers: they propagate to the root's."""
    for name in LIGHTNING_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if type(handler) is logging.StreamHandler:
                logger.removeHandler(handler)
        logger.propagate = True


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `then()` right after the module `name` is first imported, then leaves sys.meta_path."""

    def __init__(self, name: str, then: Callable[[], None]):
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run, then = spec.loader.exec_module, self.then

            def exec_module(module):
                run(module)
                then()
            spec.loader.exec_module = exec_module
        return spec


def after_import(name: str, then: Callable[[], None]) -> None:
    """Call `then()` once the top-level module `name` has been imported (now, if it already is)."""
    if name in sys.modules:
        then()
    elif not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, then))


def hide_hf_progress_bars() -> None:
    """Turn off the bars of huggingface_hub and transformers: through the variable they read at import,
    and through their functions when an entry point imported them already."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
