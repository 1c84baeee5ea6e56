"""nliforge-report sweep=<multirun folder>: compare training sets across a sweep, Table 3 style."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import hydra
from omegaconf import DictConfig, OmegaConf

from nliforge.data.combine import ASCII_SYMBOL, SYMBOL
from nliforge.evaluation.environments import environment_differences
from nliforge.evaluation.in_domain import infer_in_domain
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli

if TYPE_CHECKING:   # pandas, numpy, scipy and the tables load when a report is made, not for --help
    import pandas as pd

log = logging.getLogger("nliforge.report")
KEY = ["train_id", "seed", "eval_set", "metric"]


def load_sweep(sweep: str | Path, world_key: str | None = None) -> pd.DataFrame:
    """Every job's metrics.csv under the sweep, one row per (train_id, seed, eval_set, metric); with
    `world_key` also `world_seed`, that key of each run's config.yaml, in the key (unit=world).

    The same key in two run folders is an error naming both: keeping either would silently drop a
    model from the table (e.g. two models' evaluations that both wrote seed 0), and keeping both would
    count one seed twice and shrink the interval. A key repeated inside one metrics.csv keeps the last
    row and says so."""
    import pandas as pd

    from nliforge.evaluation.sweep_checks import check_metrics_file, missing_cells, mixed_settings
    from nliforge.evaluation.table import collect_metrics, find_run_dirs
    from nliforge.evaluation.worlds import world_of

    dirs = find_run_dirs(sweep)
    for d in dirs:
        check_metrics_file(d / "metrics.csv")   # a torn file would drop a seed from some columns only
    metrics = pd.concat([collect_metrics([d]).assign(_source=str(d), **({"world_seed": world_of(d, world_key)}
                                                                        if world_key else {})) for d in dirs],
                        ignore_index=True)
    key = KEY + ["world_seed"] if world_key else KEY
    metrics["train_id"] = metrics["train_id"].astype(str)
    dup = metrics.duplicated(key + ["_source"], keep="last")
    if dup.any():
        log.warning("%d repeated (train_id, seed, eval_set, metric) rows in one metrics.csv under %s; keeping "
                    "the last", dup.sum(), sweep)
    metrics = metrics[~dup]
    clash = metrics[metrics.duplicated(key, keep=False)]
    if not clash.empty:
        first = clash.iloc[0]
        sources = list(dict.fromkeys(clash[(clash[key] == first[key]).all(axis=1)]["_source"]))
        raise ValueError(f"train_id {first['train_id']!r}, seed {first['seed']} has metrics in {len(sources)} run "
                         f"folders: {' and '.join(sources)}; a report counts each (train_id, seed) once: report on "
                         "one of them, or give each run its own train_id= or seed= (nliforge-evaluate takes both "
                         "from the model folder's train_set.manifest.json)")
    mixed = mixed_settings({Path(src): list(g["train_id"].unique()) for src, g in metrics.groupby("_source")},
                           [world_key] if world_key else [])
    if mixed:
        raise ValueError(f"{mixed}; a report pools only the seeds of one setting: report each setting from its own "
                         "sweep, or evaluate each with its own train_id= (nliforge-evaluate)")
    for line in missing_cells(metrics):
        log.warning("%s", line)
    return metrics.drop(columns="_source").reset_index(drop=True)


def id_aliases(train_ids) -> dict[str, str]:
    """Each train id and its ASCII form (`mnli_rep_wanli` for `mnli◇wanli`) -> the id: Hydra's
    override grammar cannot spell '◇' in a dict key, and a shell user may not want to type it."""
    def ascii_id(tid: str) -> str:
        for mode, symbol in SYMBOL.items():
            tid = tid.replace(symbol, ASCII_SYMBOL[mode])
        return tid

    return {name: tid for tid in train_ids for name in (tid, ascii_id(tid))}


def resolve_baseline(baseline: str, train_ids) -> str:
    """The sweep's train id that `baseline` (an id or its ASCII form) names; an error listing the
    present ids otherwise."""
    alias = id_aliases(train_ids)
    if str(baseline) not in alias:
        raise ValueError(f"baseline={baseline!r} is not a training set of the sweep; "
                         f"present: {sorted(set(train_ids))}")
    return alias[str(baseline)]


def resolve_in_domain(in_domain: dict, train_ids) -> dict:
    """Key the in-domain mapping by the sweep's train ids. A key may also be the ASCII form of an id
    (`mnli_rep_wanli` for `mnli◇wanli`). A key matching no id is an error, since a typo would
    silently drop a dagger."""
    alias = id_aliases(train_ids)
    unknown = sorted(k for k in in_domain if str(k) not in alias)
    if unknown:
        raise ValueError(f"in_domain names training sets not in the sweep: {unknown}; "
                         f"present: {sorted(set(train_ids))}")
    return {alias[str(k)]: list(v) for k, v in in_domain.items()}


def pick_in_domain(cfg: DictConfig, sweep: Path, train_ids) -> tuple[dict, str]:
    """The in-domain cells and a sentence for the legend saying where they come from: `in_domain=` when
    given; else inferred from the runs' config.yaml (evaluation.in_domain: eval sets from the same data
    as a training set, or listed in `suite.in_domain`); else none, said so, since every cell then
    competes for best, an in-domain test included."""
    from nliforge.evaluation.table import find_run_dirs

    if cfg.get("in_domain"):
        given = resolve_in_domain(OmegaConf.to_container(cfg.in_domain, resolve=True), train_ids)
        return given, "In-domain cells as given (in_domain=)."
    inferred = infer_in_domain(find_run_dirs(sweep))
    if inferred:
        log.info("in-domain sets inferred from the runs' config.yaml: %s", inferred)
        return inferred, ("In-domain cells inferred from each run's config.yaml (an eval set from the same data "
                          "as a training set, or listed in suite.in_domain); in_domain= overrides.")
    log.warning("no in_domain given and none found in the runs' configs: every cell competes for best")
    return {}, ("No in-domain cells: none given (in_domain=) or found in the runs' configs, so an in-domain "
                "test also competes for best.")


def report(cfg: DictConfig) -> dict:
    """Summarize the sweep and write report.md, report.csv, report.png (and a W&B table if asked);
    with `baseline` also the differences to it (a second table in report.md, report_diff.csv).
    Returns the output paths and the tidy tables ("summary", "diff")."""
    from nliforge.evaluation import report_files
    from nliforge.evaluation.differences import difference_table
    from nliforge.evaluation.sweep_checks import unfinished_jobs
    from nliforge.evaluation.table import find_run_dirs, summary_table
    from nliforge.evaluation.worlds import WORLD_KEY, per_world, world_markdown, world_tests

    sweep = Path(str(cfg.sweep))
    out = Path(str(cfg.out)) if cfg.get("out") else sweep / "report"
    bounds = list(cfg.bounds) if cfg.get("bounds") is not None else None
    by_world = str(cfg.get("unit", "seed")) == "world"
    if str(cfg.get("unit", "seed")) not in ("seed", "world"):
        raise ValueError(f"unit={cfg.unit!r}; valid: seed (each training seed), world (each world's seeds averaged)")
    metrics = load_sweep(sweep, str(cfg.get("world_key") or WORLD_KEY) if by_world else None)
    for line in environment_differences(find_run_dirs(sweep)):   # packages, kernel path, threads, commit
        log.warning("%s", line)
    unfinished = unfinished_jobs(sweep, find_run_dirs(sweep))
    if unfinished:
        log.warning("%d job folder(s) under %s hold no metrics.csv (preempted, failed or still running), left out "
                    "of the table: %s", len(unfinished), sweep, ", ".join(map(str, unfinished[:5]))
                    + (" ..." if len(unfinished) > 5 else ""))
    if by_world:
        metrics = per_world(metrics)
    in_domain, note = pick_in_domain(cfg, sweep, metrics["train_id"].unique())
    sets, metric, ci = (list(cfg.sets) if cfg.get("sets") else None), str(cfg.metric), float(cfg.ci)
    summary = summary_table(metrics, metric, ci, sets, in_domain, bounds)
    diff = None
    if cfg.get("baseline") is not None:
        baseline = resolve_baseline(str(cfg.baseline), metrics["train_id"].unique())
        diff = difference_table(metrics, baseline, metric, ci, sets, in_domain, bounds)
        if by_world:
            family = OmegaConf.to_container(cfg.family) if cfg.get("family") is not None else None
            diff = world_tests(diff, metrics, metric, str(cfg.get("side") or "greater"), family)
    scale, title = float(cfg.get("scale", 100)), f"{sweep.name}: {metric}"
    out.mkdir(parents=True, exist_ok=True)
    md = report_files.write_markdown(summary, out / "report.md", title, metric, ci, scale, diff, note,
                                     unit="world" if by_world else "seed")
    if by_world and diff is not None:   # the world tests after the tables
        atomic_write_text(md, [md.read_text(encoding="utf-8"), world_markdown(diff, str(cfg.get("side") or "greater"),
                                                                              ci, scale)])
    result = {"summary": summary, "diff": diff, "md": md,
              "csv": report_files.write_csv(summary, out / "report.csv"),
              "png": report_files.write_heatmap(summary, out / "report.png", title, scale)}
    if diff is not None:
        result["diff_csv"] = report_files.write_csv(diff, out / "report_diff.csv")
    else:   # a report_diff.csv of an earlier run with a baseline would contradict this report.md
        (out / "report_diff.csv").unlink(missing_ok=True)
    if cfg.get("wandb"):
        from nliforge.tracking.runs import log_report

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
