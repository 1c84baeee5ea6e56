"""Split generation: labels, planted feature vectors, and pairs that realise both.

For every example the label is drawn first (balanced), then each artifact's feature is drawn
independently with P(f | y) = r(1 + 2s) if y is the artifact's target label, else r(1 - s).
With balanced labels this gives P(f) = r and P(target | f) = 1/3 + 2s/3 exactly in
expectation, for all artifacts at once. A phenomenon then produces a pair with exactly that
label and feature vector (checked with `Artifact.present`, resampled otherwise).

Each split is drawn whole for its size from its own stream (`split_seed`), so a bigger
`n_train` is a fresh draw, not D0 plus more. More pairs of D0's distribution come from
`train_biased_extra` (size `n_extra`): train_biased's feature probabilities on a stream of its
own, avoiding D0's pairs as well as dev/test's, so D0 + extra is a floor that contains D0.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
from collections.abc import Callable, Collection

from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.world import phenomena_meaning as pm
from nliforge.world import phenomena_syntax as ps
from nliforge.world.artifacts import ARTIFACTS, feature_vector, full_overlap, has_negation
from nliforge.world.config import BIASED_SPLITS, WorldConfig, check_split
from nliforge.world.text import add_negation, break_overlap, lengthen

PHENOMENA: dict[str, Callable[[random.Random, str], list[tuple[str, str]]]] = {
    "lexical_overlap": ps.lexical_overlap, "subsequence": ps.subsequence,
    "constituent": ps.constituent, "negation": ps.negation, "coreference": ps.coreference,
    "presupposition": ps.presupposition, "exclusivity": ps.exclusivity,
    "antonym": pm.antonym, "hypernym": pm.hypernym, "quantifier": pm.quantifier,
    "set_complement": pm.set_complement, "directions": pm.directions, "numbers": pm.numbers,
    "comparison": pm.comparison, "temporal": pm.temporal,
}
_MAX_ATTEMPTS = 400
# Draws from one phenomenon before moving on: keeps the phenomenon mix close to uniform in
# every (label, features) cell, even for cells a phenomenon fills only with a rare variant.
_TRIES_PER_PHENOMENON = 20
# How often a phenomenon's own matching variant is preferred over a rewritten one.
_P_NATURAL = 0.7


def split_seed(seed: int, split: str) -> int:
    """Per-split seed from (world seed, split name) via sha256 (stable across runs and machines)."""
    digest = hashlib.sha256(f"nliforge.world:{seed}:{split}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def feature_probabilities(cfg: WorldConfig, split: str, label: str) -> dict[str, float]:
    """P(feature present | label) for each artifact in a split."""
    strengths = cfg.strength_map if split in BIASED_SPLITS else {}
    r = cfg.feature_rate
    probs = {}
    for name, art in ARTIFACTS.items():
        if split == f"challenge_{name}":
            probs[name] = 1.0
            continue
        s = strengths.get(name, 0.0)
        probs[name] = r * (1 + 2 * s) if label == art.target_label else r * (1 - s)
    return probs


def _label_pool(split: str) -> tuple[str, ...]:
    """Labels a split may hold: all three, or the two a challenge's artifact does not point to."""
    for name, art in ARTIFACTS.items():
        if split == f"challenge_{name}":
            return tuple(lab for lab in LABELS if lab != art.target_label)
    return LABELS


def realize(rng: random.Random, premise: str, hypothesis: str, want: dict[str, bool]):
    """Rewrite a labelled pair (label-preservingly) to have exactly the wanted features, or None."""
    if has_negation(premise, hypothesis) != want["negation"]:
        if not want["negation"]:
            return None
        pair = add_negation(rng, premise, hypothesis)
        if pair is None:
            return None
        premise, hypothesis = pair
    overlap = full_overlap(premise, hypothesis)
    if want["overlap"] and not overlap:
        return None
    if overlap and not want["overlap"]:
        pair = break_overlap(rng, premise, hypothesis)
        if pair is None:
            return None
        premise, hypothesis = pair
    if want["length"]:
        pair = lengthen(rng, premise, hypothesis, keep_overlap=want["overlap"])
        if pair is None:
            return None
        premise, hypothesis = pair
    return (premise, hypothesis) if feature_vector(premise, hypothesis) == want else None


def _candidates(rng: random.Random, phenomenon: str, label: str, want: dict[str, bool]):
    """A phenomenon's variants, those already matching negation and overlap usually first."""
    pairs = PHENOMENA[phenomenon](rng, label)
    rng.shuffle(pairs)
    if rng.random() < _P_NATURAL:
        key = (want["negation"], want["overlap"])
        pairs.sort(key=lambda pair: (has_negation(*pair), full_overlap(*pair)) != key)
    return pairs


def fill(rng: random.Random, label: str, want: dict[str, bool],
         avoid: Collection[tuple[str, str]] = (), phenomena: tuple[str, ...] | None = None):
    """(phenomenon, premise, hypothesis) with this label and feature vector.

    A phenomenon is drawn uniformly and given several draws before another is tried, so the
    phenomenon mix is nearly independent of the label and the features.
    """
    names = phenomena or tuple(PHENOMENA)
    for _ in range(_MAX_ATTEMPTS // _TRIES_PER_PHENOMENON):
        phen = names[rng.randrange(len(names))]
        for _ in range(_TRIES_PER_PHENOMENON):
            for premise, hypothesis in _candidates(rng, phen, label, want)[:3]:
                pair = realize(rng, premise, hypothesis, want)
                if pair is not None and pair not in avoid:
                    return (phen, *pair)
    raise RuntimeError(f"no phenomenon in {names} could produce label={label} with features {want}")


@functools.lru_cache(maxsize=8)
def _heldout_pairs(seed: int, n_dev: int, n_test: int, feature_rate: float) -> frozenset:
    """(premise, hypothesis) pairs of dev and test, kept out of the training splits."""
    cfg = WorldConfig(seed=seed, n_dev=n_dev, n_test=n_test, feature_rate=feature_rate)
    return frozenset((r.premise, r.hypothesis) for split in ("dev", "test")
                     for r in generate_split(cfg, split))


@functools.lru_cache(maxsize=4)
def _d0_pairs(cfg: WorldConfig) -> frozenset:
    """(premise, hypothesis) pairs of D0 (`train_biased`), kept out of `train_biased_extra`."""
    return frozenset((r.premise, r.hypothesis) for r in generate_split(cfg, "train_biased"))


def _avoid(cfg: WorldConfig, split: str) -> Collection:
    """Pairs a split must not contain: dev/test's for training splits, and D0's for the extra pairs."""
    if split not in ("train",) + BIASED_SPLITS:
        return ()
    held = _heldout_pairs(cfg.seed, cfg.n_dev, cfg.n_test, cfg.feature_rate)
    if split != "train_biased_extra":
        return held
    # D0 does not depend on n_extra: one cache entry serves every N
    return held | _d0_pairs(dataclasses.replace(cfg, n_extra=0))


def generate_split(cfg: WorldConfig, split: str) -> list[Record]:
    """All records of one split; deterministic given (cfg, split).

    Only `train_biased` and `train_biased_extra` read the configured strengths, so dev/test/challenge
    content is the same whatever they are. Training splits skip pairs that occur verbatim in dev or
    test; `train_biased_extra` also skips D0's pairs. `n_extra` changes no other split.
    """
    check_split(split)
    n = cfg.split_size(split)
    rng = random.Random(split_seed(cfg.seed, split))
    pool = _label_pool(split)
    labels = [pool[i % len(pool)] for i in range(n)]
    rng.shuffle(labels)
    avoid = _avoid(cfg, split) if n else ()
    records = []
    for i, label in enumerate(labels):
        probs = feature_probabilities(cfg, split, label)
        want = {name: rng.random() < p for name, p in probs.items()}
        phen, premise, hypothesis = fill(rng, label, want, avoid)
        meta = {"phenomenon": phen, "split": split, "features": feature_vector(premise, hypothesis)}
        records.append(Record(f"synthetic-{split}-{i:06d}", premise, hypothesis, label, "synthetic", meta))
    return records


def coverage(trials: int = 40, seed: int = 0) -> dict[tuple[str, bool, bool, bool], list[str]]:
    """Which phenomena can fill each (label, negation, overlap, length) cell (a design check)."""
    rng = random.Random(seed)
    out = {}
    for label in LABELS:
        for bits in range(8):
            want = {name: bool(bits >> k & 1) for k, name in enumerate(ARTIFACTS)}
            cell = (label, *want.values())
            out[cell] = [phen for phen in PHENOMENA if _can_fill(rng, phen, label, want, trials)]
    return out


def _can_fill(rng: random.Random, phen: str, label: str, want: dict[str, bool], trials: int) -> bool:
    return any(realize(rng, p, h, want) is not None
               for _ in range(trials) for p, h in PHENOMENA[phen](rng, label))
