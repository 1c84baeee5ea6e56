"""Partial-input baselines: how much of the label a model can guess from one side of the pair.

A model that sees only the hypothesis (or only the premise) should be at chance on a dataset
free of annotation artifacts (Gururangan et al. 2018; Poliak et al. 2018; WANLI §4.1, which
reports 41.6% hypothesis-only accuracy on balanced WANLI vs 49.6% on size-matched MultiNLI).
WANLI uses fastText; here a bag of unigrams and bigrams with logistic regression (scikit-learn)
plays that role: fast, deterministic, and close in power to fastText on short texts.

Fair comparison needs two controls, both seeded:
- `balance`: every label is downsampled to the rarest label's count before anything else, so
  the majority baseline is 1/|labels| and accuracy above it is information, not label skew;
- `equal_size`: the training part is subsampled to exactly n examples (stratified by label),
  so datasets of different size are compared at the same n (more data, higher accuracy).

Order: balance the whole set, hold out `test_fraction` (stratified) unless an eval set is
given, then subsample the training part to `equal_size`. A given eval set is used as is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.data.records import Record

VIEWS: dict[str, str] = {
    "hypothesis": "hypothesis only",
    "premise": "premise only",
    "pair": "premise and hypothesis concatenated (an upper reference, not a partial input)",
}
MIN_PER_LABEL = 2  # a stratified split needs two examples of every label


@dataclass
class PartialInputResult:
    """Accuracy per view on the held-out examples, with the sizes and the chance reference."""

    accuracy: dict[str, float]
    n_train: int
    n_test: int
    majority: float
    train_label_counts: dict[str, int] = field(default_factory=dict)
    test_label_counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def check_labeled(records: Sequence[Record], where: str, labels: Sequence[str] = LABELS) -> None:
    """Every record labelled with one of `labels`, and at least two labels present."""
    if not records:
        raise NLIDataError(f"{where}: no records")
    bad = next((r for r in records if r.label not in labels), None)
    if bad is not None:
        raise NLIDataError(f"{where}: record {bad.uid!r} has label {bad.label!r}; this analysis "
                           f"needs every record labelled with one of {list(labels)}")
    present = sorted({r.label for r in records})
    if len(present) < 2:
        raise NLIDataError(f"{where}: a single label ({present}) in {len(records)} records; label "
                           "correlations need at least two labels present")


def balance_labels(records: Sequence[Record], seed: int = 0) -> list[Record]:
    """Downsample every label to the rarest label's count (seeded); input order is kept."""
    by_label: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        by_label.setdefault(rec.label, []).append(i)
    n_min = min(len(ids) for ids in by_label.values())
    rng = np.random.default_rng(seed)
    keep = []
    for label in sorted(by_label):
        ids = by_label[label]
        keep.extend(rng.choice(ids, size=n_min, replace=False).tolist())
    return [records[i] for i in sorted(keep)]


def stratified_split(records: Sequence[Record], test_fraction: float, seed: int = 0):
    """(train, test) with `test_fraction` of every label held out (at least one per label)."""
    if not 0 < test_fraction < 1:
        raise NLIDataError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    rng = np.random.default_rng(seed)
    test_ids: list[int] = []
    for label in sorted({r.label for r in records}):
        ids = [i for i, r in enumerate(records) if r.label == label]
        n_test = min(max(1, round(len(ids) * test_fraction)), len(ids) - 1)
        test_ids.extend(rng.choice(ids, size=n_test, replace=False).tolist())
    held = set(test_ids)
    return ([r for i, r in enumerate(records) if i not in held],
            [r for i, r in enumerate(records) if i in held])


def subsample(records: Sequence[Record], n: int, seed: int = 0, where: str = "records") -> list[Record]:
    """Exactly n records, stratified by label (label shares kept up to rounding), seeded."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise NLIDataError(f"equal_size must be a positive integer, got {n!r}")
    if n > len(records):
        raise NLIDataError(f"{where}: equal_size={n} but only {len(records)} training examples are "
                           "left after balancing and holding out the test part; lower `equal_size`")
    order = np.random.default_rng(seed).permutation(len(records))
    # Floor of each label's share first, then fill up to n from the shuffled rest.
    queues: dict[str, list[int]] = {}
    for i in order.tolist():
        queues.setdefault(records[i].label, []).append(i)
    total, keep = len(records), []
    for label, ids in sorted(queues.items()):
        keep.extend(ids[: int(n * len(ids) / total)])
    taken = set(keep)
    rest = [i for i in order.tolist() if i not in taken]
    keep.extend(rest[: n - len(keep)])
    return [records[i] for i in sorted(keep)]


def view_texts(records: Sequence[Record], view: str) -> list[str]:
    """The text a `view` model sees for every record."""
    if view == "hypothesis":
        return [r.hypothesis for r in records]
    if view == "premise":
        return [r.premise for r in records]
    if view == "pair":
        return [f"{r.premise} ||| {r.hypothesis}" for r in records]
    raise NLIDataError(f"unknown view {view!r}; valid views: {', '.join(VIEWS)}")


def fit_and_score(train_texts, train_y, test_texts, test_y, seed: int = 0,
                  ngram_range: tuple[int, int] = (1, 2), tfidf: bool = True) -> float:
    """Accuracy of a bag-of-n-grams logistic regression (the fastText stand-in)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = (TfidfVectorizer if tfidf else CountVectorizer)(ngram_range=tuple(ngram_range),
                                                          lowercase=True)
    clf = LogisticRegression(max_iter=2000, random_state=seed)
    clf.fit(vec.fit_transform(train_texts), train_y)
    return float(np.mean(clf.predict(vec.transform(test_texts)) == np.asarray(test_y)))


def prepare_splits(train: Sequence[Record], eval_set: Sequence[Record] | None, balance: bool,
                   equal_size: int | None, test_fraction: float, seed: int,
                   where: str, eval_where: str, labels: Sequence[str]):
    """Balanced (optional) training part and the evaluation part, following the module's order."""
    check_labeled(train, where, labels)
    data = balance_labels(train, seed) if balance else list(train)
    if eval_set is None:
        small = min(Counter(r.label for r in data).values())
        if small < MIN_PER_LABEL:
            raise NLIDataError(f"{where}: too few examples to hold out a test part ({small} of the "
                               f"rarest label; need {MIN_PER_LABEL} per label, or give an eval set)")
        train_part, test_part = stratified_split(data, test_fraction, seed)
    else:
        check_labeled(eval_set, eval_where, labels)
        train_part, test_part = data, list(eval_set)
    if equal_size is not None:
        train_part = subsample(train_part, equal_size, seed, where)
    if len({r.label for r in train_part}) < 2:
        raise NLIDataError(f"{where}: the training part has a single label; raise `equal_size`")
    return train_part, test_part


def partial_input_baselines(train: Sequence[Record], eval_set: Sequence[Record] | None = None, *,
                            views: Sequence[str] = ("hypothesis", "premise"), balance: bool = True,
                            equal_size: int | None = None, test_fraction: float = 0.2,
                            seed: int = 0, ngram_range: tuple[int, int] = (1, 2),
                            tfidf: bool = True, labels: Sequence[str] = LABELS,
                            where: str = "train", eval_where: str = "eval") -> PartialInputResult:
    """Train one partial-input classifier per view on `train`, score it on the held-out part.

    `where`/`eval_where` name the inputs in errors (pass the file paths).
    """
    for view in views:
        view_texts([], view)  # validate names before any work
    train_part, test_part = prepare_splits(train, eval_set, balance, equal_size, test_fraction,
                                           seed, where, eval_where, labels)
    y_train = [r.label for r in train_part]
    y_test = [r.label for r in test_part]
    accuracy = {view: fit_and_score(view_texts(train_part, view), y_train,
                                    view_texts(test_part, view), y_test, seed, ngram_range, tfidf)
                for view in views}
    majority_label = Counter(y_train).most_common(1)[0][0]
    return PartialInputResult(
        accuracy=accuracy, n_train=len(train_part), n_test=len(test_part),
        majority=float(np.mean(np.asarray(y_test) == majority_label)),
        train_label_counts=dict(sorted(Counter(y_train).items())),
        test_label_counts=dict(sorted(Counter(y_test).items())),
    )
