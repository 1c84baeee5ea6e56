"""The synthetic NLI world: seeded, labelled premise/hypothesis pairs with planted artifacts.

Fifteen phenomena (HANS-style overlap, negation, quantifiers, set complements, directions,
exclusivity, presupposition, hypernyms, numbers, comparison, temporal order, coreference ...)
produce pairs with a known label. Three artifacts — a negation word in the hypothesis
(-> contradiction), full word overlap (-> entailment) and a long hypothesis (-> neutral) — are
planted at a configurable strength in `train_biased`, absent from `train`/`dev`/`test`, and turned
against the model in `challenge_<artifact>` (feature always present, label never its target).
`train_biased_extra` holds `n_extra` more pairs of train_biased's distribution; `arms` builds every arm
of a comparison (D0, floor, ceiling, treatment) from the same D0.
"""

from nliforge.world.artifacts import (
    ARTIFACTS,
    LONG_HYPOTHESIS_WORDS,
    NEGATION_WORDS,
    Artifact,
    feature_vector,
    measure_artifact,
    words,
)
from nliforge.world.build import MANIFEST_NAME, build_world, ensure_world, read_manifest
from nliforge.world.config import GENERATOR_VERSION, SPLITS, WorldConfig
from nliforge.world.generator import PHENOMENA, generate_split

__all__ = [
    "ARTIFACTS", "Artifact", "LONG_HYPOTHESIS_WORDS", "NEGATION_WORDS", "feature_vector",
    "measure_artifact", "words", "MANIFEST_NAME", "build_world", "ensure_world", "read_manifest",
    "GENERATOR_VERSION", "SPLITS", "WorldConfig", "PHENOMENA", "generate_split",
]
