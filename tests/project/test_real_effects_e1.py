"""experiments/real_effects E1's fit gates: the augmented arm's last-epoch in-training accuracy on its HANS-like
pairs is read from the run's training dynamics (computed by hand below), the third attempt gates E1a on the plus
arm and E1b on the diamond arm per world, and a world that falls short stops only the claim its arm gates."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from test_real_effects_e3 import load_analysis

from experiments.real_effects import analysis_e1


def write_dynamics(run: Path, epochs: list[tuple[list[int], list[int]]]) -> None:
    """Per epoch (predicted class, gold class) for 4 HANS-like pairs then 2 MNLI pairs; one-hot probabilities."""
    (run / "dynamics").mkdir(parents=True)
    for e, (pred, gold) in enumerate(epochs):
        p = [[1.0 if c == k else 0.0 for c in range(3)] for k in pred]
        pd.DataFrame({"uid": ["hans-1", "hans-2", "hans-3", "hans-4", "mnli-1", "mnli-2"],
                      "p_entailment": [x[0] for x in p], "p_neutral": [x[1] for x in p],
                      "p_contradiction": [x[2] for x in p], "gold": gold}).to_parquet(run / "dynamics" / f"epoch_{e:03d}.parquet")


def test_fit_gates_read_the_last_epoch_on_the_hans_like_pairs(tmp_path):
    gold = [0, 1, 1, 0, 2, 0]
    write_dynamics(tmp_path / "plus", [([1, 1, 0, 1, 2, 0], gold), ([0, 1, 1, 1, 2, 2], gold)])   # last: 3 of 4 HANS
    write_dynamics(tmp_path / "diamond", [([0, 1, 1, 0, 0, 0], gold), ([0, 0, 0, 1, 2, 0], gold)])  # last: 1 of 4
    assert analysis_e1.train_acc(tmp_path / "plus") == [(0.25, 1.0), (0.75, 0.5)]
    runs = {"plus": tmp_path / "plus", "diamond": tmp_path / "diamond"}
    third = {r["criterion"]: r["value"] for r in analysis_e1.fit_gates("6ep:", 2, runs)}
    assert third == {"6ep:G2": 75.0 - 65.0, "6ep:G2d": 25.0 - 65.0}
    assert analysis_e1.fit_gates("3ep:", 2, runs) == [{"criterion": "3ep:G2", "world": 2, "value": 75.0 - 50.0}]


def test_the_third_attempt_gates_each_family_on_its_own_arm_in_every_world():
    analysis = load_analysis()
    rows = [{"criterion": "6ep:G1", "world": w, "value": 10.0 + w} for w in range(1, 6)]
    rows += [{"criterion": "6ep:G2", "world": w, "value": v} for w, v in zip(range(1, 6), (12, 14, -1, 20, 15))]
    rows += [{"criterion": "6ep:G2d", "world": w, "value": 5.0 + w} for w in range(1, 6)]
    rows += [{"criterion": f"6ep:{fam}-{h}", "world": w, "value": 30.0 + 2 * w}
             for fam in ("E1a", "E1b") for h in ("lo", "sub", "con") for w in range(1, 6)]
    s = analysis.summarise(rows)
    assert s.loc["6ep:G2", "low"] > 0 and not analysis.gate_passed(s, "6ep:G2")   # mean high, world 3 short
    assert analysis.gate_failed(s, "6ep:E1a-sub") == "augmentation not learned: gate 6ep:G2"
    assert analysis.gate_failed(s, "6ep:E1b-sub") == ""
    table = "\n".join(analysis.claims_table(s))
    assert "| 6ep:E1a-lo |" in table and "**not tested (augmentation not learned: gate 6ep:G2)**" in table
    assert analysis.verdict(s.loc["6ep:E1b-lo"]) == "reproduced"
    assert set(analysis.FAMILIES["6ep:E1b"]) == {"6ep:E1b-lo", "6ep:E1b-sub", "6ep:E1b-con"}


def test_the_attempts_plot_is_drawn_from_per_world_rows_only_when_there_are_some(tmp_path):
    from experiments.real_effects.plot_e1 import plot_attempts

    rows = pd.DataFrame([{"criterion": f"6ep:E1a-{h}{s}", "world": w, "value": 10.0 * w}
                         for h in ("lo", "sub", "con") for s in ("", "-bal") for w in range(1, 6)])
    out = plot_attempts(rows, tmp_path / "e1.png")
    assert out == tmp_path / "e1.png" and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot_attempts(rows.assign(criterion="E2-333"), tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()
