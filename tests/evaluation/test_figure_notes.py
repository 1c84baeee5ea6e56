"""Figures: data-map region labels sit on their regions' points; a figure made from a
stand-in model or server says so on the image itself."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from PIL import Image

from conftest import CONF_DIR
from nliforge.cartography.plot import plot_data_map, region_label_positions
from nliforge.data.records import Record
from nliforge.engine.stand_in import STAND_IN_FIGURE_NOTE, stand_in_note
from nliforge.filtering.zreport import write_bias_plots


def _frame() -> pd.DataFrame:
    """10 examples, uid-indexed like compute_metrics' frame."""
    conf = [0.95, 0.90, 0.85, 0.80, 0.60, 0.50, 0.40, 0.20, 0.10, 0.05]
    var = [0.02, 0.05, 0.04, 0.10, 0.40, 0.45, 0.35, 0.12, 0.08, 0.06]
    return pd.DataFrame({"confidence": conf, "variability": var, "correctness_frac": [1.0] * 5 + [0.5] * 5},
                        index=pd.Index([f"u{i}" for i in range(10)], name="uid"))


def test_region_labels_sit_at_the_median_of_each_regions_typical_points():
    assert region_label_positions(_frame()) == {       # default: the most typical tenth, 1 point of 10 here
        "ambiguous": (0.45, 0.50), "easy": (0.02, 0.95), "hard": (0.06, 0.05)}
    pos = region_label_positions(_frame(), fraction=0.33)
    # floor(0.33 * 10) = 3 points per region, chosen as cartography.select_region does:
    # ambiguous = highest variability: u5 0.45, u4 0.40, u6 0.35 -> medians (0.40, conf of u4 u5 u6: 0.50)
    # hard = lowest confidence: u9 0.05, u8 0.10, u7 0.20 -> (var 0.06 0.08 0.12: 0.08, 0.10)
    # easy = highest confidence: u0 0.95, u1 0.90, u2 0.85 -> (var 0.02 0.05 0.04: 0.04, 0.90)
    assert pos["ambiguous"] == (0.40, 0.50)
    assert pos["hard"] == (0.08, 0.10)
    assert pos["easy"] == (0.04, 0.90)
    moved = _frame().assign(confidence=lambda f: f["confidence"] * 0.5)   # a harder run: labels follow
    assert region_label_positions(moved, fraction=0.33)["easy"] == (0.04, 0.45)
    assert region_label_positions(_frame().iloc[:9]) == {}                # floor(0.1 * 9) = 0: no label


def _height(path) -> int:
    with Image.open(path) as img:
        return img.size[1]


def test_a_note_is_drawn_under_the_figure(tmp_path):
    plain = plot_data_map(_frame(), tmp_path / "plain.png")
    noted = plot_data_map(_frame(), tmp_path / "noted.png", note=STAND_IN_FIGURE_NOTE)
    assert _height(noted) > _height(plain)          # the tight bounding box grew to hold the note's line
    rng = np.random.default_rng(0)
    records = [Record(f"r{i}", "A man sits.", f"A man {w} sits.", ["entailment", "neutral", "contradiction"][i % 3])
               for i, w in enumerate(rng.choice(["not", "tall", "old", "never"], 60))]
    a = write_bias_plots(records, records[:30], tmp_path / "a")
    b = write_bias_plots(records, records[:30], tmp_path / "b", note=STAND_IN_FIGURE_NOTE)
    assert len(a) == len(b) == 3 and all(_height(y) > _height(x) for x, y in zip(a, b))


def test_the_stand_in_note_follows_the_generator_choice():
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        demo = compose("generate", overrides=["experiment=demo"])
        real = compose("generate", overrides=["experiment=demo", "generator=openai_chat"])
    GlobalHydra.instance().clear()
    assert stand_in_note(demo) == STAND_IN_FIGURE_NOTE and stand_in_note(real) == ""
