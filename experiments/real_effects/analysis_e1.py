"""E1's per-world values (README.md "E1", "E1 at 3 epochs", "E1 at 6 epochs"), for analysis.py: HANS
augmentation (plus, diamond) against the mnli arm per heuristic, the gates G1 (the mnli arm learned MNLI) and,
for the later attempts, G2 (the augmented arm fits its HANS-like pairs), MNLI-hard, and world 1's diagnosis."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from experiments.real_effects.analysis_e2 import largest_share
from experiments.real_effects.analysis_record import finished, level_table, metrics
from experiments.real_text.common import load_named

HEUR = {"lo": "lexical_overlap", "sub": "subsequence", "con": "constituent"}
LABELS = ("entailment", "non-entailment")
MCCOY_KEY = "number of correct responses (out of 100)"
HARD_MAX = 20
ARMS = ("mnli", "plus", "diamond")
# the fit gates: the second attempt's G2 over the worlds' mean (accuracy − 50, interval above 0); the third's
# per world (accuracy − 65, every world ≥ 0) for plus (G2, gating E1a) and diamond (G2d, gating E1b)
FIT_FLOOR = {"3ep:": 50.0, "6ep:": 65.0}
EVERY_WORLD = ("6ep:G2", "6ep:G2d")
FAMILIES = {f"{p}{fam}": [f"{p}{fam}-{h}" for h in HEUR] for p in ("", "3ep:", "6ep:") for fam in ("E1a", "E1b")}
GATES = ("G1", "3ep:G1", "3ep:G2", "6ep:G1", "6ep:G2", "6ep:G2d")
GATED = {"6ep:E1a": ["6ep:G1", "6ep:G2"], "6ep:E1b": ["6ep:G1", "6ep:G2d"]}
WHY = {"6ep:G2": "augmentation not learned", "6ep:G2d": "augmentation not learned"}
DESCRIPTION = {
    "G1": "gate: mnli arm's MNLI test accuracy − the test pairs' majority share (points)",
    **{f"E1a-{h}": f"plus − mnli, HANS non-entailment accuracy, {n} (points)" for h, n in HEUR.items()},
    **{f"E1b-{h}": f"diamond − mnli, HANS non-entailment accuracy, {n} (points)" for h, n in HEUR.items()},
    "3ep:G1": "gate: mnli_3ep's MNLI test accuracy − the test pairs' majority share (points)",
    "3ep:G2": "gate: plus_3ep's last-epoch in-training accuracy on its HANS-like pairs − 50 (points)",
    **{f"3ep:E1a-{h}": f"plus_3ep − mnli_3ep, HANS non-entailment accuracy, {n} (points)" for h, n in HEUR.items()},
    **{f"3ep:E1b-{h}": f"diamond_3ep − mnli_3ep, HANS non-entailment accuracy, {n} (points)" for h, n in HEUR.items()},
    "6ep:G1": "gate: mnli_6ep's MNLI test accuracy − the test pairs' majority share (points)",
    "6ep:G2": "gate: plus_6ep's last-epoch in-training accuracy on its HANS-like pairs − 65 (every world ≥ 0)",
    "6ep:G2d": "gate: diamond_6ep's last-epoch in-training accuracy on its HANS-like pairs − 65 (every world ≥ 0)",
    **{f"6ep:E1a-{h}": f"plus_6ep − mnli_6ep, HANS non-entailment accuracy, {n} (points)" for h, n in HEUR.items()},
    **{f"6ep:E1b-{h}": f"diamond_6ep − mnli_6ep, HANS non-entailment accuracy, {n} (points)" for h, n in HEUR.items()},
}


def fit_gates(prefix: str, w: int, runs: dict[str, Path]) -> list[dict]:
    """World w's fit gates of an attempt (`prefix`): G2 = the plus arm's last-epoch in-training accuracy on its
    HANS-like pairs − FIT_FLOOR; from the third attempt on, G2d the same for the diamond arm."""
    floor = FIT_FLOOR[prefix]
    arms = {"G2": "plus", **({"G2d": "diamond"} if f"{prefix}G2d" in GATES else {})}
    return [{"criterion": f"{prefix}{g}", "world": w, "value": 100 * train_acc(runs[a])[-1][0] - floor}
            for g, a in arms.items()]


def hard_acc(run: Path, w: int) -> float:
    """Accuracy on the world's MNLI test pairs with McCoy count <= HARD_MAX (from the saved predictions)."""
    counts = {r.uid: int(r.meta[MCCOY_KEY]) for r in load_named(f"exp_real_effects_w{w}_mnli_test")}
    p = pd.read_csv(run / "predictions" / f"exp_real_effects_w{w}_mnli_test.csv")
    p = p[p.uid.map(counts) <= HARD_MAX]
    return float((p.gold == p.pred).mean()), len(p)


def entail_share(run: Path, w: int) -> float:
    p = pd.read_csv(run / "predictions" / f"exp_real_effects_w{w}_hans.csv")
    return float((p.pred == "entailment").mean())


def train_acc(run: Path) -> list[tuple[float, float]]:
    """Per epoch (in-training probabilities): accuracy on the run's HANS-like training pairs and on its MNLI pairs."""
    import numpy as np

    out = []
    for f in sorted((run / "dynamics").glob("epoch_*.parquet")):
        d = pd.read_parquet(f)
        p = d[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy()
        ok = p.argmax(1) == d["gold"].to_numpy()
        hans = d["uid"].str.startswith("hans").to_numpy()
        out.append((float(ok[hans].mean()) if hans.any() else math.nan, float(ok[~hans].mean())))
    return out


def e1_rows(scratch: Path, exp: str = "e1", suffix: str = "", prefix: str = "") -> tuple[list[dict], list[dict]]:
    """E1's per-world values; with exp="diag", suffix="_3ep", prefix="3ep:" the second attempt at 3 epochs
    (its arms' folders are <arm>_3ep, its criteria 3ep:G1, 3ep:G2, 3ep:E1a-lo ...), with exp="e1_6ep",
    suffix="_6ep", prefix="6ep:" the third at 6 epochs."""
    rows, levels = [], []
    arms = {a: f"{a}{suffix}" for a in ARMS}
    for w, folders in finished(scratch, exp, arms.values()).items():
        runs = {a: folders[f] for a, f in arms.items()}
        m = {a: metrics(r) for a, r in runs.items()}
        hans, test = f"exp_real_effects_w{w}_hans", f"exp_real_effects_w{w}_mnli_test"
        majority = largest_share([r.label for r in load_named(test)])
        rows.append({"criterion": f"{prefix}G1", "world": w, "value": 100 * (m["mnli"][(test, "acc")] - majority)})
        if prefix:   # G2 (G2d): the plus (diamond) arm's last-epoch in-training accuracy on its HANS-like pairs
            rows += fit_gates(prefix, w, runs)
        for a in ARMS:
            hard, n_hard = hard_acc(runs[a], w)
            lv = {"world": w, "arm": f"{a}{suffix}", "hans": m[a][(hans, "acc")], "mnli_test": m[a][(test, "acc")],
                  "mnli_hard": hard, "n_hard": n_hard, "hans_pred_entailment": entail_share(runs[a], w)}
            for h, name in HEUR.items():
                for lab in LABELS:
                    lv[f"{h}:{lab}"] = m[a][(hans, f"acc@{name}@{lab}")]
            lv.update({k[1].removeprefix("acc@subcase@"): v for k, v in m[a].items()
                       if k[0] == hans and k[1].startswith("acc@subcase@")})
            levels.append(lv)
        lev = {x["arm"].removesuffix(suffix): x for x in levels if x["world"] == w}
        for arm, fam in (("plus", "E1a"), ("diamond", "E1b")):
            for h in HEUR:
                ne, e = f"{h}:non-entailment", f"{h}:entailment"
                rows.append({"criterion": f"{prefix}{fam}-{h}", "world": w, "value": 100 * (lev[arm][ne] - lev["mnli"][ne])})
                rows.append({"criterion": f"{prefix}{fam}-{h}-ent", "world": w, "value": 100 * (lev[arm][e] - lev["mnli"][e])})
                bal = lambda x: (x[ne] + x[e]) / 2  # noqa: E731
                rows.append({"criterion": f"{prefix}{fam}-{h}-bal", "world": w, "value": 100 * (bal(lev[arm]) - bal(lev["mnli"]))})
            for q in ("hans", "mnli_test", "mnli_hard"):
                rows.append({"criterion": f"{prefix}{fam}-{q}", "world": w, "value": 100 * (lev[arm][q] - lev["mnli"][q])})
    return rows, levels


def diagnosis(scratch: Path) -> list[str]:
    """E1's diagnosis on world 1 (README): the E1 arms (1 epoch) beside the same sets trained 3 epochs."""
    runs = {"mnli (1 epoch)": scratch / "e1/w1/mnli", "plus (1 epoch)": scratch / "e1/w1/plus",
            "diamond (1 epoch)": scratch / "e1/w1/diamond", "mnli_3ep": scratch / "diag/w1/mnli_3ep",
            "plus_3ep": scratch / "diag/w1/plus_3ep"}
    runs = {k: v for k, v in runs.items() if (v / "metrics.csv").is_file()}
    if not runs:
        return []
    hans, test = "exp_real_effects_w1_hans", "exp_real_effects_w1_mnli_test"
    cells = [f"acc@{n}@{lab}" for n in HEUR.values() for lab in LABELS]
    md = ["", "## E1 diagnosis, world 1 (README \"E1 diagnosis\"; %)", "",
          "| run | HANS | MNLI test | " + " | ".join(c.removeprefix("acc@") for c in cells)
          + " | HANS predicted entailment | training accuracy per epoch: HANS-like / MNLI pairs |",
          "|---" * (len(cells) + 5) + "|"]
    for name, run in runs.items():
        m = metrics(run)
        tr = "; ".join(f"{100 * h:.1f} / {100 * x:.1f}" if not math.isnan(h) else f"– / {100 * x:.1f}"
                       for h, x in train_acc(run))
        md.append(f"| {name} | {100 * m[(hans, 'acc')]:.1f} | {100 * m[(test, 'acc')]:.1f} | "
                  + " | ".join(f"{100 * m[(hans, c)]:.1f}" for c in cells)
                  + f" | {100 * entail_share(run, 1):.1f} | {tr} |")
    return md


def e1_sections(lv: pd.DataFrame) -> list[str]:
    cols = ["hans", "mnli_test", "mnli_hard", "hans_pred_entailment"] + [f"{h}:{lab}" for h in HEUR for lab in LABELS]
    md = level_table("E1", lv, cols, lv.arm.unique())
    subs = [c for c in lv.columns if "/" in c or c.startswith(("le_", "ln_", "se_", "sn_", "ce_", "cn_"))]
    md += ["", "## E1 per subcase (mean over worlds, %; 40 pairs per world each)", "",
           "| subcase | " + " | ".join(lv.arm.unique()) + " |", "|---" * (lv.arm.nunique() + 1) + "|"]
    for c in sorted(subs):
        md.append(f"| {c} | " + " | ".join(f"{100 * lv[lv.arm == a][c].mean():.1f}" for a in lv.arm.unique()) + " |")
    return md + ["", f"MNLI-hard pairs per world (McCoy count ≤ {HARD_MAX}): "
                 + ", ".join(str(int(x)) for x in lv[lv.arm == "mnli"].n_hard)]
