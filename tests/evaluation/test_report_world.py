"""`nliforge-report ... unit=world`: each world one unit (its training seeds averaged, the world read from
each run's config.yaml), t intervals over worlds, one-sided p and Holm over a declared family, against values
worked out by hand; and `experiments/` computes with the same functions."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import compose_plain

from nliforge.evaluation import worlds
from nliforge.evaluation.suite import metrics_rows, write_metrics_csv
from nliforge.report import report

# train_id -> world seed -> the accuracies of training seeds 0 and 1 on "hans"
SWEEP = {
    "base": {0: (0.50, 0.52), 1: (0.60, 0.60), 2: (0.55, 0.57)},    # world means 0.51, 0.60, 0.56
    "aug": {0: (0.53, 0.57), 1: (0.61, 0.63), 2: (0.62, 0.60)},     # 0.55, 0.62, 0.61: differences 0.04, 0.02, 0.05
    "other": {0: (0.51, 0.53), 1: (0.59, 0.59), 2: (0.60, 0.58)},   # 0.52, 0.59, 0.59: differences 0.01, -0.01, 0.03
}


def one_sided_p_2df(t: float) -> float:
    """Student t's upper tail on 2 df in closed form: 1/2 - t / (2 sqrt(2 + t^2))."""
    return 0.5 - t / (2 * math.sqrt(2 + t * t))


# by hand, aug: mean 0.036667, sd 0.015275, se 0.008819; t_{0.975,2} = 4.302653 -> half width 0.037945;
# t = 4.1576. other: mean 0.01, sd 0.02, se 0.011547, t = 0.8660. Holm over both: 2 x p(aug), then p(other).
AUG_P, OTHER_P = one_sided_p_2df(0.036667 / 0.008819), one_sided_p_2df(0.01 / 0.011547)


def write_sweep(root: Path, world_key_line: str = "world:\n  seed: {ws}\n") -> Path:
    job = 0
    for train_id, by_world in SWEEP.items():
        for ws, accs in by_world.items():
            for seed, acc in enumerate(accs):
                folder = root / str(job)
                write_metrics_csv(metrics_rows({"hans": {"acc": acc, "n": 100.0}}, train_id, seed), folder / "metrics.csv")
                (folder / "config.yaml").write_text(f"seed: {seed}\n" + world_key_line.format(ws=ws))
                job += 1
    return root


def run(tmp_path: Path, extra: list[str]) -> dict:
    sweep = write_sweep(tmp_path / "sweep")
    return report(compose_plain("report", [f"sweep={sweep}", f"out={tmp_path / 'out'}", "unit=world", *extra]))


def test_intervals_p_and_holm_are_over_worlds_as_by_hand(tmp_path):
    result = run(tmp_path, ["baseline=base"])
    aug = result["summary"].set_index("train_id").loc["aug"]
    assert aug["n"] == 3 and aug["mean"] == pytest.approx((0.55 + 0.62 + 0.61) / 3)
    diff = result["diff"].set_index("train_id")
    assert diff.loc["aug", "n"] == 3 and diff.loc["aug", "diff"] == pytest.approx(0.036667, abs=1e-6)
    assert (diff.loc["aug", "ci_low"], diff.loc["aug", "ci_high"]) == pytest.approx(
        (0.036667 - 0.037945, 0.036667 + 0.037945), abs=1e-5)
    assert diff.loc["aug", "p_one_sided"] == pytest.approx(AUG_P, abs=1e-4)      # 0.0266
    assert diff.loc["other", "p_one_sided"] == pytest.approx(OTHER_P, abs=1e-4)  # 0.2389
    assert diff.loc["aug", "holm_p"] == pytest.approx(2 * AUG_P, abs=2e-4)
    assert diff.loc["other", "holm_p"] == pytest.approx(OTHER_P, abs=1e-4)
    md = result["md"].read_text(encoding="utf-8")
    assert "## Over worlds: one-sided tests" in md and "| aug | hans | +3.7 [-0.1, +7.5] | 3 | 0.027 | 0.053 |" in md


def test_holm_only_over_the_declared_family_and_the_other_side(tmp_path):
    diff = run(tmp_path, ["baseline=base", "family=[aug]"])["diff"].set_index("train_id")
    assert diff.loc["aug", "holm_p"] == pytest.approx(AUG_P, abs=1e-4) and math.isnan(diff.loc["other", "holm_p"])
    less = run(tmp_path / "less", ["baseline=base", "side=less"])["diff"].set_index("train_id")
    assert less.loc["aug", "p_one_sided"] == pytest.approx(1 - AUG_P, abs=1e-4)


def test_seeds_of_one_world_are_not_units_and_bad_input_is_named(tmp_path):
    sweep = write_sweep(tmp_path / "sweep")
    with pytest.raises(ValueError, match="has metrics in 3 run folders"):   # unit=seed: seed 0 of three worlds
        report(compose_plain("report", [f"sweep={sweep}", f"out={tmp_path / 'o1'}"]))
    with pytest.raises(ValueError, match=r"family: \['nope'\] name no train_id"):
        run(tmp_path / "a", ["baseline=base", "family=[nope]"])
    with pytest.raises(ValueError, match=r"unit='worlds'; valid: seed"):
        report(compose_plain("report", [f"sweep={sweep}", "unit=worlds"]))
    bare = write_sweep(tmp_path / "bare", world_key_line="")
    with pytest.raises(ValueError, match=r"bare/0/config.yaml has no world.seed; name the key .* world_key="):
        report(compose_plain("report", [f"sweep={bare}", "unit=world"]))


def test_the_help_shows_the_world_unit():
    out = subprocess.run([sys.executable, "-m", "nliforge.report", "--help"], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    assert "unit=seed              seed | world: each world one unit" in out and "family=null" in out


def test_experiments_use_the_packages_statistics():
    from experiments import summary_stats, world_unit

    for name in ("t_interval", "one_sided_p", "holm", "Estimate"):
        assert getattr(summary_stats, name) is getattr(worlds, name)
    assert world_unit.holm is worlds.holm and world_unit.t_interval is worlds.t_interval
