"""One line per Lightning message, no tips, no known deprecation warnings of the libraries.

`import lightning` gives the `lightning` logger its own console handler, and `lightning.pytorch` /
`lightning.fabric` one more (and stop propagating) when the root logger has none yet. Imported
after Hydra configured logging (inside nliforge-generate), each message was printed twice: by Hydra's
handler and by Lightning's. Imported before (nliforge-train), it skipped the run's log file.
`quiet_libraries()` (run by `run_cli` before Hydra starts) removes Lightning's handlers so every
message goes once through Hydra's (console and `<run>/<task>.log`), drops the litlogger tip, and
ignores warnings that appear on every run and ask nothing of the user (`KNOWN_WARNINGS`), and, when
stderr is not a terminal, turns off the Hugging Face libraries' bars (HF_HUB_DISABLE_PROGRESS_BARS).
"""

from __future__ import annotations

import logging
import os
import warnings

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
    import lightning  # noqa: F401 - its import adds the handlers removed here; importing again adds none

    for name in LIGHTNING_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if type(handler) is logging.StreamHandler:
                logger.removeHandler(handler)
        logger.propagate = True
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, DropTips) for f in logger.filters):
            logger.addFilter(DropTips())
    for message in KNOWN_WARNINGS:
        warnings.filterwarnings("ignore", message=message)
    if "SLURM_JOB_ID" not in os.environ:
        warnings.filterwarnings("ignore", message=SRUN_HINT)


def hide_hf_progress_bars() -> None:
    """Turn off the bars of huggingface_hub and transformers: through the variable they read at import,
    and through their functions when an entry point imported them already."""
    import sys

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
