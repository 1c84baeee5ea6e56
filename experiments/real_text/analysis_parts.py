"""R5 of experiments/real_text/README.md, parts: R2a, R2b, R2c, R3a and R3b with a disjoint part of the real data
as the unit. One number per part (its training seeds averaged), then the mean over parts with its 95% t
interval (experiments/summary_stats.py) and the verdict by the project's rule.

    python -m experiments.real_text.analysis_parts SCRATCH OUT_DIR   # -> results_parts.md, results_parts.csv

SCRATCH is run_parts.sh's: sets/<set>.jsonl (parts.py) and <arm>_p<k>/seed<S>/ runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from nliforge.cartography.metrics import compute_metrics
from nliforge.cartography.store import load_dynamics
from nliforge.data.jsonl import read_jsonl
from experiments.real_text.artifacts import is_negation, majority, unigram_z
from experiments.real_text.common import MCCOY_KEY, boot_idx, run_acc, run_dirs
from experiments.real_text.datamap import METRICS, regions
from experiments.real_text.parts import PARTS
from experiments.summary_stats import t_interval, verdict

HERE = Path(__file__).resolve().parent

CLAIMS = {   # criterion -> (what one part gives, unit)
    "R5-R3a": ("Spearman rho(seed-averaged confidence, McCoy) on the part's training pairs", ""),
    "R5-R3b-easy-ambiguous": ("McCoy mean, easy - ambiguous region", ""),
    "R5-R3b-ambiguous-hard": ("McCoy mean, ambiguous - hard region", ""),
    "R5-R2a": ("hypothesis-only accuracy - majority share, MNLI part's test pairs", "points"),
    "R5-R2b": ("hypothesis-only accuracy - majority share, SNLI part's test pairs", "points"),
    "R5-R2c": ("z of the best negation word for contradiction - the part's Bonferroni bound", "z"),
}


def part_set(scratch: Path, corpus: str, k: int, side: str) -> list:
    return list(read_jsonl(scratch / "sets" / f"exp_real_text_{corpus}_p{k}_{side}.jsonl"))


def datamap_part(scratch: Path, k: int) -> dict[str, float] | None:
    """R3a and R3b for part k from its r3 runs: the metrics averaged over seeds, joined with McCoy's c / 100."""
    runs = run_dirs(scratch, f"r3_p{k}")
    if not runs:
        return None
    truth = pd.Series({r.uid: int(r.meta[MCCOY_KEY]) / 100 for r in part_set(scratch, "mnli", k, "train")}, name="mccoy")
    stacked = pd.concat([compute_metrics(load_dynamics(run / "dynamics"))[list(METRICS)].astype(float)
                         for run in runs.values()])
    frame = stacked.groupby(level=0).mean().join(truth, how="inner")
    reg = regions(frame, boot_idx(len(frame), seed=0)[:1])
    return {"R5-R3a": float(spearmanr(frame["confidence"], frame["mccoy"]).statistic),
            "R5-R3b-easy-ambiguous": reg["easy-ambiguous"]["mean"],
            "R5-R3b-ambiguous-hard": reg["ambiguous-hard"]["mean"], "n_seeds": len(runs)}


def hyp_only_part(scratch: Path, corpus: str, arm: str, k: int) -> tuple[float, int] | None:
    """(seed-averaged accuracy − the test part's majority share, in points; seeds) for part k."""
    runs = run_dirs(scratch, f"{arm}_p{k}")
    if not runs:
        return None
    share = majority(part_set(scratch, corpus, k, "test"))[0]
    acc = np.mean([run_acc(run, f"exp_real_text_{corpus}_p{k}_test")[0] for run in runs.values()])
    return 100 * (acc - share), len(runs)


def negation_part(scratch: Path, k: int) -> tuple[float, str]:
    """R2c on all pairs of MNLI part k: the best negation word's contradiction z − the Bonferroni bound."""
    frame, bound, _ = unigram_z(part_set(scratch, "mnli", k, "train") + part_set(scratch, "mnli", k, "test"))
    top = [w for w, _ in frame.attrs["top"]["contradiction"]]
    neg = frame[frame["feature"].map(is_negation)].sort_values("z_contradiction", ascending=False).iloc[0]
    rank = top.index(neg["feature"]) + 1 if neg["feature"] in top else "> 10"
    return float(neg["z_contradiction"] - bound), f"{neg['feature']} z {neg['z_contradiction']:.2f}, rank {rank}, bound {bound:.2f}"


def per_part(scratch: Path) -> pd.DataFrame:
    rows = []
    for k in range(1, PARTS + 1):
        dm = datamap_part(scratch, k)
        for crit in ("R5-R3a", "R5-R3b-easy-ambiguous", "R5-R3b-ambiguous-hard"):
            if dm is not None:
                rows.append({"criterion": crit, "part": k, "value": dm[crit], "note": f"{dm['n_seeds']} seeds"})
        for crit, corpus, arm in (("R5-R2a", "mnli", "r2a"), ("R5-R2b", "snli", "r2b")):
            got = hyp_only_part(scratch, corpus, arm, k)
            if got is not None:
                rows.append({"criterion": crit, "part": k, "value": got[0], "note": f"{got[1]} seeds"})
        margin, note = negation_part(scratch, k)
        rows.append({"criterion": "R5-R2c", "part": k, "value": margin, "note": note})
    return pd.DataFrame(rows, columns=["criterion", "part", "value", "note"])


def summary_lines(parts: pd.DataFrame) -> list[str]:
    lines = ["| criterion | per part (1-5) | mean [95% t over parts] | n_worlds | verdict |", "|---|---|---|---|---|"]
    verdicts = {}
    for crit, (what, unit) in CLAIMS.items():
        values = parts.loc[parts["criterion"] == crit, "value"].tolist()
        e = t_interval(values)
        verdicts[crit] = verdict("tested", e)
        cells = ", ".join(f"{v:+.3f}" for v in values) or "not run"
        lines.append(f"| {crit}: {what} | {cells} | {e.estimate:+.3f} [{e.low:+.3f}, {e.high:+.3f}] {unit} | "
                     f"{e.n_worlds} | **{verdicts[crit]}** |")
    both = [verdicts["R5-R3b-easy-ambiguous"], verdicts["R5-R3b-ambiguous-hard"]]
    r3b = "reproduced" if all(v == "reproduced" for v in both) else "not shown (needs both differences)"
    return lines + ["", f"**R5-R3b** (both differences above 0): **{r3b}**", ""]


def main(scratch: Path, out: Path) -> None:
    parts = per_part(scratch)
    notes = parts[parts["criterion"] == "R5-R2c"][["part", "note"]].itertuples(index=False)
    lines = ["# R5, parts: the real-text claims with a disjoint part of the data as the unit (analysis_parts.py)", "",
             "One value per part (training seeds averaged within it); over parts the mean and its 95% Student t",
             "interval (n - 1 df); verdicts by experiments/summary_stats.py.", "", *summary_lines(parts),
             "R2c per part: " + "; ".join(f"part {p}: {n}" for p, n in notes), ""]
    (out / "results_parts.md").write_text("\n".join(lines))
    parts.to_csv(out / "results_parts.csv", index=False, float_format="%.5f")
    print("\n".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
