"""nliforge-evaluate: evaluate a trained model folder on a suite and write metrics.csv."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf, open_dict

from nliforge.errors import NLIDataError
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli
from nliforge.utils.model_folder import check_model_folder
from nliforge.utils.run import build_loggers, close_loggers, configure_process, prepare_output_dir
from nliforge.utils.atomic import read_json_file

log = logging.getLogger("nliforge.evaluate")


def training_run(cfg: DictConfig) -> dict:
    """What the model folder's training run recorded: its train_set.manifest.json (train_id, seed),
    else the seed of its config.yaml; {} for a Hub id or a folder saved elsewhere."""
    run = Path(str(cfg.model.backbone.get("name_or_path") or "")).expanduser().parent
    if (run / "train_set.manifest.json").is_file():
        return read_json_file(run / "train_set.manifest.json")
    if (run / "config.yaml").is_file():
        seed = (OmegaConf.load(run / "config.yaml") or {}).get("seed")
        return {"seed": seed} if seed is not None else {}
    return {}


def resolve_identity(cfg: DictConfig) -> tuple[str, int]:
    """(train_id, seed) written in metrics.csv: the values given on the command line, else those the
    model folder's training run recorded, so nliforge-report tells two seeds' evaluations apart; a Hub
    model's id is its name and its seed 0."""
    trained = training_run(cfg)
    train_id = cfg.get("train_id") or trained.get("train_id") or cfg.model.backbone.get("name_or_path") \
        or cfg.model.backbone.kind
    seed = cfg.get("seed")
    seed = trained.get("seed", 0) if seed is None else seed
    return str(train_id), int(seed)


def _model_input(cfg: DictConfig, trained: str | None) -> str:
    """`model.input`, checked against the view the model folder was trained on (`nliforge_input` in its
    config.json, if it recorded one): scoring a hypothesis-only model on pairs would give numbers that mean
    nothing."""
    view = str(cfg.model.get("input", "pair"))
    if trained is not None and trained != view:
        raise NLIDataError(f"model.input={view!r}, but {cfg.model.backbone.get('name_or_path')} was trained with "
                           f"model.input={trained!r}; pass model.input={trained}")
    return view


def _check_model_setting(cfg: DictConfig) -> None:
    """A missing or mistyped model folder is refused before the run folder is made, naming the key."""
    backbone = cfg.model.backbone
    if "name_or_path" not in backbone:
        return
    if OmegaConf.is_missing(backbone, "name_or_path"):
        raise NLIDataError("model.backbone.name_or_path is required: the model folder to evaluate (e.g. "
                           "outputs/train/<time>/model) or a Hub id")
    check_model_folder(backbone.name_or_path, "model.backbone.name_or_path")


def preflight(cfg: DictConfig) -> None:
    """Every check that needs neither torch nor the data: the model folder, the view it was trained on (its
    config.json) and the suite's part sets. Writes nothing; `nliforge-evaluate` runs it before Hydra makes
    the run folder (`nliforge.utils.run_start.Preflight`), `evaluate` again."""
    from nliforge.data.world_part import check_world_parts

    _check_model_setting(cfg)   # before torch and Lightning load: a mistyped folder costs no imports
    folder = Path(str(cfg.model.backbone.get("name_or_path") or "")).expanduser()
    if (folder / "config.json").is_file():
        _model_input(cfg, read_json_file(folder / "config.json").get("nliforge_input"))
    check_world_parts((cfg.get("suite") or {}).get("sets"), "suite.sets")


def evaluate(cfg: DictConfig, on_accepted: Callable[[Path], None] | None = None) -> dict:
    """Load the model, run the suite on the configured accelerator, write metrics.csv. Returns results.
    Every check (`preflight`, the suite, the model) comes before the run folder gets a file;
    `on_accepted(folder)` runs then (the console script writes Hydra's record there and opens the log)."""
    preflight(cfg)
    import lightning as L   # torch, Lightning and the models load here: `--help` and config errors need none

    from nliforge.data.datamodule import NLIDataModule
    from nliforge.evaluation.record import evaluate_and_record
    from nliforge.evaluation.registry import load_suite
    from nliforge.models.backbone import build_backbone
    from nliforge.models.classifier import NLIClassifier

    train_id, seed = resolve_identity(cfg)
    with open_dict(cfg):
        cfg.seed, cfg.train_id = seed, train_id   # config.yaml and metrics.csv record the values used
    configure_process(cfg)
    L.seed_everything(seed, workers=True)
    eval_sets = load_suite(cfg)
    model, tokenizer, perm = build_backbone(cfg.model.backbone)
    view = _model_input(cfg, getattr(model.config, "nliforge_input", None))
    if on_accepted is not None:
        on_accepted(Path(cfg.paths.output_dir))
    out = prepare_output_dir(cfg)
    module = NLIClassifier(model, label_permutation=perm)
    accelerator = cfg.trainer.get("accelerator", "cpu")
    if accelerator in ("gpu", "cuda"):
        module = module.cuda()
    dm = NLIDataModule([], tokenizer, cfg.data.batch_size, cfg.data.eval_batch_size, cfg.data.max_length,
                       cfg.data.num_workers, int(cfg.seed), input=view)
    loggers = build_loggers(cfg, f"eval-{train_id}", out)
    try:
        results = evaluate_and_record(module, dm, eval_sets, cfg, train_id, out, loggers)
    finally:
        close_loggers(loggers)
    return results


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="evaluate")
def _hydra_main(cfg: DictConfig) -> None:
    from nliforge.utils.run_start import accept_run

    record = copy.deepcopy(cfg)   # Hydra's record: the command's config (evaluate fills in seed and train_id)
    with one_line_errors(NLIDataError):   # expected refusals: one `error:` line, no traceback
        evaluate(cfg, on_accepted=lambda out: accept_run(out, record))


def main() -> None:
    """Console script `nliforge-evaluate`."""
    run_cli(_hydra_main, CONF_DIR, quiet=True)


if __name__ == "__main__":
    main()
