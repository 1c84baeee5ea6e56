"""experiments/controls_table.py, the table every oracle-free experiment writes: it reads
<scratch>/world<ws>/sweep/<row>/<job>/metrics.csv, pairs units by (world seed, training seed), and
reports row − floor and the gap closure; checked on metrics written here with values worked by hand."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("controls_table", ROOT / "experiments" / "controls_table.py")
controls_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(controls_table)

CHALLENGES = ["synthetic_challenge_negation", "synthetic_challenge_overlap", "synthetic_challenge_length"]


def write_run(folder: Path, train_id: str, seed: int, test: float, challenge: float) -> None:
    folder.mkdir(parents=True)
    rows = [(train_id, seed, "synthetic_test", "acc", test)] + [(train_id, seed, s, "acc", challenge) for s in CHALLENGES]
    pd.DataFrame(rows, columns=["train_id", "seed", "eval_set", "metric", "value"]).to_csv(folder / "metrics.csv", index=False)


def test_gap_closure_and_differences_from_a_two_world_layout(tmp_path):
    # challenge accuracy per unit (world, seed): floor 0.30 everywhere, ceiling 0.40, method 0.35 or 0.33
    method = {(0, 1): 0.35, (0, 2): 0.35, (1, 1): 0.33, (1, 2): 0.33}
    for ws in (0, 1):
        for job, seed in enumerate((1, 2)):
            sweep = tmp_path / f"world{ws}" / "sweep"
            write_run(sweep / "1_floor" / str(job), "floor", seed, 0.60, 0.30)
            write_run(sweep / "2_method" / str(job), "method", seed, 0.61, method[(ws, seed)])
            write_run(sweep / "3_ceiling" / str(job), "ceiling", seed, 0.62, 0.40)
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
