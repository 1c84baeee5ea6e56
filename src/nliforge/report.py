"""nliforge-report sweep=<multirun folder>: compare training sets across a sweep, Table 3 style."""

from __future__ import annotations

import logging
from pathlib import Path

import hydra
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from nliforge.data.combine import ASCII_SYMBOL, SYMBOL
from nliforge.evaluation import report_files
from nliforge.evaluation.table import collect_metrics, find_run_dirs, summary_table
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli

log = logging.getLogger("nliforge.report")
KEY = ["train_id", "seed", "eval_set", "metric"]


def load_sweep(sweep: str | Path) -> pd.DataFrame:
    """Every job's metrics.csv under the sweep, one row per (train_id, seed, eval_set, metric).
    A repeated key (a job re-run into the same sweep) keeps the last one and says so: counting it
    twice would shrink the interval with a seed that was never run."""
    metrics = collect_metrics(find_run_dirs(sweep))
    metrics["train_id"] = metrics["train_id"].astype(str)
    dup = metrics.duplicated(KEY, keep="last")
    if dup.any():
        log.warning("%d repeated (train_id, seed, eval_set, metric) rows in %s; keeping the last", dup.sum(), sweep)
    return metrics[~dup]


def resolve_in_domain(in_domain: dict, train_ids) -> dict:
    """Key the in-domain mapping by the sweep's train ids. A key may also be the ASCII form of an id
    (`mnli_rep_wanli` for `mnli◇wanli`): Hydra's override grammar cannot spell '◇' in a dict key.
    A key matching no id is an error, since a typo would silently drop a dagger."""
    def ascii_id(tid: str) -> str:
        for mode, symbol in SYMBOL.items():
            tid = tid.replace(symbol, ASCII_SYMBOL[mode])
        return tid

    alias = {name: tid for tid in train_ids for name in (tid, ascii_id(tid))}
    unknown = sorted(k for k in in_domain if str(k) not in alias)
    if unknown:
        raise ValueError(f"in_domain names training sets not in the sweep: {unknown}; "
                         f"present: {sorted(set(train_ids))}")
    return {alias[str(k)]: list(v) for k, v in in_domain.items()}


def report(cfg: DictConfig) -> dict:
    """Summarize the sweep and write report.md, report.csv, report.png (and a W&B table if asked).
    Returns the output paths and the tidy summary."""
    sweep = Path(str(cfg.sweep))
    out = Path(str(cfg.out)) if cfg.get("out") else sweep / "report"
    in_domain = OmegaConf.to_container(cfg.in_domain, resolve=True) if cfg.get("in_domain") else {}
    metrics = load_sweep(sweep)
    in_domain = resolve_in_domain(in_domain, metrics["train_id"].unique())
    summary = summary_table(metrics, str(cfg.metric), float(cfg.ci),
                            list(cfg.sets) if cfg.get("sets") else None, in_domain)
    scale, title = float(cfg.get("scale", 100)), f"{sweep.name}: {cfg.metric}"
    out.mkdir(parents=True, exist_ok=True)
    md = report_files.write_markdown(summary, out / "report.md", title, str(cfg.metric), float(cfg.ci), scale)
    result = {"summary": summary, "md": md,
              "csv": report_files.write_csv(summary, out / "report.csv"),
              "png": report_files.write_heatmap(summary, out / "report.png", title, scale)}
    if cfg.get("wandb"):
        from nliforge.utils.wandb_log import log_report

        result["wandb_dir"] = log_report(summary, metrics, cfg, sweep, out)
    log.info("report written to %s", out)
    return result


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="report")
def _hydra_main(cfg: DictConfig) -> None:
    with one_line_errors(FileNotFoundError, ValueError):
        result = report(cfg)
    print(result["md"].read_text())


def main() -> None:
    """Console script `nliforge-report`."""
    run_cli(_hydra_main, CONF_DIR)


if __name__ == "__main__":
    main()
