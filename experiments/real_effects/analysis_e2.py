"""E2's per-world values (README.md "E2 criteria"), for analysis.py: per arm, accuracy on the revised test pairs
(Kaushik et al.'s 800 revised premises, 800 revised hypotheses), on their originals, and paired counterfactual
accuracy (both members right), read from the saved predictions and metrics of `e2/w<k>/<arm>`; per world the
criteria E2-<N> (difference of differences), the gates G2-<arm>, and what is reported beside them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

DOSES = (333, 666, 1332)
ARMS = ("base", *(f"{kind}_{n}" for n in DOSES for kind in ("human", "mnli")))
CF = {"rp": "snli_cad_cf_premise_test", "rh": "snli_cad_cf_hypothesis_test"}
# the columns of arm_levels shown per arm in results.md (E2 and E3 alike)
LEVEL_COLUMNS = ["rev", "rp", "rh", "orig", "cf_rp", "cf_rh", "fit", "top_pred"]
FAMILIES = {"E2": [f"E2-{n}" for n in DOSES]}
GATES = tuple(f"G2-{a}" for a in ARMS)
DESCRIPTION = {
    **{f"G2-{a}": f"gate: {a}'s accuracy on the original test pairs − their largest class (points)" for a in ARMS},
    **{f"E2-{n}": f"(human_{n} − mnli_{n}) on the revised tests − (human_{n} − mnli_{n}) on their originals "
                  "(points)" for n in DOSES},
}


def arm_levels(run: Path) -> dict[str, float]:
    """Accuracies (0-1) of one E2 run: rp, rh (revised members), rev (their mean), orig (original members of
    both sets), cf_rp, cf_rh (both members right, from metrics.csv); and what says whether it learned: fit (its
    last epoch's in-training accuracy on its own pairs) and top_pred (the share of its most frequent prediction
    over the 3,200 test pairs; 1.0 = one class for every pair)."""
    m = pd.read_csv(run / "metrics.csv")
    metric = {(r.eval_set, r.metric): float(r.value) for r in m.itertuples()}
    out: dict[str, float] = {}
    originals, preds = [], []
    for key, name in CF.items():
        p = pd.read_csv(run / "predictions" / f"{name}.csv")
        preds += p.pred.tolist()
        ok = p.gold == p.pred
        cf = p.uid.str.endswith("/counterfactual")
        out[key] = float(ok[cf].mean())
        originals.append(ok[~cf])
        out[f"cf_{key}"] = metric[(name, "acc_cf")]
    out["rev"] = (out["rp"] + out["rh"]) / 2
    out["orig"] = float(pd.concat(originals).mean())
    out["top_pred"] = largest_share(preds)
    out["fit"] = last_epoch_fit(run)
    return out


def last_epoch_fit(run: Path) -> float:
    """The last epoch's in-training accuracy (argmax of the recorded probabilities against gold), NaN without
    training dynamics."""
    epochs = sorted((run / "dynamics").glob("epoch_*.parquet"))
    if not epochs:
        return float("nan")
    d = pd.read_parquet(epochs[-1])
    return float((d[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy().argmax(1) == d["gold"].to_numpy()).mean())


def largest_share(labels: list[str]) -> float:
    """The share of the most frequent label (the accuracy of always answering it)."""
    counts = Counter(labels)
    return max(counts.values()) / sum(counts.values())


def e2_rows(scratch: Path, original_labels: list[str], worlds=(1, 2, 3, 4, 5)) -> tuple[list[dict], list[dict]]:
    """Rows (criterion, world, value in points) for worlds where every E2 arm finished, and per-arm levels."""
    rows, levels = [], []
    largest = largest_share(original_labels)
    for w in worlds:
        runs = {a: scratch / "e2" / f"w{w}" / a for a in ARMS}
        if not all((r / "metrics.csv").is_file() for r in runs.values()):
            continue
        lev = {a: arm_levels(r) for a, r in runs.items()}
        levels += [{"world": w, "arm": a, **v} for a, v in lev.items()]
        rows += [{"criterion": f"G2-{a}", "world": w, "value": 100 * (v["orig"] - largest)} for a, v in lev.items()]
        for n in DOSES:
            h, m = lev[f"human_{n}"], lev[f"mnli_{n}"]
            rows.append({"criterion": f"E2-{n}", "world": w,
                         "value": 100 * ((h["rev"] - m["rev"]) - (h["orig"] - m["orig"]))})
            for k in ("rp", "rh", "orig", "cf_rp", "cf_rh"):
                rows.append({"criterion": f"E2-{n}-{k}", "world": w, "value": 100 * (h[k] - m[k])})
            for k in ("rev", "orig"):
                rows.append({"criterion": f"E2-{n}-human−base-{k}", "world": w,
                             "value": 100 * (h[k] - lev["base"][k])})
    return rows, levels
