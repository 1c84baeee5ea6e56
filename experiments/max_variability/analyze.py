"""Estimated max variability (model A, H held out) vs true variability (model B, H trained on).

    python -m experiments.max_variability.analyze SCRATCH OUT_DIR SEED [SEED ...]

Reads SCRATCH/h.jsonl and the runs SCRATCH/seed<S>/{a,b}; writes OUT_DIR/results.csv,
OUT_DIR/results.md and OUT_DIR/scatter_seed<first seed>.png. Uses the WANLI pipeline's own code
path: ClassifierRun.epoch_probs (each epoch checkpoint in eval mode, as the `variability` stage)
and estimated_max_variability (Eq. 1); true variability = cartography `variability` of model
B's training dynamics.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from scipy.stats import pearsonr, spearmanr

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nliforge.cartography.metrics import estimated_max_variability, variability  # noqa: E402
from nliforge.data.jsonl import read_jsonl  # noqa: E402
from nliforge.data.labels import LABEL2ID  # noqa: E402
from nliforge.engine.classifier import ClassifierRun  # noqa: E402


def test_acc(run: Path) -> float:
    m = pd.read_csv(run / "metrics.csv")
    return float(m[(m.eval_set == "synthetic_test") & (m.metric == "acc")].value.iloc[0])


def one_seed(scratch: Path, seed: int, held) -> tuple[dict, np.ndarray, np.ndarray]:
    pairs = [(r.premise, r.hypothesis) for r in held]
    uids = [r.uid for r in held]
    gold = np.array([LABEL2ID[r.label] for r in held])
    run_a, run_b = ClassifierRun(scratch / f"seed{seed}" / "a"), ClassifierRun(scratch / f"seed{seed}" / "b")
    probs_a = run_a.epoch_probs(pairs)                       # (E, |H|, 3), no labels used
    est = estimated_max_variability(probs_a)
    true = run_b.metrics().loc[uids, "variability"].to_numpy(dtype=float)   # B's training dynamics
    true_ckpt = variability(run_b.epoch_probs(pairs), gold)  # B's epoch checkpoints, eval mode
    r, p = pearsonr(est, true)
    final = np.clip(probs_a[-1], 1e-12, 1.0)                 # A's final epoch: label-free baselines
    entropy = -(final * np.log(final)).sum(-1)
    one_minus_max = 1.0 - final.max(-1)
    row = {"seed": seed, "n_heldout": len(held), "epochs": probs_a.shape[0],
           "pearson_r": r, "pearson_p": p, "spearman_rho": spearmanr(est, true).statistic,
           "pearson_r_vs_ckpt_true": pearsonr(est, true_ckpt).statistic,
           "pearson_r_entropy": pearsonr(entropy, true).statistic,
           "pearson_r_1_minus_max": pearsonr(one_minus_max, true).statistic,
           "mean_est_max_var": est.mean(), "mean_true_var": true.mean(),
           "acc_test_A": test_acc(run_a.root), "acc_test_B": test_acc(run_b.root)}
    return row, est, true


def main(scratch: str, out_dir: str, seeds: list[int]) -> None:
    scratch, out = Path(scratch), Path(out_dir)
    held = read_jsonl(scratch / "h.jsonl")
    rows, first = [], None
    for seed in seeds:
        row, est, true = one_seed(scratch, seed, held)
        rows.append(row)
        first = first or (seed, est, true, row["pearson_r"])
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
    df = pd.DataFrame(rows)
    df.to_csv(out / "results.csv", index=False, float_format="%.6g")
    r = df.pearson_r
    lines = ["| seed | Pearson r | p-value | Spearman ρ | r vs eval-mode true var. | mean est. max var. "
             "| mean true var. | test acc A | test acc B |", "|---|---|---|---|---|---|---|---|---|"]
    for _, x in df.iterrows():
        lines.append(f"| {int(x.seed)} | {x.pearson_r:.3f} | {x.pearson_p:.1e} | {x.spearman_rho:.3f} | "
                     f"{x.pearson_r_vs_ckpt_true:.3f} | {x.mean_est_max_var:.3f} | {x.mean_true_var:.3f} | "
                     f"{x.acc_test_A:.3f} | {x.acc_test_B:.3f} |")
    lines.append(f"| **mean ± std** | **{r.mean():.3f} ± {r.std(ddof=1):.3f}** | | "
                 f"{df.spearman_rho.mean():.3f} ± {df.spearman_rho.std(ddof=1):.3f} | "
                 f"{df.pearson_r_vs_ckpt_true.mean():.3f} ± {df.pearson_r_vs_ckpt_true.std(ddof=1):.3f} | | | | |")
    lines += ["", "Baselines (label-free, model A's final epoch): Pearson r with the true variability.", "",
              "| seed | Eq. 1 | entropy | 1 − max p |", "|---|---|---|---|"]
    for _, x in df.iterrows():
        lines.append(f"| {int(x.seed)} | {x.pearson_r:.3f} | {x.pearson_r_entropy:.3f} | {x.pearson_r_1_minus_max:.3f} |")
    lines.append(f"| **mean ± std** | {r.mean():.3f} ± {r.std(ddof=1):.3f} | "
                 f"{df.pearson_r_entropy.mean():.3f} ± {df.pearson_r_entropy.std(ddof=1):.3f} | "
                 f"{df.pearson_r_1_minus_max.mean():.3f} ± {df.pearson_r_1_minus_max.std(ddof=1):.3f} |")
    lines.append(f"\n|H| = {len(held)} held-out examples; std over seeds is the sample std (ddof=1). "
                 "Paper (WANLI App. A, RoBERTa-large on MNLI, 3,928 held out): Pearson r = 0.527.")
    (out / "results.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    seed, est, true, r0 = first
    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.scatter(est, true, s=6, alpha=0.4)
    ax.set_xlabel("estimated max variability (model A, H held out)")
    ax.set_ylabel("variability (model B, H in training)")
    ax.set_title(f"seed {seed}: Pearson r = {r0:.3f} (n = {len(est)})")
    fig.tight_layout()
    fig.savefig(out / f"scatter_seed{seed}.png", dpi=120)
    print(f"Pearson r mean ± std over seeds {seeds}: {r.mean():.3f} ± {r.std(ddof=1):.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]])
