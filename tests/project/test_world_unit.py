"""experiments/world_unit.py: the world as the unit of analysis and Holm's correction, against values
worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from experiments.world_unit import holm, per_world_difference, verdict, world_test


def test_the_interval_and_p_are_over_worlds():
    t = world_test([1.0, 3.0, 5.0])        # mean 3, sd 2, se 2/sqrt(3); t_{0.975,2} = 4.3027
    assert t["n_worlds"] == 3 and t["estimate"] == pytest.approx(3.0)
    assert (t["low"], t["high"]) == pytest.approx((3 - 4.3027 * 1.1547, 3 + 4.3027 * 1.1547), abs=1e-3)
    assert t["p_one_sided"] == pytest.approx(0.0608, abs=1e-4)   # t = 2.598 on 2 df
    one = world_test([2.0])
    assert one["estimate"] == 2.0 and math.isnan(one["low"]) and math.isnan(one["p_one_sided"])


def test_training_seeds_are_averaged_within_a_world_not_counted_as_units():
    rows = []
    for ws, (floor, full) in {0: ([0.50, 0.52, 0.54], [0.55, 0.55, 0.58]), 1: ([0.60, 0.60, 0.60], [0.59, 0.61, 0.63])}.items():
        for seed, (f, w) in enumerate(zip(floor, full), start=1):
            rows += [{"row": "floor", "world_seed": ws, "seed": seed, "eval_set": "challenge mean", "value": f},
                     {"row": "full", "world_seed": ws, "seed": seed, "eval_set": "challenge mean", "value": w}]
    d = per_world_difference(pd.DataFrame(rows), "full", "floor")
    # world 0: (0.05 + 0.03 + 0.04) / 3 = 0.04; world 1: (-0.01 + 0.01 + 0.03) / 3 = 0.01
    assert list(d.index) == [0, 1] and d.tolist() == pytest.approx([0.04, 0.01])
    assert world_test(d)["n_worlds"] == 2


def test_holm_step_down():
    # sorted 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04, raised to 0.06 to stay monotone)
    assert holm({"a": 0.01, "b": 0.04, "c": 0.03}) == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})
    assert holm({"a": 0.6, "b": 0.9}) == {"a": 1.0, "b": 1.0}


def test_the_table_uses_the_package_rule_with_its_five_world_minimum():
    """world_unit.py has no rule of its own: three worlds above 0 with Holm p < 0.05 are not enough."""
    from experiments import world_unit
    from nliforge.evaluation import verdict as rule

    assert world_unit.verdict is rule.verdict
    rows = []
    for ws, diff in enumerate([0.05, 0.06, 0.07]):   # mean 0.06, sd 0.01: t = 10.4 on 2 df, p = 0.0046
        rows += [{"row": "floor", "world_seed": ws, "seed": 1, "eval_set": "challenge mean", "value": 0.5},
                 {"row": "full", "world_seed": ws, "seed": 1, "eval_set": "challenge mean", "value": 0.5 + diff}]
    (line,) = world_unit.table(pd.DataFrame(rows), {"M1": ("full", "floor")})[2:]
    assert line.endswith("| not shown (n_worlds = 3 < 5) |"), line
