"""The `world` presets (conf/world/): each composes with nliforge-train's config, changes only the
strengths of default.yaml, and plants P(target | feature) = 1/3 + 2s/3 in train_biased."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from conftest import CONF_DIR
from nliforge.world import ARTIFACTS, WorldConfig, generate_split, measure_artifact

# preset -> (common strength, P(target | feature) computed by hand: 1/3 + 2s/3)
PRESETS = {
    "snli_calibrated": (0.65, 0.7667),   # 1/3 + 1.3/3 = 2.3/3
    "mnli_calibrated": (0.3, 0.5333),    # 1/3 + 0.6/3 = 1.6/3
    "strong": (0.8, 0.8667),             # 1/3 + 1.6/3 = 2.6/3, as default.yaml
}


def _world(name: str, *overrides: str) -> dict:
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose("train", overrides=[f"world={name}", *overrides])
    return OmegaConf.to_container(cfg.world, resolve=True)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_composes_and_differs_from_default_only_in_strengths(name):
    default, preset = _world("default"), _world(name, "experiment=demo")
    strength, _ = PRESETS[name]
    assert preset["strengths"] == {artifact: strength for artifact in ARTIFACTS}
    assert {k: v for k, v in preset.items() if k not in ("strengths", "n_train")} == \
           {k: v for k, v in default.items() if k not in ("strengths", "n_train")}
    assert preset["n_train"] == 20000   # experiment=demo still sets it over the preset
    WorldConfig.from_dict(preset)       # a valid world config


def test_default_world_is_unchanged():
    assert _world("default")["strengths"] == {artifact: 0.8 for artifact in ARTIFACTS}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_plants_the_configured_strength(name):
    cfg = WorldConfig.from_dict({**_world(name), "n_train": 1500})
    records = generate_split(cfg, "train_biased")
    _, expected = PRESETS[name]
    for artifact in ARTIFACTS:
        m = measure_artifact(records, artifact)
        # ~375 feature-bearing pairs per artifact: binomial SE <= 0.026 (the split is seeded, so the
        # check is deterministic); 0.06 still tells the presets apart (they are >= 0.10 apart)
        assert m["p_target_given_feature"] == pytest.approx(expected, abs=0.06), (artifact, m)
        assert m["p_feature"] == pytest.approx(cfg.feature_rate, abs=0.05), (artifact, m)
