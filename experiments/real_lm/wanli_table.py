"""The real-LM WANLI tables (README, WANLI with SmolLM2) from the scratch folder of `wanli_run.sh`.

    python -m experiments.real_lm.wanli_table --scratch /tmp/nliforge_exp/real_lm_wanli --out wanli_table.md

1. Accuracy per row (D0, floor, D0 + W, D0 ◇ W, ceiling) and eval set, mean ± std over the seeds.
2. The primary number, the mean over the three challenge splits: each row's difference to D0
   and to the floor (nliforge-report's differences: paired by training seed, 95% t interval), and the gap closure
   (row − floor) / (ceiling − floor) per seed, mean ± std.
3. Per stage of the generation run: what came in, what went out and why it was dropped, on SmolLM2's
   output and on the stand-in LM's.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import Counter
from pathlib import Path

import pandas as pd

from nliforge.evaluation.differences import seed_difference
from nliforge.evaluation.table import collect_metrics, find_run_dirs
from nliforge.engine.run_folder import RunFolder

ROWS = {"1_d0": "D0", "2_floor": "floor: D0 + #W biased", "3_plus": "D0 + W", "4_rep": "D0 ◇ W",
        "5_ceiling": "ceiling: D0 + #W unbiased"}
CHALLENGES = ["synthetic_challenge_negation", "synthetic_challenge_overlap", "synthetic_challenge_length"]


def row_metrics(sweep: Path) -> pd.DataFrame:
    """Accuracy per (row, seed, eval_set), with the challenge mean as one more eval set."""
    frames = []
    for folder, name in ROWS.items():
        if (sweep / folder).is_dir():
            m = collect_metrics(find_run_dirs(sweep / folder))
            m = m[m["metric"] == "acc"].assign(row=name)
            mean = m[m["eval_set"].isin(CHALLENGES)].groupby("seed", as_index=False)["value"].mean()
            frames += [m, mean.assign(row=name, eval_set="challenge mean", metric="acc")]
    return pd.concat(frames, ignore_index=True)


def interval(values: pd.Series, base: pd.Series, scale: float = 100.0) -> str:
    """values − base over seeds with its 95% t interval, as `nliforge-report baseline=` computes it
    (evaluation.differences: paired by seed when both have the same seeds, Welch otherwise)."""
    d = seed_difference(values, base)
    if math.isnan(d["ci_low"]):
        return f"{scale * d['diff']:+.1f}"
    return f"{scale * d['diff']:+.1f} [{scale * d['ci_low']:+.1f}, {scale * d['ci_high']:+.1f}]"


def accuracy_table(m: pd.DataFrame) -> list[str]:
    sets = [s for s in m["eval_set"].drop_duplicates() if s != "challenge mean"] + ["challenge mean"]
    lines = ["| row | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
    for name in [r for r in ROWS.values() if r in set(m["row"])]:
        cells = []
        for s in sets:
            v = m[(m["row"] == name) & (m["eval_set"] == s)]["value"]
            cells.append(f"{100 * v.mean():.1f} ± {100 * v.std(ddof=1):.1f}" if len(v) > 1 else f"{100 * v.mean():.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def closure_table(m: pd.DataFrame) -> list[str]:
    cm = m[m["eval_set"] == "challenge mean"].pivot(index="seed", columns="row", values="value")
    floor, ceiling, d0 = ROWS["2_floor"], ROWS["5_ceiling"], ROWS["1_d0"]
    lines = ["| row | − D0 | − floor | gap closure (row − floor) / (ceiling − floor) |", "|---|---|---|---|"]
    for name in [r for r in ROWS.values() if r in cm.columns]:
        vs_d0 = interval(cm[name], cm[d0])
        vs_floor = interval(cm[name], cm[floor]) if floor in cm else "–"
        if floor in cm and ceiling in cm:
            g = list((cm[name] - cm[floor]) / (cm[ceiling] - cm[floor]))
            gap = f"{statistics.mean(g):.2f} ± {statistics.stdev(g):.2f}" if len(g) > 1 else f"{g[0]:.2f}"
        else:
            gap = "–"
        lines.append(f"| {name} | {vs_d0} | {vs_floor} | {gap} |")
    return lines


def drops(run: Path) -> dict[str, tuple[int, int, Counter]]:
    """stage -> (in, out, drop reasons) of a generation run."""
    out = {}
    for stage, info in RunFolder(run).manifest()["stages"].items():
        out[stage] = (info.get("count_in"), info.get("count_out"), Counter(info.get("drops") or {}))
    return out


def drop_table(real: dict, stand_in: dict) -> list[str]:
    lines = ["| stage | SmolLM2: in → out | drops (reason: count) | stand-in LM: in → out | drops |", "|---|---|---|---|---|"]
    for stage in [s for s in real if s in ("generate", "parse", "heuristics", "variability")]:
        cells = []
        for run in (real, stand_in):
            n_in, n_out, why = run.get(stage, (None, None, Counter()))
            cells += [f"{n_in} → {n_out}", ", ".join(f"{k}: {v}" for k, v in why.most_common()) or "–"]
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    return lines


def reviewer_words(reviewer: str) -> str:
    """The review report's reviewer id in words: `teacher:classifier` is the WANLI run's classifier on D0
    (review=teacher); any other folder is the annotators' stand-in (review=annotator, common.sh)."""
    if reviewer == "teacher:classifier":
        return "the teacher (`review=teacher`: the WANLI run's classifier on D0)"
    return f"the annotators' stand-in (`review=annotator`: `{reviewer}`, trained on the unbiased split)"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    m = row_metrics(args.scratch / "sweep")
    m.to_csv(args.out.with_suffix(".csv"), index=False)
    review = json.loads((args.scratch / "wanli_smollm2" / "review" / "review_report.json").read_text())
    text = ["# WANLI with SmolLM2 on the biased world: accuracy (%), mean ± std over training seeds", "",
            f"W = {review['kept']} pairs kept by {reviewer_words(review['reviewer'])} of {review['examples']} filtered generations.", "",
            *accuracy_table(m), "", "## Challenge mean: differences (points, 95% t interval over paired seeds) and gap closure", "",
            *closure_table(m), "", "## Per stage: SmolLM2's output vs the stand-in LM's", "",
            *drop_table(drops(args.scratch / "wanli_smollm2"), drops(args.scratch / "wanli_standin")), "",
            f"Per seed: `{args.out.with_suffix('.csv').name}`."]
    args.out.write_text("\n".join(text) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
