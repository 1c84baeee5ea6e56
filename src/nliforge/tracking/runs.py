"""Everything nliforge sends to Weights & Biases beyond Lightning's scalars, in one place, so train,
report and generate each make one call and stay W&B-free otherwise.

A training run logs its suite results as a table (train set, seed, eval set, metric, value), the data
map as an image, confidence/variability histograms with the ambiguous/hard/easy counts per gold label,
and uses its training set as a `dataset` artifact by reference (the files stay on disk; the manifest's
sha256 is in the artifact's metadata). A report joins the sweep's group as job_type=report: the tidy
table with null where a value does not exist (n = 1 has no spread) and a bar chart of each training
set's challenge average with its t-interval. Generation runs are in `nliforge.tracking.generation`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig

from nliforge.cartography.select import REGIONS, select_region
from nliforge.data.labels import LABELS
from nliforge.utils.atomic import read_json_file

REGION_FRACTION = 0.33   # Swayamdipta et al. (2020) train on the 33% most ambiguous / hard / easy
CHALLENGE = "challenge_avg"


def keep_files_in(out: Path) -> Path:
    """W&B's config and cache folders inside the run folder, set per run (not setdefault): in a
    multirun each job keeps its W&B files in its own folder."""
    folder = Path(out) / "wandb_files"
    folder.mkdir(parents=True, exist_ok=True)
    for var in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR"):
        os.environ[var] = str(folder)
    return folder


def artifact_name(text: str) -> str:
    """A W&B artifact name (letters, digits, '-', '_', '.') from an id such as `mnli+wanli` (`mnli_plus_wanli`;
    `mnli◇wanli` arrives as its ASCII id `mnli_rep_wanli`)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text.replace("+", "_plus_")).strip("_") or "dataset"


def null_table(frame: pd.DataFrame):
    """A wandb.Table of the frame with None (JSON null) where a value is NaN: a missing spread is
    not a number, and NaN would read as one in W&B's panels."""
    import wandb

    def plain(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        return v.item() if hasattr(v, "item") else v

    rows = [[plain(v) for v in row] for row in frame.astype(object).itertuples(index=False)]
    return wandb.Table(columns=[str(c) for c in frame.columns], data=rows)


def use_dataset(run, name: str, paths: Sequence[Path], metadata: Mapping):
    """Declare `paths` (by reference: file:// URIs, nothing uploaded) as a dataset artifact the run
    uses. Offline, W&B refuses `use_artifact`; the draft is then written with use_after_commit, the
    very record `use_artifact` sends for a new artifact online, so `wandb sync` marks it as used."""
    import wandb

    art = wandb.Artifact(artifact_name(name), type="dataset", metadata=dict(metadata))
    for path in paths:
        art.add_reference(Path(path).resolve().as_uri(), name=Path(path).name)
    if run.settings._offline:
        run._log_artifact(art, is_user_created=True, use_after_commit=True)
    else:
        run.use_artifact(art)
    return art


# -- training runs --------------------------------------------------------------------------------------
def wandb_run(loggers: Iterable):
    """The W&B run behind a Lightning WandbLogger among `loggers`, else None."""
    for lg in loggers:
        if type(lg).__name__ == "WandbLogger":
            return lg.experiment
    return None


def suite_table(results: Mapping[str, Mapping[str, float]], train_id: str, seed: int) -> pd.DataFrame:
    """The suite results in metrics.csv's long form, with W&B-readable column names."""
    rows = [(train_id, seed, name, metric, float(value)) for name, metrics in results.items()
            for metric, value in metrics.items()]
    return pd.DataFrame(rows, columns=["train_set", "seed", "eval_set", "metric", "value"])


def region_counts(metrics: pd.DataFrame, fraction: float = REGION_FRACTION) -> pd.DataFrame:
    """How many of the `fraction` most ambiguous / hard / easy examples have each gold label: shows
    whether a training set's hard part is one label's problem."""
    rows = []
    for region in REGIONS:
        picked = metrics.loc[select_region(metrics, region, fraction), "gold"]
        for gold in range(len(LABELS)):
            rows.append((region, LABELS[gold], int((picked == gold).sum()), len(picked)))
    return pd.DataFrame(rows, columns=["region", "label", "count", "region_size"])


def log_training_run(loggers: Iterable, cfg: DictConfig, out: Path, results: Mapping) -> None:
    """Tables, images and the training-set artifact of a finished training run (no-op without W&B)."""
    run = wandb_run(loggers)
    if run is None:
        return
    import wandb

    out = Path(out)
    manifest = read_json_file(out / "train_set.manifest.json")
    files = [p for p in (out / "train_set.manifest.json", out / "train_set.jsonl") if p.exists()]
    use_dataset(run, f"trainset-{manifest['train_id_ascii']}", files, manifest)
    payload = {"suite/results": wandb.Table(dataframe=suite_table(results, manifest["train_id"], int(cfg.seed)))}
    dyn = cfg.callbacks.get("dynamics")
    if dyn is not None and dyn.get("enabled", False) and (Path(dyn.dir) / "metrics.parquet").exists():
        metrics = pd.read_parquet(Path(dyn.dir) / "metrics.parquet")
        labeled = metrics[metrics["gold"] >= 0]
        payload["dynamics/confidence"] = wandb.Histogram(labeled["confidence"].to_numpy(dtype=float))
        payload["dynamics/variability"] = wandb.Histogram(labeled["variability"].to_numpy(dtype=float))
        payload["dynamics/regions"] = wandb.Table(dataframe=region_counts(labeled))
        if dyn.get("data_map") and Path(dyn.data_map).exists():
            payload["dynamics/data_map"] = wandb.Image(str(dyn.data_map), caption=manifest["train_id"])
    run.log(payload)


# -- the sweep report -----------------------------------------------------------------------------------
def challenge_summary(metrics: pd.DataFrame, summary: pd.DataFrame, metric: str, ci: float) -> pd.DataFrame:
    """Per training set: the mean over seeds of each seed's average over its challenge sets (the
    summary's eval sets not flagged in-domain for it), with summary_table's t-interval. A seed that
    lacks one of those sets is left out rather than averaged over fewer sets."""
    from nliforge.evaluation.table import summary_table

    rows = []
    for train_id, cells in summary.groupby("train_id", sort=False):
        sets = set(cells.loc[~cells["in_domain"].astype(bool), "eval_set"])
        mine = metrics[(metrics["train_id"] == train_id) & (metrics["metric"] == metric)
                       & metrics["eval_set"].isin(sets)]
        for seed, got in mine.groupby("seed"):
            if sets and set(got["eval_set"]) == sets:
                rows.append({"train_id": train_id, "seed": seed, "eval_set": CHALLENGE, "metric": metric,
                             "value": float(got["value"].mean())})
    if not rows:
        return pd.DataFrame(columns=["train_id", "mean", "std", "n", "ci_low", "ci_high"])
    table = summary_table(pd.DataFrame(rows), metric, ci)
    return table[["train_id", "mean", "std", "n", "ci_low", "ci_high"]]


def challenge_figure(challenge: pd.DataFrame, title: str):
    """Bars of each training set's challenge average with its interval (none for n = 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    means = challenge["mean"].to_numpy(dtype=float)
    low = (means - challenge["ci_low"].to_numpy(dtype=float))
    high = (challenge["ci_high"].to_numpy(dtype=float) - means)
    err = [[0.0 if math.isnan(v) else v for v in low], [0.0 if math.isnan(v) else v for v in high]]
    fig, ax = plt.subplots(figsize=(1.2 * len(challenge) + 2.5, 3.5))
    ax.bar(challenge["train_id"], means, yerr=err, capsize=4, color="tab:blue")
    ax.set_ylabel("challenge average (mean over seeds)")
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    return fig


def log_report(summary: pd.DataFrame, metrics: pd.DataFrame, cfg: DictConfig, sweep: Path, out: Path) -> str:
    """One W&B run in the sweep's group (job_type=report): the tidy table with nulls, the challenge
    averages as a table, a bar chart and an image with intervals. Always finished, so a failure
    cannot leave a run open. Files go to $WANDB_DIR when set, else the report folder. Returns the run dir."""
    import matplotlib.pyplot as plt
    import wandb

    metric, ci = str(cfg.metric), float(cfg.ci)
    group = str(cfg.get("wandb_group") or sweep.name)
    run = wandb.init(project=str(cfg.get("wandb_project", "nliforge")), name=f"report-{sweep.name}", group=group,
                     job_type="report", dir=os.environ.get("WANDB_DIR", str(out)),
                     config={"sweep": str(sweep), "metric": metric, "ci": ci})
    try:
        challenge = challenge_summary(metrics, summary, metric, ci)
        fig = challenge_figure(challenge, f"{sweep.name}: {metric}, challenge average ({ci:.0%} interval)")
        run.log({"report": null_table(summary), "challenge_avg": null_table(challenge),
                 "challenge_avg_bar": wandb.plot.bar(null_table(challenge[["train_id", "mean"]]), "train_id", "mean",
                                                     title=f"challenge average ({metric})"),
                 "challenge_avg_interval": wandb.Image(fig)})
        plt.close(fig)
        return str(run.dir)
    finally:
        wandb.finish()
