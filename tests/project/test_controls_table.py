"""experiments/controls_table.py, the table every oracle-free experiment writes: it reads
<scratch>/world<ws>/sweep/<row>/<job>/metrics.csv, pairs units by (world seed, training seed), and
reports row − floor and the gap closure; checked on metrics written here with values worked by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments import controls_table

CHALLENGES = ["synthetic_challenge_negation", "synthetic_challenge_overlap", "synthetic_challenge_length"]


def write_run(folder: Path, train_id: str, seed: int, test: float, challenge: float) -> None:
    folder.mkdir(parents=True)
    rows = [(train_id, seed, "synthetic_test", "acc", test)] + [(train_id, seed, s, "acc", challenge) for s in CHALLENGES]
    pd.DataFrame(rows, columns=["train_id", "seed", "eval_set", "metric", "value"]).to_csv(folder / "metrics.csv", index=False)


def write_layout(root: Path, method: dict[int, tuple[float, float]]) -> None:
    """Per world seed, training seeds 1 and 2: floor (challenge 0.30), method (the given values), ceiling (0.40)."""
    for ws, values in method.items():
        for job, (seed, value) in enumerate(zip((1, 2), values)):
            sweep = root / f"world{ws}" / "sweep"
            write_run(sweep / "1_floor" / str(job), "floor", seed, 0.60, 0.30)
            write_run(sweep / "2_method" / str(job), "method", seed, 0.61, value)
            write_run(sweep / "3_ceiling" / str(job), "ceiling", seed, 0.62, 0.40)


def test_gap_closure_and_differences_from_a_two_world_layout(tmp_path):
    # challenge accuracy per unit (world, seed): floor 0.30 everywhere, ceiling 0.40, method 0.35 or 0.33
    write_layout(tmp_path, {0: (0.35, 0.35), 1: (0.33, 0.33)})
    out = tmp_path / "results.md"
    controls_table.main(["--scratch", str(tmp_path), "--out", str(out), "--row", "1_floor=floor",
                         "--row", "2_method=method", "--row", "3_ceiling=ceiling", "--floor", "1_floor",
                         "--ceiling", "3_ceiling", "--compare", "2_method:1_floor"])
    text = out.read_text()
    # mean gain 0.04 over a constant gap 0.10: closure 0.40; resamples give 0.30 to 0.50
    method_line = next(line for line in text.splitlines() if line.startswith("| method | +4.0"))
    assert "| 0.40 [0.30, 0.50] |" in method_line
    assert "ceiling − floor on challenge mean: +10.0 [+10.0, +10.0] points" in text
    assert "| method − floor | +4.0 [" in text and "| +1.0 [" in text   # the compare line: test +1.0
    units = pd.read_csv(out.with_suffix(".csv"))
    assert len(units[(units.row == "method") & (units.eval_set == "challenge mean")]) == 4
    assert "| method | 33.0 ± 0.0 | 33.0 ± 0.0 |" not in text and "| method | 35.0 ± 0.0 | 33.0 ± 0.0 |" in text


def test_the_world_as_unit_averages_training_seeds_then_pairs_worlds(tmp_path):
    # method − floor per world, each the mean of two training seeds: 0.06, 0.03, 0.05 (floor 0.30 everywhere)
    write_layout(tmp_path, {0: (0.35, 0.37), 1: (0.33, 0.33), 2: (0.34, 0.36)})
    out = tmp_path / "results.md"
    controls_table.main(["--scratch", str(tmp_path), "--out", str(out), "--row", "1_floor=floor",
                         "--row", "2_method=method", "--row", "3_ceiling=ceiling", "--floor", "1_floor",
                         "--ceiling", "3_ceiling", "--unit", "world"])
    text = out.read_text()
    # mean 0.0467; sd of (0.06, 0.03, 0.05) = 0.01528, se 0.00882, t(0.975, 2) = 4.303: ±0.0380 -> [0.0087, 0.0846]
    assert "| method | +4.7 [+0.9, +8.5] |" in text
    assert "| method | 3 | " in text and "world seeds (each the mean over its training seeds)" in text
    # the per-world table and the csv keep every run
    assert "| method | 36.0 ± 1.4 | 33.0 ± 0.0 | 35.0 ± 1.4 |" in text
    assert len(pd.read_csv(out.with_suffix(".csv")).query("row == 'method' and eval_set == 'challenge mean'")) == 6
