"""The one verdict rule (nliforge.evaluation.verdict): the world minimum, Holm, and 'not tested (gate …)'."""

from __future__ import annotations

import pytest

from nliforge.evaluation.verdict import MIN_WORLDS, VERDICTS, verdict
from nliforge.evaluation.worlds import t_interval

FIVE_ABOVE = [0.02, 0.04, 0.06, 0.08, 0.10]   # mean 0.06, interval [+0.0207, +0.0993] (t_{0.975,4} = 2.776)


def test_five_worlds_above_zero_with_holm_below_005_is_reproduced():
    assert MIN_WORLDS == 5
    assert verdict("tested", t_interval(FIVE_ABOVE), holm_p=0.0066) == "reproduced"


def test_fewer_worlds_than_the_minimum_is_not_shown_and_a_study_may_ask_for_fewer():
    four = t_interval(FIVE_ABOVE[:4])            # 0.05 [0.0089, 0.0911]: above 0, but four worlds
    assert four.low > 0
    assert verdict("tested", four, holm_p=0.01) == "not shown (n_worlds = 4 < 5)"
    assert verdict("tested", four, holm_p=0.01, min_worlds=4) == "reproduced"
    assert verdict("tested", t_interval(FIVE_ABOVE), holm_p=0.01, min_worlds=6) == "not shown (n_worlds = 5 < 6)"


def test_holm_and_the_wrong_side():
    assert verdict("tested", t_interval(FIVE_ABOVE), holm_p=0.06) == \
        "not shown (Holm-adjusted p = 0.060 ≥ 0.05 over its family)"
    assert verdict("tested", t_interval([-v for v in FIVE_ABOVE])) == "contradicted"
    assert verdict("tested", t_interval([0.02, -0.04, 0.06, 0.08, 0.10])) == "not shown (interval includes 0)"


def test_a_failed_gate_is_a_verdict_word_whatever_the_numbers():
    assert "not tested" in VERDICTS
    word = verdict("tested", t_interval(FIVE_ABOVE), holm_p=0.001, gate="fit: 60.2 < 65.0 in world 2")
    assert word == "not tested (gate fit: 60.2 < 65.0 in world 2)"


def test_the_experiments_summary_uses_the_same_rule():
    from experiments import summary_stats

    assert summary_stats.verdict is verdict and summary_stats.VERDICTS is VERDICTS
    assert summary_stats.MIN_WORLDS == MIN_WORLDS


@pytest.mark.parametrize("kind, word", [("descriptive", "descriptive"), ("not run", "not run")])
def test_other_kinds(kind, word):
    assert verdict(kind, t_interval(FIVE_ABOVE)) == word
