"""nliforge-train: a classifier on a combination of training sets, with training dynamics,
evaluated on a suite. `train(cfg)` (nliforge.training) is the pure function; `main` is the thin Hydra
entry point."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from nliforge.errors import NLIDataError
from nliforge.evaluation.run_table import run_table
from nliforge.training import train
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli

__all__ = ["main", "train"]


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="train")
def _hydra_main(cfg: DictConfig) -> None:
    with one_line_errors(NLIDataError):   # expected refusals: one `error:` line, no traceback
        results = train(cfg)
    table = run_table(results)
    if table:   # the table the README shows for the demo (accuracy %, this run's seed)
        print(f"\n{cfg.get('task_name', 'run')}, seed {cfg.seed}: accuracy % (from metrics.csv)\n{table}\n")


def main() -> None:
    """Console script `nliforge-train`."""
    run_cli(_hydra_main, CONF_DIR, quiet=True)


if __name__ == "__main__":
    main()
