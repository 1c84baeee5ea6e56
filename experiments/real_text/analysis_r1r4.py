"""R1 and R4 of experiments/real_text/README.md, from the runs' per-example predictions: accuracy per arm and
eval set, paired differences between arms with a bootstrap over test pairs, the verdicts by the committed
rules, the generation runs' yield per stage and 20 seeded samples of what they made.

    python -m experiments.real_text.analysis_r1r4 [R1 scratch] [R4 scratch]   # -> results_r1r4.md, .csv
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
from experiments.real_text.common import N_BOOT, SEEDS, interval

REVISED = ("snli_cad_revised_premise_test", "snli_cad_revised_hypothesis_test")
R1_SETS = ("snli_cad_original_test", *REVISED, "mnli_dev_test_part")
CHALLENGE = ("mnli_dev_test_part_stress_word_overlap", "mnli_dev_test_part_stress_negation",
             "mnli_dev_test_part_stress_length_mismatch", "snli_cad_original_test", *REVISED)
R4_SETS = ("mnli_dev_test_part", *CHALLENGE)


def correctness(arm_dir: Path, eval_set: str, seeds: tuple[int, ...] = SEEDS) -> np.ndarray:
    """0/1 correctness, shape (seeds, pairs), from each seed's predictions/<set>.csv (same pairs, same order)."""
    rows, uids = [], None
    for s in seeds:
        df = pd.read_csv(arm_dir / f"seed{s}" / "predictions" / f"{eval_set}.csv", keep_default_na=False)
        if uids is not None and list(df["uid"]) != uids:
            raise SystemExit(f"{arm_dir}/seed{s}: the pairs of {eval_set} differ from seed {SEEDS[0]}'s")
        uids = list(df["uid"])
        rows.append((df["pred"] == df["gold"]).to_numpy(float))
    return np.stack(rows)


def paired_difference(a: list[np.ndarray], b: list[np.ndarray], seed: int = 0) -> dict:
    """A − B over one or more eval sets (each (seeds, pairs), A and B on the same pairs): the unweighted mean
    over sets of the mean over pairs of the seed-averaged correctness difference; the 95% interval of a
    bootstrap that resamples pairs within each set (N_BOOT); each seed's own difference (seed s against s)."""
    rng = np.random.default_rng(seed)
    per_pair = [x.mean(0) - y.mean(0) for x, y in zip(a, b)]
    boots = np.mean([d[rng.integers(0, len(d), size=(N_BOOT, len(d)))].mean(1) for d in per_pair], axis=0)
    lo, hi = interval(boots)
    seeds = [float(np.mean([x[i].mean() - y[i].mean() for x, y in zip(a, b)])) for i in range(len(a[0]))]
    return {"estimate": float(np.mean([d.mean() for d in per_pair])), "low": lo, "high": hi, "seeds": seeds}


def verdict(d: dict) -> str:
    """The committed rule: interval above 0 and every seed's difference positive -> reproduced; interval below
    0 -> contradicted; else not shown (an interval above 0 with a seed at or below 0 says which)."""
    if d["low"] > 0 and all(s > 0 for s in d["seeds"]):
        return "reproduced"
    if d["high"] < 0:
        return "contradicted"
    if d["low"] > 0:
        return "not shown (interval above 0, not every seed)"
    return "not shown"


def accuracy_table(root: Path, arms: list[str], sets: tuple[str, ...]) -> list[str]:
    head = "| arm | " + " | ".join(sets) + " |"
    lines = [head, "|" + "---|" * (len(sets) + 1)]
    for arm in arms:
        cells = []
        for name in sets:
            c = correctness(root / arm, name)
            cells.append(f"{100 * c.mean():.1f} ({', '.join(f'{100 * x:.1f}' for x in c.mean(1))})")
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    return lines


def fmt(d: dict) -> str:
    seeds = ", ".join(f"{100 * s:+.1f}" for s in d["seeds"])
    return f"{100 * d['estimate']:+.1f} [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}] (seeds {seeds})"


def stage_table(run: Path) -> list[str]:
    manifest = json.loads((run / "manifest.json").read_text())
    lines = ["| stage | in | out | drops |", "|---|---|---|---|"]
    for name in manifest["stage_order"]:
        st = manifest["stages"][name]
        drops = ", ".join(f"{k} {v}" for k, v in sorted(st.get("drops", {}).items(), key=lambda kv: -kv[1])) or "-"
        lines.append(f"| {name} | {st['count_in']} | {st['count_out']} | {drops} |")
    return lines


def samples(path: Path, k: int = 20, seed: int = 0) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return random.Random(seed).sample(rows, min(k, len(rows)))


def comparisons(root: Path, pairs: list[tuple[str, str, str, tuple[str, ...], str]], out_rows: list) -> list[str]:
    """Rows `criterion | A − B | on | result | verdict` for (criterion, A, B, sets, label); criterion '' = reported."""
    lines = ["| criterion | comparison | on | A − B, points [95% CI] | verdict |", "|---|---|---|---|---|"]
    for crit, a, b, sets, label in pairs:
        d = paired_difference([correctness(root / a, s) for s in sets], [correctness(root / b, s) for s in sets])
        v = verdict(d) if crit else "reported"
        lines.append(f"| {crit or '-'} | {a} − {b} | {label} | {fmt(d)} | {v} |")
        out_rows.append({"experiment": root.name, "criterion": crit, "comparison": f"{a} - {b}", "on": label,
                         "estimate": d["estimate"], "low": d["low"], "high": d["high"],
                         **{f"seed{s}": x for s, x in zip(SEEDS, d["seeds"])}, "verdict": v})
    return lines


def r1(root: Path, out_rows: list) -> list[str]:
    n = sum(1 for line in (root / "disco/augment/counterfactuals.jsonl").read_text().splitlines() if line.strip())
    lines = ["## R1: counterfactual augmentation (SNLI, Kaushik et al. 2020)", "",
             f"N = |D^c| = {n} counterfactuals kept by the DISCO run; every augmented arm adds N pairs to the 1,666 originals.",
             "", "Accuracy, % (mean over seeds 1-3; per seed in brackets):", "",
             *accuracy_table(root, ["orig", "human", "disco", "mnli"], R1_SETS), ""]
    r1b = "R1b" if n >= 100 else ""
    pairs = [("R1a", "human", "mnli", REVISED, "revised (1,600)"), (r1b, "disco", "mnli", REVISED, "revised (1,600)"),
             ("", "human", "disco", REVISED, "revised (1,600)")]
    pairs += [("", arm, "orig", REVISED, "revised (1,600)") for arm in ("human", "disco", "mnli")]
    pairs += [("", a, b, (s,), s) for s in ("snli_cad_original_test", "mnli_dev_test_part")
              for a, b in (("human", "mnli"), ("disco", "mnli"))]
    lines += comparisons(root, pairs, out_rows)
    if not r1b:
        lines += ["", f"R1b: **untested (N = {n})**, below the committed 100."]
    lines += ["", "DISCO run, yield per stage:", "", *stage_table(root / "disco"), "",
              "20 counterfactuals (seeded sample of D^c: the new premise, the hypothesis, the target label):", ""]
    lines += [f"- [{r['label']}] {r['premise']!r} / {r['hypothesis']!r}" for r in samples(root / "disco/augment/counterfactuals.jsonl")]
    return lines


def floor_contains_d0(root: Path, seeds: tuple[int, ...] = SEEDS) -> str:
    d0 = {json.loads(x)["uid"] for x in (root / "sets/r4_d0.jsonl").read_text().splitlines() if x.strip()}
    for s in seeds:
        floor = {json.loads(x)["uid"] for x in (root / f"floor/seed{s}/train_set.jsonl").read_text().splitlines() if x.strip()}
        if not d0 <= floor:
            raise SystemExit(f"R4: the floor of seed {s} lacks {len(d0 - floor)} D0 pairs: the arms are not built on one D0")
    return f"every one of the {len(d0)} D0 uids is in each seed's floor training set (checked)"


def r4(root: Path, out_rows: list) -> list[str]:
    w = [json.loads(x) for x in (root / "wanli/review/reviewed.jsonl").read_text().splitlines() if x.strip()]
    lines = ["## R4: WANLI on real MNLI text", "", f"N = |W| = {len(w)} pairs; {floor_contains_d0(root)}.", "",
             "Accuracy, % (mean over seeds 1-3; per seed in brackets):", "",
             *accuracy_table(root, ["floor", "plus"], R4_SETS), ""]
    pairs = [("R4a", "plus", "floor", CHALLENGE, "challenge mean (6 sets)"),
             ("", "plus", "floor", ("mnli_dev_test_part",), "mnli_dev_test_part")]
    pairs += [("", "plus", "floor", (s,), s) for s in CHALLENGE]
    lines += comparisons(root, pairs, out_rows)
    shares = pd.crosstab(pd.Series([r["meta"].get("intended_label") for r in w], name="intended"),
                         pd.Series([r["label"] for r in w], name="reviewer's label"))
    lines += ["", "WANLI run, yield per stage:", "", *stage_table(root / "wanli"), "",
              "Label shares of W: intended by the prompt (rows) against the reviewer's label (columns):", "",
              "```", shares.to_string(), "```", "", "20 pairs of W (seeded; [reviewer's label / intended]):", ""]
    lines += [f"- [{r['label']} / {r['meta'].get('intended_label')}] {r['premise']!r} / {r['hypothesis']!r}"
              for r in samples(root / "wanli/review/reviewed.jsonl")]
    return lines


def main(r1_root: Path, r4_root: Path, out: Path = HERE) -> None:
    rows: list[dict] = []
    lines = ["# R1 and R4 results (written by analysis_r1r4.py)", ""]
    for run, root in ((r1, r1_root), (r4, r4_root)):
        if root.is_dir():
            lines += run(root, rows) + [""]
        else:
            lines += [f"({root} not found: not analysed)", ""]
    (out / "results_r1r4.md").write_text("\n".join(lines))
    pd.DataFrame(rows).to_csv(out / "results_r1r4.csv", index=False, float_format="%.5f")
    print(f"wrote {out / 'results_r1r4.md'} and results_r1r4.csv ({len(rows)} comparisons)")


if __name__ == "__main__":
    base = Path("/tmp/nliforge_exp")
    args = [Path(a) for a in sys.argv[1:]]
    main(args[0] if args else base / "real_text_r1", args[1] if len(args) > 1 else base / "real_text_r4")
