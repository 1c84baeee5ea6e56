"""nliforge-review <action> run=<folder> ...: the thin Hydra entry point over the review actions."""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from nliforge.errors import NLIDataError
from nliforge.generation.types import GenerationError
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli

ACTIONS = ("serve", "export", "import", "teacher", "judge", "aggregate")


def review(cfg: DictConfig) -> dict:
    """Run the configured action; returns what it reports (paths, counts, kappa)."""
    from nliforge.review import actions, reviewed_set

    table = {"serve": actions.serve_action, "export": actions.export_action, "import": actions.import_action,
             "teacher": actions.teacher_action, "judge": actions.judge_action, "aggregate": reviewed_set.aggregate_action}
    if cfg.action not in table:
        raise NLIDataError(f"action={cfg.action!r}; valid: {', '.join(ACTIONS)}")
    return table[cfg.action](cfg)


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="review")
def _hydra_main(cfg: DictConfig) -> None:
    with one_line_errors(GenerationError, NLIDataError):
        review(cfg)


HELP_FLAGS = ("-h", "--help", "--hydra-help")


def main() -> None:
    """Console script `nliforge-review`: the first argument names the action. `--help` (alone or after an
    action) prints the actions and main options (conf/hydra/help/nliforge_review.yaml) and exits 0."""
    if len(sys.argv) > 1 and sys.argv[1] in ACTIONS:
        sys.argv[1] = f"action={sys.argv[1]}"
    elif not any(arg in HELP_FLAGS for arg in sys.argv[1:]) and (
            len(sys.argv) < 2 or not sys.argv[1].startswith("action=")):
        print(f"usage: nliforge-review {{{'|'.join(ACTIONS)}}} run=<generation run folder> [overrides]\n"
              "       nliforge-review --help   (the actions and their main options)", file=sys.stderr)
        raise SystemExit(2)
    run_cli(_hydra_main, CONF_DIR)


if __name__ == "__main__":
    main()
