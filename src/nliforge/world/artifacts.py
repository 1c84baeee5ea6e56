"""The planted artifacts: surface features of a pair that correlate with a label in biased data.

Each feature is computed from the text alone (`Artifact.present`), never carried as a flag, so
any consumer (a filter, a debiasing method, an analysis) can recompute it on any pair.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from nliforge.data.records import Record

# A word: letters/digits, an optional apostrophe suffix ("didn't"), an optional percent sign; matched on
# lower-cased text. The one definition of a word for the artifacts, the z-filter features
# (nliforge.filtering.features) and the §4.1 debiasing token mask (nliforge.models.losses), which
# must line up with those features.
WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?%?")
NEGATION_WORDS: frozenset[str] = frozenset(
    {"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "nowhere", "cannot"}
)
# A hypothesis with at least this many words counts as long (templates are built around it).
LONG_HYPOTHESIS_WORDS = 10


def words(text: str) -> list[str]:
    """Lowercased words with punctuation stripped; the unit every artifact is defined on."""
    return WORD_RE.findall(text.lower())


def has_negation(premise: str, hypothesis: str) -> bool:
    """A whole-word negation (or an n't form) in the hypothesis."""
    return any(w in NEGATION_WORDS or w.endswith("n't") for w in words(hypothesis))


def full_overlap(premise: str, hypothesis: str) -> bool:
    """Every hypothesis word also occurs in the premise."""
    return set(words(hypothesis)) <= set(words(premise))


def is_long(premise: str, hypothesis: str) -> bool:
    """The hypothesis has at least LONG_HYPOTHESIS_WORDS words."""
    return len(words(hypothesis)) >= LONG_HYPOTHESIS_WORDS


_DETECTORS: dict[str, Callable[[str, str], bool]] = {
    "negation": has_negation,
    "overlap": full_overlap,
    "length": is_long,
}


@dataclass(frozen=True)
class Artifact:
    """A spurious cue: a text feature and the label it points to in biased data."""

    name: str
    target_label: str
    description: str

    def present(self, premise: str, hypothesis: str) -> bool:
        """Whether the pair shows this artifact's feature (computed from the text)."""
        return _DETECTORS[self.name](premise, hypothesis)


ARTIFACTS: dict[str, Artifact] = {
    "negation": Artifact(
        "negation", "contradiction",
        "the hypothesis contains a negation word (not, no, never, nobody, nothing, none, n't ...)",
    ),
    "overlap": Artifact(
        "overlap", "entailment",
        "every hypothesis word (lowercased, punctuation stripped) also appears in the premise",
    ),
    "length": Artifact(
        "length", "neutral",
        f"the hypothesis has at least {LONG_HYPOTHESIS_WORDS} words",
    ),
}


def feature_vector(premise: str, hypothesis: str) -> dict[str, bool]:
    """All artifact features of a pair, in ARTIFACTS order."""
    return {name: art.present(premise, hypothesis) for name, art in ARTIFACTS.items()}


def measure_artifact(records: Iterable[Record], artifact_name: str) -> dict[str, float | int]:
    """How strongly an artifact is planted in a set, recomputed from the text.

    Returns n, n_feature, p_feature, p_target_given_feature (NaN-free: 0.0 when the feature
    never occurs) and p_target (the target label's base rate).
    """
    if artifact_name not in ARTIFACTS:
        raise ValueError(f"unknown artifact {artifact_name!r}; valid: {', '.join(ARTIFACTS)}")
    art = ARTIFACTS[artifact_name]
    n = n_feature = n_target = n_both = 0
    for rec in records:
        n += 1
        feat = art.present(rec.premise, rec.hypothesis)
        target = rec.label == art.target_label
        n_feature += feat
        n_target += target
        n_both += feat and target
    return {
        "n": n,
        "n_feature": n_feature,
        "p_feature": n_feature / n if n else 0.0,
        "p_target_given_feature": n_both / n_feature if n_feature else 0.0,
        "p_target": n_target / n if n else 0.0,
    }
