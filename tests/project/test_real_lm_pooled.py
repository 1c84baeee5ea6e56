"""experiments/real_lm/pooled.py: items 5 and 6 pooled over world seeds from the per-world files the two
scripts commit; checked on files written here with differences, intervals and gap closure worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from experiments.real_lm import pooled

CHALLENGES = ["synthetic_challenge_negation", "synthetic_challenge_overlap", "synthetic_challenge_length"]
ROWS = ["D0", "floor: D0 + #W biased", "D0 + W", "D0 ◇ W", "ceiling: D0 + #W unbiased"]


def write_wanli_csv(path: Path, challenge: dict[str, float]) -> None:
    """One world's wanli_table CSV: every challenge split at the row's value, test 0.6, and the mean."""
    rows = []
    for row, value in challenge.items():
        for seed in (1, 2, 3):
            rows += [("x", seed, "synthetic_test", "acc", 0.6, row)]
            rows += [("x", seed, s, "acc", value, row) for s in CHALLENGES]
            rows += [("x", seed, "challenge mean", "acc", value, row)]
    pd.DataFrame(rows, columns=["train_id", "seed", "eval_set", "metric", "value", "row"]).to_csv(path, index=False)


def write_zaug_json(path: Path, ul: float, mle: float) -> None:
    variant = lambda t: {"parsed": 100, "teacher": t, "oracle": 0.3}  # noqa: E731
    seeds = {str(s): {"ul": variant(ul), "mle": variant(mle)} for s in (0, 1, 2)}
    path.write_text(json.dumps({"smollm2": seeds}))


def write_two_worlds(folder: Path) -> None:
    # challenge mean per row: floor 0.30, ceiling 0.40; D0 + W 0.35 on world 0 and 0.33 on world 1
    base = {"D0": 0.29, ROWS[1]: 0.30, "D0 ◇ W": 0.31, ROWS[4]: 0.40}
    write_wanli_csv(folder / "wanli_table_p_w0.csv", {**base, "D0 + W": 0.35})
    write_wanli_csv(folder / "wanli_table_p_w1.csv", {**base, "D0 + W": 0.33})
    write_zaug_json(folder / "zaug_table_p_w0.json", ul=0.40, mle=0.35)
    write_zaug_json(folder / "zaug_table_p_w1.json", ul=0.30, mle=0.31)


def test_pooled_differences_gap_closure_and_agreement_by_hand(tmp_path):
    write_two_worlds(tmp_path)
    out = tmp_path / "pooled.md"
    pooled.main(["--preset", "p", "--dir", str(tmp_path), "--out", str(out)])
    text = out.read_text()
    # D0 + W − floor over 6 units: 5, 5, 5, 3, 3, 3 points; mean 4.0, sd sqrt(6/5), t(5) 2.5706:
    # half-width 2.5706 * 1.0954 / sqrt(6) = 1.15 -> [+2.9, +5.1]; closure 0.04 / 0.10 = 0.40
    line = next(x for x in text.splitlines() if x.startswith("| D0 + W | +4.0"))
    assert "+4.0 [+2.9, +5.1]" in line and "| 0.40 [" in line
    assert "ceiling − floor on challenge mean: +10.0 [+10.0, +10.0] points" in text
    assert "| D0 + W | 35.0 ± 0.0 | 33.0 ± 0.0 |" in text          # per world seed
    assert "| D0 + W | 6 |" in text                                # 6 units in the accuracy table
    # teacher agreement ul − mle: 5, 5, 5, −1, −1, −1 points; mean 2.0, sd sqrt(54/5) = 3.286,
    # half-width 2.5706 * 3.286 / sqrt(6) = 3.45 -> [−1.4, +5.4]
    zline = next(x for x in text.splitlines() if x.startswith("| SmolLM2 fine-tuned | 6 |"))
    assert "+2.0 [-1.4, +5.4]" in zline


def test_a_challenge_mean_that_is_not_the_mean_is_refused(tmp_path):
    write_two_worlds(tmp_path)
    path = tmp_path / "wanli_table_p_w1.csv"
    m = pd.read_csv(path)
    m.loc[m["eval_set"] == "challenge mean", "value"] += 0.01
    m.to_csv(path, index=False)
    with pytest.raises(SystemExit, match="wanli_table_p_w1.csv: its 'challenge mean' rows"):
        pooled.main(["--preset", "p", "--dir", str(tmp_path), "--out", str(tmp_path / "x.md")])


def test_a_missing_world_names_the_file_and_the_command(tmp_path):
    write_two_worlds(tmp_path)
    (tmp_path / "zaug_table_p_w1.json").unlink()
    with pytest.raises(SystemExit, match=r"zaug_table_p_w1.json: missing; run RL_WORLD=p RL_WORLD_SEED=1"):
        pooled.main(["--preset", "p", "--dir", str(tmp_path), "--out", str(tmp_path / "x.md")])
    assert not (tmp_path / "x.md").exists()


def test_tag_and_items_pick_the_files(tmp_path):
    write_two_worlds(tmp_path)
    for ws in (0, 1):   # only the WANLI item exists under the tag
        (tmp_path / f"wanli_table_p_w{ws}.csv").rename(tmp_path / f"wanli_table_p_w{ws}_seeds_all.csv")
    pooled.main(["--preset", "p", "--dir", str(tmp_path), "--tag", "_seeds_all", "--items", "wanli"])
    text = (tmp_path / "pooled_p_seeds_all.md").read_text()
    assert "| D0 + W | +4.0 [+2.9, +5.1]" in text and "Item 5" not in text


def test_review_teacher_reads_its_own_files(tmp_path):
    write_two_worlds(tmp_path)
    for ws in (0, 1):
        (tmp_path / f"wanli_table_p_w{ws}.csv").rename(tmp_path / f"wanli_table_review_teacher_p_w{ws}.csv")
    pooled.main(["--preset", "p", "--dir", str(tmp_path), "--review", "teacher", "--items", "wanli"])
    assert "| D0 + W | +4.0 [+2.9, +5.1]" in (tmp_path / "pooled_p_review_teacher.md").read_text()
    with pytest.raises(SystemExit, match="wanli_table_p_w0.csv: missing; run REVIEW=annotator"):
        pooled.main(["--preset", "p", "--dir", str(tmp_path), "--items", "wanli"])
