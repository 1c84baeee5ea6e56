"""R5 of experiments/real_text/README.md, draws: R4a (D0 + W − the floor on the challenge mean of six sets) over
draws of D0, the floor's pool and W. Draw 1 is R4's scratch (real_text_r4, seeds 1-3), draw k > 1
real_text_r4_draw<k> (run_r4.sh DRAW=k); one value per draw, its training seeds averaged; over draws the mean,
its 95% t interval and the verdict by the project's rule (a costly claim: 3 draws give at most "low power").

    python -m experiments.real_text.analysis_draws [SCRATCH_BASE] [OUT_DIR]   # -> results_draws.md, .csv
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
from experiments.real_text.analysis_r1r4 import CHALLENGE, correctness, floor_contains_d0, paired_difference
from experiments.real_text.common import SEEDS
from experiments.summary_stats import t_interval, verdict


def draw_roots(base: Path) -> dict[int, Path]:
    """draw -> scratch folder, for the draws whose W exists."""
    roots = {1: base / "real_text_r4"}
    roots.update({int(p.name.removeprefix("real_text_r4_draw")): p for p in base.glob("real_text_r4_draw*")})
    return {k: roots[k] for k in sorted(roots) if (roots[k] / "wanli/review/reviewed.jsonl").is_file()}


def finished_seeds(root: Path) -> tuple[int, ...]:
    """Training seeds with both arms' metrics."""
    return tuple(s for s in SEEDS if all((root / arm / f"seed{s}" / "metrics.csv").is_file() for arm in ("floor", "plus")))


def one_draw(k: int, root: Path) -> dict | None:
    seeds = finished_seeds(root)
    if not seeds:
        return None
    a = [correctness(root / "plus", s, seeds) for s in CHALLENGE]
    b = [correctness(root / "floor", s, seeds) for s in CHALLENGE]
    d = paired_difference(a, b)
    n_w = sum(1 for x in (root / "wanli/review/reviewed.jsonl").read_text().splitlines() if x.strip())
    in_dist = paired_difference([correctness(root / "plus", "mnli_dev_test_part", seeds)],
                                [correctness(root / "floor", "mnli_dev_test_part", seeds)])
    return {"criterion": "R5-R4a", "draw": k, "value": 100 * d["estimate"], "seeds": len(seeds), "n_w": n_w,
            "in_distribution": 100 * in_dist["estimate"],
            "per_seed": " ".join(f"{100 * v:+.2f}" for v in d["seeds"]), "floor_check": floor_contains_d0(root, seeds)}


def main(base: Path, out: Path) -> None:
    rows = [r for k, root in draw_roots(base).items() if (r := one_draw(k, root))]
    draws = pd.DataFrame(rows, columns=["criterion", "draw", "value", "seeds", "n_w", "in_distribution", "per_seed", "floor_check"])
    e = t_interval(draws["value"].tolist())
    v = verdict("tested", e, costly=True)
    ind = t_interval(draws["in_distribution"].tolist())
    lines = ["# R5, draws: R4a over draws of D0, the floor's pool and W (analysis_draws.py)", "",
             "plus − floor on the challenge mean (six sets, points), training seeds averaged within a draw; over",
             "draws the mean and its 95% Student t interval (n − 1 df).", "",
             "| draw | |W| | training seeds | plus − floor, challenge mean | per seed | MNLI held-out (in distribution) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r.draw} | {r.n_w} | {r.seeds} | {r.value:+.2f} | {r.per_seed} | {r.in_distribution:+.2f} |"
              for r in draws.itertuples()]
    lines += ["", f"**R5-R4a**: {e.estimate:+.2f} [{e.low:+.2f}, {e.high:+.2f}] points over {e.n_worlds} draws -> **{v}**",
              f"(in distribution, reported: {ind.estimate:+.2f} [{ind.low:+.2f}, {ind.high:+.2f}])", "",
              *[f"- draw {r.draw}: {r.floor_check}" for r in draws.itertuples()], ""]
    (out / "results_draws.md").write_text("\n".join(lines))
    draws.drop(columns=["floor_check"]).to_csv(out / "results_draws.csv", index=False, float_format="%.5f")
    print("\n".join(lines))


if __name__ == "__main__":
    args = [Path(a) for a in sys.argv[1:]]
    main(args[0] if args else Path("/tmp/nliforge_exp"), args[1] if len(args) > 1 else HERE)
