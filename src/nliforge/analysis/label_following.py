"""Label-following of a generated set: the share of pairs whose label is the one the generator was asked
for, by a judge whose errors are measured and corrected.

A generated record carries its intended label in `meta["intended_label"]` (the WANLI and long-text
pipelines write it there). A judge (any classifier) labels every pair; the **raw share** is the fraction
whose judge label equals the intended label. The judge errs, so the share is corrected with its confusion
matrix C, measured on held-out pairs with known labels: C[i, j] = P(judge says j | true label i), rows
summing to 1. For the n_y pairs with intended label y, let q_y be the distribution of the judge's labels
and p_y their (unknown) true label distribution. Then

    q_y = C^T p_y            so            p_y = solve(C^T, q_y)

(the matrix form of Rogan and Gladen's 1978 correction of a prevalence for a test's sensitivity and
specificity). A sampled q_y can put the solution outside the simplex; each entry is clipped to [0, 1] and the
vector renormalised to sum to 1. The **corrected share** is Σ_y n_y p_y[y] / Σ_y n_y.

Worked example (tests/analysis/test_label_following.py): C = 0.7 I + 0.1 J (0.8 on the diagonal, 0.1 off),
so C^{-1} = (I − 0.1 J) / 0.7 and, for q summing to 1, p = (q − 0.1) / 0.7. 100 pairs asked to be entailment
and judged 52 / 24 / 24 (e / n / c): raw share 0.52, p = (0.6, 0.2, 0.2), corrected share 0.60.

The correction assumes the judge errs on generated pairs as on the held-out pairs; it is only as good as C
is well conditioned (`condition` in the result: a judge near chance makes C nearly singular, and a singular
C is refused).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from nliforge.data.labels import LABELS
from nliforge.errors import NLIDataError

INTENDED_KEY = "intended_label"


def confusion_counts(true: Sequence[str], judged: Sequence[str], labels: Sequence[str] = LABELS) -> np.ndarray:
    """k x k counts: [i, j] = pairs of true label i the judge called j."""
    index = {name: i for i, name in enumerate(labels)}
    counts = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for t, j in zip(true, judged, strict=True):
        if t not in index or j not in index:
            raise NLIDataError(f"confusion matrix: label {t if t not in index else j!r} is not one of {list(labels)}")
        counts[index[t], index[j]] += 1
    return counts


def row_rates(counts: np.ndarray, labels: Sequence[str] = LABELS) -> np.ndarray:
    """Counts -> rates, each row summing to 1; a label with no held-out pair is an error."""
    totals = counts.sum(axis=1)
    empty = [labels[i] for i in np.flatnonzero(totals == 0)]
    if empty:
        raise NLIDataError(f"confusion matrix: no held-out pair of true label {empty[0]!r}; the held-out set "
                           f"needs every label in {list(labels)}")
    return counts / totals[:, None]


def correct_distribution(observed: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """The true label distribution p with C^T p = observed, clipped to [0, 1] and renormalised."""
    try:
        p = np.linalg.solve(np.asarray(confusion, dtype=float).T, np.asarray(observed, dtype=float))
    except np.linalg.LinAlgError:
        raise NLIDataError("confusion matrix is singular: the judge's labels carry no information about some "
                           "true label, so its errors cannot be corrected") from None
    p = np.clip(p, 0.0, 1.0)
    total = p.sum()
    if total <= 0:
        raise NLIDataError(f"corrected distribution is empty after clipping (observed {observed.tolist()})")
    return p / total


@dataclass(frozen=True)
class LabelFollowing:
    """One generated set's shares and the numbers behind them (per intended label, in `labels` order)."""

    n: int
    raw: float
    corrected: float
    n_per_label: list[int]
    raw_per_label: list[float | None]
    corrected_per_label: list[float | None]
    judged_distribution: list[list[float] | None]     # q_y per intended label y
    corrected_distribution: list[list[float] | None]  # p_y per intended label y
    confusion: list[list[float]]
    condition: float
    labels: list[str]

    def to_dict(self) -> dict:
        return asdict(self)


def label_following(intended: Sequence[str], judged: Sequence[str], confusion: np.ndarray,
                    labels: Sequence[str] = LABELS) -> LabelFollowing:
    """Raw and corrected share of `judged == intended` under the judge's confusion matrix (rates)."""
    counts = confusion_counts(intended, judged, labels)   # rows: intended label, columns: judge's label
    n = int(counts.sum())
    if n == 0:
        raise NLIDataError("label-following: the generated set has no pair")
    conf = np.asarray(confusion, dtype=float)
    per_n, raw, corr, q_all, p_all = [], [], [], [], []
    for y in range(len(labels)):
        n_y = int(counts[y].sum())
        per_n.append(n_y)
        if n_y == 0:
            raw.append(None), corr.append(None), q_all.append(None), p_all.append(None)
            continue
        q = counts[y] / n_y
        p = correct_distribution(q, conf)
        raw.append(float(q[y])), corr.append(float(p[y]))
        q_all.append(q.tolist()), p_all.append(p.tolist())
    corrected = sum(n_y * c for n_y, c in zip(per_n, corr) if c is not None) / n
    return LabelFollowing(n, float(np.trace(counts)) / n, float(corrected), per_n, raw, corr, q_all, p_all,
                          conf.tolist(), float(np.linalg.cond(conf)), list(labels))


def intended_labels(records, where: str, labels: Sequence[str] = LABELS) -> list[str]:
    """`meta.intended_label` of every record; a record without one (or with an unknown one) is an error."""
    out = []
    for i, rec in enumerate(records, 1):
        value = (rec.meta or {}).get(INTENDED_KEY)
        if value not in labels:
            raise NLIDataError(f"{where}:{i}: record {rec.uid!r} has meta.{INTENDED_KEY}={value!r}; expected one "
                               f"of {list(labels)} (the label the generator was asked for)")
        out.append(value)
    return out


def classifier_judge(path, batch_size: int = 128):
    """A judge from a classifier folder (an nliforge-train run or its model/): records -> argmax labels."""
    from nliforge.models.predict import load_classifier, predict_probs

    clf = load_classifier(path, "--judge")

    def judge(records) -> list[str]:
        if not records:
            return []
        probs = predict_probs(clf, records, batch_size=batch_size, progress=False, desc="judge")
        return [LABELS[i] for i in probs.argmax(axis=1)]
    return judge


def measure_set(records, judge, heldout, where: str) -> tuple[LabelFollowing, list[str], float]:
    """(label-following, the judge's labels, its held-out accuracy) of one generated set: the judge
    (records -> labels) is scored on `heldout` (records with gold labels) for its confusion matrix, then
    labels the set."""
    counts = confusion_counts([r.label for r in heldout], judge(heldout))
    intended = intended_labels(records, where)
    judged = judge(records)
    return label_following(intended, judged, row_rates(counts)), judged, float(np.trace(counts) / counts.sum())


def over_worlds(results: Sequence[LabelFollowing], ci: float = 0.95) -> dict:
    """Mean and Student t interval over worlds (one generated set and judge per world) of both shares."""
    from nliforge.evaluation.worlds import t_interval

    out = {}
    for key in ("raw", "corrected"):
        e = t_interval([getattr(r, key) for r in results], ci)
        out[key] = {"estimate": e.estimate, "low": e.low, "high": e.high, "n_worlds": e.n_worlds}
    return out
