"""WANLI Stage 3: the four heuristic rules, cleaning, and the label-balanced variability selection."""

from __future__ import annotations

import numpy as np
import pytest

from nliforge.errors import NLIDataError
from nliforge.engine.rows import clean_text
from nliforge.pipelines.wanli.heuristics import (
    apply_heuristics, copies_example, filter_pairs, identical, instruction_phrase, too_short,
)
from nliforge.filtering.variability import balanced_quota, select_balanced_top, select_by_max_variability

EXAMPLES = [("A dog runs in a field.", "An animal is outside."), ("Two men talk.", "People speak.")]


def test_too_short():
    assert too_short("Cats.", "  Dogs  ") is True          # "Dogs" has 4 characters
    assert too_short("Cats!", "Dogs!") is False


def test_identical_ignores_case_punctuation_and_spacing():
    assert identical("A man, sleeping.", "a  man sleeping")
    assert not identical("A man sleeps.", "A man sleeps now.")


def test_instruction_phrase_is_case_insensitive():
    assert instruction_phrase("Here is a Pair of  Sentences.", "They match.")
    assert instruction_phrase("A man sleeps.", "It has the same relationship as before.")
    assert not instruction_phrase("A pair of shoes.", "Two sentences.")


def test_copies_example_needs_both_sides():
    assert copies_example("a dog runs in a field", "An animal is outside!", EXAMPLES)
    assert not copies_example("A dog runs in a field.", "A cat sleeps.", EXAMPLES)


@pytest.mark.parametrize("premise,hypothesis,expected", [
    ("Hi.", "Hi.", "too_short"),                 # too_short wins over identical
    ("A man sleeps.", "a man sleeps", "identical"),
    ("Write a pair of sentences.", "A man sleeps.", "instruction_phrase"),
    ("Two men talk.", "People speak.", "copies_example"),
    ("Two men talk.", "Nobody speaks.", None),
])
def test_apply_heuristics_names_the_first_rule(premise, hypothesis, expected):
    assert apply_heuristics(premise, hypothesis, EXAMPLES) == expected


@pytest.mark.parametrize("raw,clean", [
    ('"A man."', "A man."),
    ("(A man.)", "A man."),
    ('"A man.', "A man."),
    ('A man."', "A man."),
    ('  ["A man."] ', "A man."),
    ("“A man.”", "A man."),
    ('"A" and "B" met.', '"A" and "B" met.'),
    ("(a) and (b)", "(a) and (b)"),
    ("A man (tall) sleeps.", "A man (tall) sleeps."),
    ("'I don't know.'", "I don't know."),
    ("the students'", "the students'"),
])
def test_clean_text(raw, clean):
    assert clean_text(raw) == clean


def test_filter_pairs_counts_each_rule_and_cleans_the_kept():
    items = [
        ('"A man sleeps."', "(Someone rests.)", EXAMPLES),
        ("Hi", "A man sleeps.", EXAMPLES),
        ("A man sleeps.", "A man sleeps!", EXAMPLES),
        ("Two men talk.", "People speak.", EXAMPLES),
        ('"(abc)"', "A man sleeps.", EXAMPLES),      # 7 characters raw, too short once cleaned
        ("A cat sits.", "An animal sits.", EXAMPLES),
        ('"(ab)"', "(ab)", EXAMPLES),                # rules see the cleaned pair: too_short before identical
    ]
    result = filter_pairs(items)
    assert result.kept == [0, 5]
    assert result.pairs == [("A man sleeps.", "Someone rests."), ("A cat sits.", "An animal sits.")]
    assert result.dropped == {"too_short": 3, "identical": 1, "copies_example": 1}
    assert result.drops == [(1, "too_short"), (2, "identical"), (3, "copies_example"), (4, "too_short"),
                            (6, "too_short")]


# --------------------------------------------------------------------------- balanced selection
def test_balanced_top_hand_computed():
    # N = 10, L = 3. fraction 0.8: floor(8 / 3) = 2 <= 3 (smallest label), so 2 per label;
    # fraction 0.5: floor(5 / 3) = 1 per label.
    labels = ["e", "e", "e", "e", "n", "n", "n", "c", "c", "c"]
    scores = np.array([0.1, 0.9, 0.5, 0.9, 0.2, 0.8, 0.3, 0.7, 0.6, 0.05])
    assert balanced_quota(labels, 0.8) == 2
    # e: 0.9 (1) and 0.9 (3) tie -> both; n: 0.8 (5), 0.3 (6); c: 0.7 (7), 0.6 (8).
    assert select_balanced_top(scores, labels, 0.8).tolist() == [1, 3, 5, 6, 7, 8]
    assert select_balanced_top(scores, labels, 0.5).tolist() == [1, 5, 7]


def test_balanced_top_is_capped_by_the_smallest_label_and_breaks_ties_by_index():
    labels = ["e"] * 6 + ["n"]
    scores = np.ones(7)
    assert balanced_quota(labels, 1.0) == 1            # floor(7 / 2) = 3, but n has only 1
    assert select_balanced_top(scores, labels, 1.0).tolist() == [0, 6]


def test_paper_counts_are_reproduced():
    labels = np.repeat(["e", "n", "c"], [95747, 95747, 95747])  # 287,241 after the heuristics
    assert 3 * balanced_quota(labels, 0.5) == 143619


def test_balanced_top_rejects_bad_input():
    with pytest.raises(NLIDataError, match="finite"):
        select_balanced_top(np.array([np.nan, 1.0]), ["e", "n"])
    with pytest.raises(NLIDataError, match="one label per score"):
        select_balanced_top(np.array([1.0, 2.0]), ["e"])
    with pytest.raises(NLIDataError, match="fraction"):
        select_balanced_top(np.array([1.0]), ["e"], fraction=1.5)


def test_select_by_max_variability_uses_epoch_probabilities():
    still = np.tile([[0.8, 0.1, 0.1]], (3, 1))                        # no spread: score 0
    moving = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.5, 0.25, 0.25]])
    probs = np.stack([still, moving, still, moving], axis=1)          # (E=3, N=4, C=3)
    kept, scores = select_by_max_variability(probs, ["e", "e", "n", "n"], fraction=0.5)
    assert scores[0] == pytest.approx(0, abs=1e-12) and scores[1] == pytest.approx(np.std([0.9, 0.1, 0.5]))  # label 0 spreads most
    assert kept.tolist() == [1, 3]
    with pytest.raises(NLIDataError, match="per-epoch"):
        select_by_max_variability(probs[0], ["e"] * 4)
