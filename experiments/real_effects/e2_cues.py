"""E2's diagnosis (README.md "Results: E2"): how much one sentence alone says about the label in each arm's
training set. A bag-of-words logistic regression on the premise alone, and on the hypothesis alone, scored by
5-fold cross-validation on the arm's own pairs, minus the share of the set's largest class (points). Above 0:
a single-sentence cue a model can learn first; below 0: the cue learned on some pairs is wrong on the others
(a revision keeps one sentence and changes the label).

    NLIFORGE_DATA_DIR=... python -m experiments.real_effects.e2_cues experiments/real_effects   # after e2_sets.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score

from experiments.real_text.common import load_named

from experiments.real_effects.analysis_e2 import ARMS  # (this folder)

WORLDS = (1, 2, 3, 4, 5)


def cue_points(texts: list[str], labels: list[str], folds: int = 5, seed: int = 0) -> float:
    """Cross-validated accuracy of a bag-of-words logistic regression on `texts` − the largest class (points)."""
    x = CountVectorizer(binary=True).fit_transform(texts)
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    acc = cross_val_score(LogisticRegression(max_iter=2000), x, labels, cv=cv).mean()
    return 100 * (acc - max(Counter(labels).values()) / len(labels))


def main(out: Path) -> None:
    rows = []
    for w in WORLDS:
        for arm in ARMS:
            recs = load_named(f"exp_real_effects_w{w}_e2_{arm}")
            labels = [r.label for r in recs]
            rows.append({"world": w, "arm": arm, "pairs": len(recs),
                         "premise_only": cue_points([r.premise for r in recs], labels),
                         "hypothesis_only": cue_points([r.hypothesis for r in recs], labels)})
    df = pd.DataFrame(rows)
    df.round(2).to_csv(out / "results_e2_cues.csv", index=False)
    print(df.groupby("arm", sort=False)[["premise_only", "hypothesis_only"]].agg(["min", "max"]).round(1).to_string())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
