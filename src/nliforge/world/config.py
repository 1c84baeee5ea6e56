"""The world's configuration, its validation and the list of splits."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nliforge.world.artifacts import ARTIFACTS

# Bump when generation changes, so cached worlds built by older code are not reused.
GENERATOR_VERSION = 1
DEFAULT_STRENGTH = 0.8
SPLITS: tuple[str, ...] = ("train", "train_biased", "train_biased_extra", "dev", "test") + tuple(
    f"challenge_{name}" for name in ARTIFACTS
)
# The splits that plant the configured strengths: D0 (`train_biased`) and more pairs of its distribution.
BIASED_SPLITS: tuple[str, ...] = ("train_biased", "train_biased_extra")
_SIZE_FIELDS = ("n_train", "n_dev", "n_test", "n_challenge", "n_extra")


def _default_strengths() -> tuple[tuple[str, float], ...]:
    return tuple((name, DEFAULT_STRENGTH) for name in ARTIFACTS)


@dataclass(frozen=True)
class WorldConfig:
    """Sizes, seed and artifact knobs of one synthetic world.

    `strengths` is stored as a tuple of (artifact, strength) pairs in ARTIFACTS order so the
    config stays hashable; a mapping is accepted and normalised (missing artifacts get
    DEFAULT_STRENGTH). Strength s plants P(target | feature) = 1/3 + 2s/3 in `train_biased`.

    `n_extra` sizes `train_biased_extra`: more pairs of train_biased's distribution, drawn on a
    stream of their own, so that a floor D0 + N keeps D0 (= train_biased) byte for byte.
    """

    seed: int = 0
    n_train: int = 6000
    n_dev: int = 600
    n_test: int = 1500
    n_challenge: int = 600
    strengths: Any = field(default_factory=_default_strengths)
    feature_rate: float = 0.25
    n_extra: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "strengths", _normalise_strengths(self.strengths))
        for key in _SIZE_FIELDS + ("seed",):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"world.{key} must be an integer, got {value!r}")
            if key != "seed" and value < 0:
                raise ValueError(f"world.{key} must be >= 0, got {value}")
        rate = self.feature_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1 / 3:
            raise ValueError(
                f"world.feature_rate must be in (0, 1/3] so that strength 1 is reachable, got {rate!r}"
            )
        object.__setattr__(self, "feature_rate", float(rate))

    @property
    def strength_map(self) -> dict[str, float]:
        """Artifact name -> configured strength (for train_biased)."""
        return dict(self.strengths)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WorldConfig:
        """Build from a plain mapping (e.g. a resolved Hydra node); unknown keys are errors."""
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = [k for k in d if k not in valid]
        if unknown:
            raise ValueError(f"unknown world config key {unknown[0]!r}; valid keys: {', '.join(valid)}")
        return cls(**dict(d))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (strengths as a mapping); from_dict(to_dict()) round-trips."""
        out = dataclasses.asdict(self)
        out["strengths"] = self.strength_map
        if not self.n_extra:   # a world without extra pairs keeps the digest (and cache folder) it had before
            del out["n_extra"]
        return out

    def digest(self) -> str:
        """Short stable hash of the config and generator version, for cache folder names."""
        payload = json.dumps({"v": GENERATOR_VERSION, **self.to_dict()}, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]

    def split_size(self, split: str) -> int:
        """Number of examples in a split (challenge sizes are per artifact)."""
        check_split(split)
        if split.startswith("challenge_"):
            return self.n_challenge
        return {"train": self.n_train, "train_biased": self.n_train, "train_biased_extra": self.n_extra,
                "dev": self.n_dev, "test": self.n_test}[split]


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown world split {split!r}; valid splits: {', '.join(SPLITS)}")


def _normalise_strengths(value: Any) -> tuple[tuple[str, float], ...]:
    """Mapping or pairs -> complete pairs in ARTIFACTS order, validated."""
    try:
        items = dict(value.items() if isinstance(value, Mapping) else value)
    except (TypeError, ValueError):
        raise ValueError(
            f"world.strengths must map artifact names to strengths, got {value!r}; "
            f"valid keys: {', '.join(ARTIFACTS)}"
        ) from None
    for name, s in items.items():
        if name not in ARTIFACTS:
            raise ValueError(f"unknown artifact {name!r} in world.strengths; valid keys: {', '.join(ARTIFACTS)}")
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not 0.0 <= s <= 1.0:
            raise ValueError(f"world.strengths.{name} must be a number in [0, 1], got {s!r}")
    return tuple((name, float(items.get(name, DEFAULT_STRENGTH))) for name in ARTIFACTS)
