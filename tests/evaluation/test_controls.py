"""Gap closure: the ratio of mean paired differences and its paired bootstrap interval,
checked against values computed by hand."""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest

from nliforge.evaluation.controls import format_closure, gap_closure

UNITS = [(0, 1), (0, 2), (1, 1)]


def series(values, units=UNITS):
    return pd.Series(values, index=pd.Index(units))


def test_proportional_gains_give_an_exact_closure_and_a_point_interval():
    # method − floor = 1, 1.1, 0.9; ceiling − floor = 2, 2.2, 1.8: every resample's ratio is 0.5;
    # the gap 2 ± 0.2 (sd) has the t(2) interval 2 ± 4.303 * 0.2 / sqrt(3) = [1.503, 2.497]
    r = gap_closure(series([11, 11.1, 10.9]), series([10, 10, 10]), series([12, 12.2, 11.8]))
    assert r["closure"] == pytest.approx(0.5)
    assert r["ci_low"] == pytest.approx(0.5) and r["ci_high"] == pytest.approx(0.5)
    assert r["ceiling_minus_floor"] == pytest.approx(2.0) and r["gap_shown"]
    assert r["cf_low"] == pytest.approx(1.503, abs=1e-3) and r["cf_high"] == pytest.approx(2.497, abs=1e-3)
    assert format_closure(r) == "0.50 [0.50, 0.50]"


def test_two_units_interval_spans_the_single_unit_ratios():
    # gains 1 and 3 over a gap of 2 each: closure (1+3)/(2+2) = 1.0; a resample of two units is
    # (1,1) -> 0.5, (3,3) -> 1.5 or mixed -> 1.0, each end with probability 1/4 > 2.5%
    r = gap_closure(series([1, 3], UNITS[:2]), series([0, 0], UNITS[:2]), series([2, 2], UNITS[:2]))
    assert r["closure"] == pytest.approx(1.0)
    assert r["ci_low"] == pytest.approx(0.5) and r["ci_high"] == pytest.approx(1.5)


def test_a_ceiling_not_above_the_floor_is_flagged():
    r = gap_closure(series([1.0, 1.2, 0.9]), series([1.0, 1.0, 1.0]), series([1.1, 0.9, 1.05]))
    assert r["closure"] == pytest.approx((0.1 / 3) / (0.05 / 3))
    assert not r["gap_shown"] and format_closure(r).endswith("(no gap)")


def test_zero_gap_is_undefined_not_infinite():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every resample is undefined: no all-NaN quantile warning either
        r = gap_closure(series([2, 2, 2]), series([1, 1, 1]), series([1, 1, 1]))
    assert math.isnan(r["closure"]) and format_closure(r) == "–"
    assert math.isnan(r["ci_low"]) and math.isnan(r["ci_high"])


def test_unpaired_units_are_an_error_that_names_them():
    with pytest.raises(ValueError, match=r"\(1, 1\)"):
        gap_closure(series([1, 2, 3]), series([1, 2], UNITS[:2]), series([1, 2, 3]))
