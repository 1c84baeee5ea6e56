"""The end of every training or evaluation run: the suite evaluated, `metrics.csv` written and the results
logged as `test/<set>/<metric>`."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from nliforge.evaluation.suite import add_averages, evaluate_suite, metrics_rows, write_metrics_csv
from nliforge.utils.run import log_final_metrics


def evaluate_and_record(module, datamodule, eval_sets, cfg: DictConfig, train_id: str, out: Path,
                        loggers: list) -> dict:
    """Run the suite, write <out>/metrics.csv (and with `suite.save_predictions` every example's prediction
    in <out>/predictions/<set>.csv) and log `test/<set>/<metric>`: the end of every run."""
    predictions = out / "predictions" if cfg.suite.get("save_predictions", False) else None
    results = evaluate_suite(module, datamodule, eval_sets, cfg.suite.get("collapse", "argmax"), predictions)
    results = add_averages(results, cfg.suite.get("averages"))
    write_metrics_csv(metrics_rows(results, train_id, int(cfg.seed)), out / "metrics.csv")
    log_final_metrics(loggers, results)
    return results
