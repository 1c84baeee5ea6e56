"""Evaluate a classifier on a suite of eval sets and write long-form metrics."""

from __future__ import annotations

import csv
import io
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torchmetrics.functional.classification import binary_accuracy, multiclass_accuracy

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABEL2ID, LABELS
from nliforge.data.records import Record
from nliforge.data.registry import gold_labels_for
from nliforge.evaluation.collapse import collapse_predictions
from nliforge.evaluation.counterfactual import is_paired, paired_scores
from nliforge.evaluation.hans import cell_scores, is_hans_like
from nliforge.evaluation.table import SUITE_COLUMNS as METRIC_COLUMNS  # one schema for writer and reader
from nliforge.models.predict import predict_probs
from nliforge.utils.atomic import atomic_write_text

log = logging.getLogger(__name__)
PROGRESS_PAIRS = 1000   # eval sets from this size on show progress whatever their number of batches


@dataclass
class EvalSet:
    """A loaded eval set with its config node (num_classes, positive class, version)."""

    name: str
    spec: Mapping[str, Any]
    records: Sequence[Record]


def score_set(probs: torch.Tensor, eval_set: EvalSet, collapse: str = "argmax") -> dict[str, float]:
    """Accuracy of probs against the set's gold labels; 2-class sets are collapsed by `collapse`.

    On a paired counterfactual set (every record has meta pair_id/role) also `delta_s` (mean
    counterfactual sensitivity on the 3-class probabilities) and `acc_cf` (both members right).
    """
    allowed = gold_labels_for(eval_set.spec)
    if len(allowed) == 3:
        gold = torch.tensor([LABEL2ID[r.label] for r in eval_set.records])
        pred = probs.argmax(-1)
        acc = multiclass_accuracy(pred, gold, num_classes=3, average="micro")
    else:
        positive = allowed[0]
        gold = torch.tensor([int(r.label == positive) for r in eval_set.records])
        pred = collapse_predictions(probs, positive, collapse)
        acc = binary_accuracy(pred, gold)
    scores = {"acc": float(acc), "n": float(len(eval_set.records))}
    if len(allowed) == 2 and is_hans_like(eval_set.records):  # HANS: per heuristic x label and per subcase
        scores.update(cell_scores(eval_set.records, pred.tolist(), allowed[0]))
    if is_paired(eval_set.records):  # a counterfactual set (derivation counterfactual_pairs): DISCO's δs, Acc
        scores.update(paired_scores(probs, pred, gold, eval_set.records))
    return scores


def add_averages(results: Mapping[str, Mapping[str, float]], averages: Mapping[str, Sequence[str]] | None,
                 metric: str = "acc") -> dict[str, dict]:
    """Results plus one entry per `suite.averages` group: the unweighted mean of its members' metric
    (e.g. Liu et al.'s ST = mean of ST-WO/NE/LM/SE). A group with a missing member is left out, with a
    warning, rather than averaged over fewer sets than its definition."""
    out = {k: dict(v) for k, v in results.items()}
    for name, members in (averages or {}).items():
        if name in out:
            raise NLIDataError(f"suite.averages.{name}: the name is already an eval set of the suite")
        missing = [m for m in members if m not in out]   # earlier averages may be members
        if missing or not members:
            log.warning("suite.averages.%s not computed: %s", name, f"missing {missing}" if members else "no members")
            continue
        out[name] = {metric: float(sum(out[m][metric] for m in members) / len(members)),
                     "n": float(sum(out[m].get("n", 0.0) for m in members)), "members": float(len(members))}
    return out


def evaluate_suite(module, datamodule, eval_sets: Sequence[EvalSet], collapse: str = "argmax",
                   predictions_dir: Path | None = None) -> dict[str, dict]:
    """Per-set metrics for every eval set of the suite. A set of PROGRESS_PAIRS pairs or more shows its
    progress in pairs per second with an ETA (a bar, or a line every `progress_every_s` to a file);
    every set's result line gives its time and rate (`data.eval_batch_size` sets the batch).
    With `predictions_dir`, each set's per-example predictions go to `<dir>/<set>.csv` (write_predictions)."""
    results = {}
    for es in eval_sets:
        start = time.monotonic()
        probs = torch.from_numpy(predict_probs(module, es.records, datamodule=datamodule, desc=f"eval {es.name}",
                                               progress=True if len(es.records) >= PROGRESS_PAIRS else None))
        results[es.name] = score_set(probs, es, collapse)
        if predictions_dir is not None:
            write_predictions(probs, es, Path(predictions_dir) / f"{es.name}.csv")
        seconds = time.monotonic() - start
        log.info("eval %-32s acc=%.4f (n=%d, %.1f s, %.0f pairs/s)", es.name, results[es.name]["acc"],
                 len(es.records), seconds, len(es.records) / max(seconds, 1e-9))
    return results


def write_predictions(probs: torch.Tensor, eval_set: EvalSet, path: Path) -> Path:
    """One row per example, in the set's order: uid, gold label, predicted label (3-class argmax) and the
    three probabilities, for paired comparisons between runs over the same examples (written atomically)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["uid", "gold", "pred", *(f"p_{name}" for name in LABELS)])
    for rec, row in zip(eval_set.records, probs.tolist()):
        writer.writerow([rec.uid, rec.label, LABELS[max(range(len(row)), key=row.__getitem__)],
                         *(f"{p:.6f}" for p in row)])
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(path, [buf.getvalue()])


def metrics_rows(results: Mapping[str, Mapping[str, float]], train_id: str, seed: int) -> list[dict]:
    return [{"train_id": train_id, "seed": seed, "eval_set": name, "metric": metric, "value": value}
            for name, metrics in results.items() for metric, value in metrics.items()]


def write_metrics_csv(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Long-form metrics (train_id, seed, eval_set, metric, value), written atomically."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=METRIC_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return atomic_write_text(path, [buf.getvalue()])
