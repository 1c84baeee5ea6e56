"""Every arm of a comparison is built from the same D0 (nliforge.world.arms): the floor is D0 + N more pairs
of D0's own biased distribution (the world's `train_biased_extra`), the ceiling D0 + N unbiased pairs, the
treatment D0 + W; and adding the extra split changed no record of the splits that existed before it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import compose_config
from nliforge.data.jsonl import records_digest, write_jsonl
from nliforge.data.records import Record
from nliforge.data.registry import load_set
from nliforge.data.training_set import build_training_set
from nliforge.errors import NLIDataError
from nliforge.world import SPLITS, WorldConfig, generate_split, measure_artifact
from nliforge.world.arms import arm_overrides, main

ROOT = Path(__file__).resolve().parents[2]
T, N = 240, 90                    # |D0| and the pairs every arm adds
WORLD = ["world.n_dev=60", "world.n_test=60", "world.n_challenge=30", "world.seed=2"]

# sha256 of each split's JSONL bytes (records_digest), computed with the generator before train_biased_extra
# existed (commit b1e70d0). A world with n_extra pairs must give the very same bytes.
SMALL = dict(seed=5, n_train=300, n_dev=60, n_test=90, n_challenge=30)
SMALL_BEFORE = {
    "train": "e56bd0d7af8e9372c18d179c880d1e2a29af64b3b9f7f48d63295d0657072580",
    "train_biased": "d2cd0d1bf28ef26d3f90ef4ccb4a3f13b5e0642b21068f3184ba9afcb29b2f09",
    "dev": "369b841436a7bd863f2083202279f33b951b82c53ee590fc6260ed0186071dd7",
    "test": "b88a72ab61e304c006c1f937fc696c49a524901f314c7ac2d581aca117abb643",
    "challenge_negation": "b489ac6f0e80e67c2f47e047e20c5e6726286e39dac890f32e0e1075ee0ee02e",
    "challenge_overlap": "e4acb98c7e43b66ce6889815c8df7f8e443aef51df221b29324e1edb334ce3a6",
    "challenge_length": "4e3e1e71109698a29c4853079c8bd56c63774a690205e3c84f0d09aa9805fd35",
}
# the experiments' D0: snli_calibrated (strength 0.65), world seed 0, 4,000 pairs, default dev/test sizes
EXPERIMENT = dict(seed=0, n_train=4000, strengths={"negation": 0.65, "overlap": 0.65, "length": 0.65})
EXPERIMENT_BEFORE = {
    "train_biased": "a1dcc25f80017f2307918e8c6969dc6b8e6bc7fbdf7e5142403b0bcf5c2fc3ab",
    "train": "8c420d4c5b76c2ccec52a734a3903f48cbfeb2fa8bb7eaa1a65ec5388c940d92",
    "dev": "38d21a7bf69b6e34e4814c820f9a2c6cbe576110828e599550cc3daac22a6eff",
    "test": "a0d60c98928f1b0a214b3d93d644d9c2b6ac6d116a8b3bf0e5c0acae80d9027d",
}


@pytest.mark.parametrize("n_extra", [0, 150])
def test_the_splits_that_existed_before_are_byte_identical(n_extra):
    cfg = WorldConfig(**SMALL, n_extra=n_extra)
    assert {s: records_digest(generate_split(cfg, s)) for s in SMALL_BEFORE} == SMALL_BEFORE
    assert set(SPLITS) == set(SMALL_BEFORE) | {"train_biased_extra"}
    assert len(generate_split(cfg, "train_biased_extra")) == n_extra


def test_the_experiments_d0_and_eval_splits_are_byte_identical():
    cfg = WorldConfig(**EXPERIMENT, n_extra=500)
    assert {s: records_digest(generate_split(cfg, s)) for s in EXPERIMENT_BEFORE} == EXPERIMENT_BEFORE


def test_a_world_without_extra_pairs_keeps_its_cache_digest():
    # digests printed by the code before the change: cached worlds are reused, not rebuilt
    assert WorldConfig(**SMALL).digest() == "363060353ddd"
    assert WorldConfig().digest() == "79973dcf2243"
    assert WorldConfig(**SMALL, n_extra=10).digest() != "363060353ddd"
    assert WorldConfig.from_dict(WorldConfig(**SMALL, n_extra=10).to_dict()).n_extra == 10


def test_a_bigger_n_train_is_a_fresh_draw_not_d0_plus_more():
    """Why the floor needs its own split: the old floor `world.n_train=|D0|+N` does not contain D0."""
    d0 = generate_split(WorldConfig(n_train=T, seed=2, n_dev=60, n_test=60), "train_biased")
    bigger = generate_split(WorldConfig(n_train=T + N, seed=2, n_dev=60, n_test=60), "train_biased")
    assert {r.uid for r in d0} <= {r.uid for r in bigger}        # the same uids (positions) ...
    same = {r.to_json() for r in d0} & {r.to_json() for r in bigger}
    assert len(same) < T // 10                                    # ... but other pairs


def _training_set(tmp_path: Path, arm: str, **kw) -> list[Record]:
    cfg = compose_config("train", [*arm_overrides(arm, T, **kw), *WORLD], tmp_path / "run", tmp_path / "cache")
    return build_training_set(cfg).records


@pytest.fixture(scope="module")
def arms(tmp_path_factory) -> dict[str, list[Record]]:
    tmp = tmp_path_factory.mktemp("arms")
    w = [Record(f"w-{i}", f"A man number {i} sleeps.", "A man sleeps.", "entailment", "test") for i in range(N + 30)]
    write_jsonl(w, tmp / "w.jsonl")
    out = {arm: _training_set(tmp, arm, **kw) for arm, kw in
           [("d0", {}), ("floor", {"n": N}), ("ceiling", {"n": N})]}
    cfg = compose_config("train", [*arm_overrides("treatment", T, n=N, w="jsonl"), *WORLD,
                                   f"data.train_sets.jsonl.path={tmp / 'w.jsonl'}"], tmp / "run", tmp / "cache")
    out["treatment"] = build_training_set(cfg).records
    return out


def test_every_arm_holds_d0_byte_for_byte_plus_n(arms):
    d0 = arms["d0"]
    assert len(d0) == T and all(r.uid.startswith("synthetic-train_biased-") for r in d0)
    for arm in ("floor", "ceiling", "treatment"):
        records = arms[arm]
        assert len(records) == T + N, arm
        assert {r.uid for r in d0} <= {r.uid for r in records}, arm
        # uids are positions in a split, so the old floor (a fresh draw of |D0| + N) had every D0 uid too:
        # the records themselves must be D0's
        assert {r.to_json() for r in d0} <= {r.to_json() for r in records}, arm
        assert records_digest(records[:T]) == records_digest(d0), arm
    assert all(r.uid.startswith("synthetic-train_biased_extra-") for r in arms["floor"][T:])
    assert all(r.uid.startswith("synthetic-train-") for r in arms["ceiling"][T:])
    assert all(r.uid.startswith("w-") for r in arms["treatment"][T:])


def test_the_extra_pairs_avoid_d0_and_the_held_out_pairs(arms):
    cfg = WorldConfig(n_train=T, n_dev=60, n_test=60, n_challenge=30, seed=2, n_extra=N)
    held = {(r.premise, r.hypothesis) for s in ("dev", "test", "train_biased") for r in generate_split(cfg, s)}
    extra = arms["floor"][T:]
    assert not held & {(r.premise, r.hypothesis) for r in extra}
    assert [r.to_json() for r in extra] == [r.to_json() for r in generate_split(cfg, "train_biased_extra")]


def test_the_extra_pairs_follow_d0s_biased_distribution():
    """P(target | feature) = 1/3 + 2s/3 and P(feature) = r (nliforge.world.generator), by hand:
    s = 0.8 -> 0.8667, 0.5 -> 0.6667, 0.2 -> 0.4667; the unbiased split: 1/3."""
    strengths = {"negation": 0.8, "overlap": 0.5, "length": 0.2}
    cfg = WorldConfig(seed=4, n_train=300, n_dev=60, n_test=60, strengths=strengths, n_extra=3000)
    extra = generate_split(cfg, "train_biased_extra")
    assert [sum(r.label == lab for r in extra) for lab in ("entailment", "neutral", "contradiction")] == [1000] * 3
    by_hand = {"negation": 0.8667, "overlap": 0.6667, "length": 0.4667}
    for name, expected in by_hand.items():
        got = measure_artifact(extra, name)
        assert abs(got["p_target_given_feature"] - expected) < 0.05, (name, got)
        assert abs(got["p_feature"] - 0.25) < 0.03, (name, got)
    neg = measure_artifact(extra, "negation")["p_target_given_feature"]
    assert abs(neg - 1 / 3) > 0.4   # far from an artifact-free split


def test_the_extra_set_without_n_extra_is_one_clear_error(tmp_path):
    spec = {"name": "synthetic_biased_extra", "loader": "world", "split": "train_biased_extra", "num_classes": 3}
    with pytest.raises(NLIDataError, match=r"world\.n_extra=0"):
        load_set(spec, "data.train_sets.synthetic_biased_extra", dict(n_train=30, n_dev=9, n_test=9), tmp_path)


@pytest.mark.parametrize("call, message", [
    (dict(arm="ceiling", n_train=50, n=60), "1 <= n <= n_train=50"),
    (dict(arm="floor", n_train=50), "exactly one of n"),
    (dict(arm="d0", n_train=50, n=3), "n does not apply"),
    (dict(arm="treatment", n_train=50, w="a,b"), "w='a,b'"),
    (dict(arm="floors", n_train=50), "valid arms: d0, floor, ceiling, treatment"),
])
def test_bad_arm_options_are_refused(call, message):
    with pytest.raises(NLIDataError, match=message.replace("(", r"\(").replace("[", r"\[")):
        arm_overrides(**call)


def test_a_floor_of_a_total_size_is_built_from_d0():
    assert arm_overrides("floor", 400, total=450) == arm_overrides("floor", 400, n=50)
    assert arm_overrides("floor", 400, total=400) == arm_overrides("d0", 400)
    assert arm_overrides("floor", 400, total=300)[-2:] == ["++data.train_sets.synthetic_biased.limit=300",
                                                           "++data.train_sets.synthetic_biased.limit_seed=0"]


def test_the_shell_entry_prints_one_override_a_line(capsys):
    assert main(["floor", "--n-train", "4000", "--n", "300"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "data/train_sets=[synthetic_biased,synthetic_biased_extra]", "data.combine=augment",
        "world.n_train=4000", "world.n_extra=300"]
    assert main(["ceiling", "--n-train", "10", "--n", "300"]) == 2
    assert capsys.readouterr().err.startswith("error: arms ceiling: n=300")


def test_common_sh_train_arm_passes_the_arms_overrides(tmp_path):
    script = (f'HERE="{ROOT}/experiments/combined"; source "{ROOT}/experiments/common.sh"; R="{tmp_path}"; '
              f'nliforge-train() {{ printf "%s\\n" "$@" > "{tmp_path}/args"; }}; '
              'train_arm 1 2_floor floor --n-train 4000 --n 300 -- model=tiny')
    env = {k: v for k, v in os.environ.items() if k not in ("SEEDS", "WORLD")}
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    args = (tmp_path / "args").read_text().splitlines()
    assert args[:6] == ["-m", "data/train_sets=[synthetic_biased,synthetic_biased_extra]", "data.combine=augment",
                        "world.n_train=4000", "world.n_extra=300", "model=tiny"]
    assert "world.seed=1" in args and "world=snli_calibrated" in args
    bad = subprocess.run(["bash", "-c", script.replace("--n 300", "--n 0")], capture_output=True, text=True,
                         env=env, timeout=300)
    assert bad.returncode == 2 and "n=0; expected an integer >= 1" in bad.stderr
