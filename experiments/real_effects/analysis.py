"""experiments/real_effects analysis (criteria in README.md): per world one value per criterion, over worlds
the mean, its 95% t interval, the one-sided p and Holm's correction over each declared family
(nliforge.evaluation.worlds); -> results.csv (criterion, world, value: the per-world values summary.py reads)
and results.md (the tables, the levels per arm, E3's yields and samples, wall times).

    python -m experiments.real_effects.analysis <scratch folder> <output folder>
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

from nliforge.evaluation.worlds import holm, one_sided_p, t_interval

from experiments.real_effects import analysis_e2, analysis_e3  # E2's and E3's values
from experiments.real_effects.analysis_record import finished, level_table, merge, metrics, walls  # the record
from experiments.real_text.common import load_named

WORLDS = (1, 2, 3, 4, 5)
E4_ARMS = ("ambiguous", "random", "easy")
STRESS = ("stress_negation", "stress_word_overlap", "stress_length_mismatch")
CF = ("snli_cad_cf_premise_test", "snli_cad_cf_hypothesis_test")
FAMILIES = {"E4": ["E4a", "E4b"], "3ep:E4": ["3ep:E4a", "3ep:E4b"], **analysis_e2.FAMILIES,
            **analysis_e3.FAMILIES}
GATES = (*(f"3ep:G4-{a}" for a in E4_ARMS), *analysis_e2.GATES, *analysis_e3.GATES)
EVERY_WORLD = analysis_e3.EVERY_WORLD   # gates read per world (every world ≥ 0)
# a claim whose gates (every one: interval above 0, or every world ≥ 0 for EVERY_WORLD) must pass before it is
# read (README: G4, G2, G3); WHY: what a failed gate means, where it is not "an arm did not learn"
GATED = {"3ep:E4": [f"3ep:G4-{a}" for a in E4_ARMS], "E2-": list(analysis_e2.GATES),
         "E3a": list(analysis_e3.GATES)}
WHY = {g: "too few pairs" for g in analysis_e3.EVERY_WORLD}
DESCRIPTION = {
    "E4a": "ambiguous − random third, out-of-distribution mean of 6 sets (points)",
    "E4b": "ambiguous − easy third, out-of-distribution mean of 6 sets (points)",
    **{f"3ep:G4-{a}": f"gate: the {a} third's (3 epochs) MNLI test accuracy − its largest class (points)" for a in E4_ARMS},
    "3ep:E4a": "ambiguous − random third, 3 epochs, out-of-distribution mean of 6 sets (points)",
    "3ep:E4b": "ambiguous − easy third, 3 epochs, out-of-distribution mean of 6 sets (points)",
    **analysis_e2.DESCRIPTION,
    **analysis_e3.DESCRIPTION,
}


def e4_rows(scratch: Path, exp: str = "e4", prefix: str = "") -> tuple[list[dict], list[dict]]:
    """E4's per-world values; with exp="e4_3ep", prefix="3ep:" its second attempt (3 epochs), which adds gate G4
    per arm (README "E4 at 3 epochs": the arm's MNLI test accuracy − the share of that part's largest class)."""
    rows, levels = [], []
    for w, runs in finished(scratch, exp, E4_ARMS).items():
        sets = {"hans": f"exp_real_effects_w{w}_hans", "mnli_test": f"exp_real_effects_w{w}_mnli_test",
                **{s: f"exp_real_effects_w{w}_mnli_test_{s}" for s in STRESS}, **{c: c for c in CF}}
        largest = analysis_e2.largest_share([r.label for r in load_named(sets["mnli_test"])])
        lev = {}
        for a, r in runs.items():
            m = metrics(r)
            lv = {"world": w, "arm": a + ("_3ep" if prefix else ""), **{k: m[(v, "acc")] for k, v in sets.items()},
                  **{f"{c}:acc_cf": m.get((c, "acc_cf"), math.nan) for c in CF}}
            lv["ood_mean"] = sum(lv[k] for k in ("hans", *STRESS, *CF)) / 6
            lev[a] = lv
            levels.append(lv)
            if prefix:
                rows.append({"criterion": f"{prefix}G4-{a}", "world": w, "value": 100 * (lv["mnli_test"] - largest)})
        for crit, other in ((f"{prefix}E4a", "random"), (f"{prefix}E4b", "easy")):
            rows.append({"criterion": crit, "world": w, "value": 100 * (lev["ambiguous"]["ood_mean"] - lev[other]["ood_mean"])})
            for k in ("hans", "mnli_test", *STRESS, *CF):
                rows.append({"criterion": f"{crit}-{k}", "world": w, "value": 100 * (lev["ambiguous"][k] - lev[other][k])})
    return rows, levels


def summarise(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["criterion", "world", "value"])
    out = []
    for crit, g in df.groupby("criterion", sort=False):
        e = t_interval(g.sort_values("world")["value"].tolist())
        out.append({"criterion": crit, "n_worlds": e.n_worlds, "mean": e.estimate, "low": e.low, "high": e.high,
                    "p_one_sided": one_sided_p(e), "min": min(e.per_unit), "per_world": ", ".join(f"{v:+.1f}" for v in e.per_unit)})
    s = pd.DataFrame(out).set_index("criterion")
    s["holm_p"] = math.nan
    for members in FAMILIES.values():
        present = {c: s.loc[c, "p_one_sided"] for c in members if c in s.index and not math.isnan(s.loc[c, "p_one_sided"])}
        for c, p in holm(present).items():
            s.loc[c, "holm_p"] = p
    return s


def verdict(row) -> str:
    n = int(row.n_worlds)
    if n < 3:
        return f"not tested ({n} worlds)"
    if row.low > 0 and (math.isnan(row.holm_p) or row.holm_p < 0.05):
        return "reproduced" if n >= 5 else "reproduced, low power"
    if row.high < 0:
        return "contradicted" if n >= 5 else "contradicted, low power"
    return "not shown" + ("" if n >= 5 else f" ({n} worlds)")


def fmt(r) -> str:
    if math.isnan(r.low):
        return f"{r['mean']:+.1f}"
    return f"{r['mean']:+.1f} [{r.low:+.1f}, {r.high:+.1f}]"


def gate_passed(s: pd.DataFrame, g: str) -> bool:
    """A gate passes with its interval above 0, or for EVERY_WORLD gates with every world ≥ 0."""
    return g in s.index and (s.loc[g, "min"] >= 0 if g in EVERY_WORLD else s.loc[g, "low"] > 0)


def gate_failed(s: pd.DataFrame, crit: str) -> str:
    """Why `crit` is not read (one of its gates not passed: "too few pairs: gate G3-N", "an arm did not learn:
    gate G2"), else ''."""
    for prefix, gates in GATED.items():
        failed = [g for g in gates if not gate_passed(s, g)] if crit.startswith(prefix) else []
        if failed:
            if failed[0] in WHY:
                return f"{WHY[failed[0]]}: gate {failed[0]}"
            return "an arm did not learn: gate " + gates[0].split("-")[0].removeprefix("3ep:")
    return ""


def claims_table(s: pd.DataFrame) -> list[str]:
    md = ["| criterion | what | per world | mean [95% t] | n_worlds | one-sided p | Holm p | verdict |",
          "|---|---|---|---|---|---|---|---|"]
    for crit in s.index:
        r = s.loc[crit]
        tested = crit in DESCRIPTION
        what = DESCRIPTION.get(crit, "reported")
        hp = "" if math.isnan(r.holm_p) else f"{r.holm_p:.4f}"
        gate = ("gate not tested (one world)" if math.isnan(r.low) and crit not in EVERY_WORLD else
                "gate passed" if gate_passed(s, crit) else "gate NOT passed")
        v = gate if crit in GATES else verdict(r) if tested else "reported"
        stopped_by = gate_failed(s, crit) if tested and crit not in GATES else ""
        if stopped_by:
            v = f"not tested ({stopped_by})"
        md.append(f"| {crit} | {what} | {r.per_world} | {fmt(r)} | {int(r.n_worlds)} | {r.p_one_sided:.4f} | {hp} | "
                  f"{'**' + v + '**' if tested else v} |")
    return md


def main(scratch: Path, out: Path) -> None:
    (r4, l4), (r5, l5) = e4_rows(scratch), e4_rows(scratch, "e4_3ep", "3ep:")
    new, l4 = r4 + r5, l4 + l5
    labels = [r.label for r in load_named("snli_cad_original_test")]
    r6, l6 = analysis_e2.e2_rows(scratch, labels, WORLDS)
    r7, l7, y7 = analysis_e3.e3_rows(scratch, labels, WORLDS)
    rows, n_kept = merge(new + r6 + r7, out / "results.csv", ["criterion", "world"])
    rows.round(6).to_csv(out / "results.csv", index=False)
    s = summarise(rows.to_dict("records"))
    md = ["# experiments/real_effects: results (analysis.py)", "",
          "Per world one training seed; over worlds the mean, [95% t interval, n − 1 df], the one-sided p (stated "
          "direction: > 0) and Holm's p over the declared family (E4, 3ep:E4, E2, E3a). Points. "
          f"Rows: {len(rows) - n_kept} computed from the run folders of this analysis, {n_kept} kept from the "
          "committed results.csv (runs of an earlier machine; analysis_record.py).", ""]
    md += claims_table(s)
    levels = {}
    for name, new_lv in (("e4", l4), ("e2", l6), ("e3", l7)):
        levels[name] = merge(new_lv, out / f"results_{name}_levels.csv", ["world", "arm"])[0]
        if len(levels[name]):
            levels[name].round(4).to_csv(out / f"results_{name}_levels.csv", index=False)
    if len(levels["e4"]):
        cols = ["ood_mean", "hans", "mnli_test", *STRESS, *CF, *(f"{c}:acc_cf" for c in CF)]
        md += level_table("E4", levels["e4"], cols, levels["e4"].arm.unique())
    if len(levels["e2"]):
        md += level_table("E2", levels["e2"], analysis_e2.LEVEL_COLUMNS, analysis_e2.ARMS)
    yields = merge(y7, out / "results_e3_yields.csv", ["world"])[0]
    if len(yields):
        yields.to_csv(out / "results_e3_yields.csv", index=False)
    md += analysis_e3.sections(scratch, out, rows[rows.criterion.str.startswith("E3")], levels["e3"], yields)
    wt = merge(walls(scratch), out / "results_walls.csv", ["run"])[0].sort_values("run")
    wt.to_csv(out / "results_walls.csv", index=False)
    md += ["", "## Wall times (s, one thread)", "", "| run | wall s | ended (UTC) |", "|---|---|---|"]
    md += [f"| {r.run} | {r.wall_s} | {r.end} |" for r in wt.itertuples()]
    (out / "results.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
