"""experiments/summary.py: the verdict rule on hand-made inputs, the t interval over worlds against values
computed by hand, the readers on hand-made files, and summary.csv and the README's summary table equal to
what the committed results files give (so the three can never drift apart). Offline, ~2 s."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from experiments import summary
from experiments.summary_claims import CLAIMS
from experiments.summary_real import R1R4, RealWorlds, wilson
from experiments.summary_sources import Paired, SeedColumn, UnitRow
from experiments.summary_stats import Estimate, t_interval, verdict
from nliforge.errors import NLIDataError

EXP = Path(__file__).resolve().parents[2] / "experiments"


def test_t_interval_over_worlds_by_hand():
    # per-world 1.0 and 5.0: mean 3.0, sd 2.828, t_{0.975,1} = 12.706 -> half-width 12.706 * 2.828 / 1.414 = 25.41
    e = t_interval([1.0, 5.0])
    assert (e.estimate, e.n_worlds) == (3.0, 2)
    assert e.low == pytest.approx(-22.41, abs=0.01) and e.high == pytest.approx(28.41, abs=0.01)
    # 1..5: sd 1.581, se 0.7071, t_{0.975,4} = 2.776 -> half-width 1.963
    e = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (e.low, e.high) == (pytest.approx(1.037, abs=1e-3), pytest.approx(4.963, abs=1e-3))
    one = t_interval([2.0])
    assert one.n_worlds == 1 and one.estimate == 2.0 and not one.has_interval


def world(low: float, high: float, n: int) -> Estimate:
    return Estimate((low + high) / 2, low, high, n)


@pytest.mark.parametrize("e, kw, expected", [
    (world(0.5, 2.0, 5), {}, "reproduced"),
    (world(0.5, 2.0, 2), {}, "not shown (n_worlds = 2 < 5)"),
    (world(0.5, 2.0, 3), {}, "not shown (n_worlds = 3 < 5)"),
    (world(0.5, 2.0, 3), {"costly": True}, "reproduced, low power (n_worlds = 3 < 5)"),
    (world(0.5, 2.0, 2), {"costly": True}, "not shown (n_worlds = 2 < 5)"),
    (world(-1.0, 2.0, 5), {}, "not shown (interval includes 0)"),
    (world(-1.0, 2.0, 2), {}, "not shown (n_worlds = 2 < 5; interval includes 0)"),
    (world(-3.0, -1.0, 2), {}, "not shown (n_worlds = 2 < 5; interval on the wrong side)"),
    (world(-3.0, -1.0, 5), {}, "contradicted"),
    (world(-3.0, -1.0, 3), {"costly": True}, "contradicted, low power (n_worlds = 3 < 5)"),
    (world(-3.0, -1.0, 5), {"direction": -1}, "reproduced"),
    (world(0.5, 2.0, 5), {"direction": -1}, "contradicted"),
    (world(13.3, 14.6, 2), {"direction": -1, "reference": 4.79},
     "not shown (n_worlds = 2 < 5; interval on the wrong side)"),
    (world(13.3, 14.6, 5), {"direction": -1, "reference": 4.79}, "contradicted"),
    (world(3.0, 4.5, 5), {"direction": -1, "reference": 4.79}, "reproduced"),
    (world(3.0, 5.5, 5), {"direction": -1, "reference": 4.79}, "not shown (interval includes 4.79)"),
    (Estimate(0.6, n_worlds=1), {}, "not shown (n_worlds = 1 < 5; no interval)"),
    (Estimate(math.nan, n_worlds=1), {}, "not shown (no estimate)"),
])
def test_world_verdict_rule(e, kw, expected):
    assert verdict("tested", e, **kw) == expected


def test_other_kinds_and_real_text_rule():
    assert verdict("descriptive", world(0.5, 2.0, 5)) == "descriptive"
    assert verdict("not run", None) == "not run"
    cal = Estimate(66.8, 61.2, 72.5, 2, (66.4, 67.3))
    assert verdict("calibration", cal, reference=67, tolerance=2) == "calibrated"
    assert verdict("calibration", Estimate(68, 0, 99, 2, (66.4, 69.5)), reference=67, tolerance=2) == "not calibrated"
    # no worlds (NLI-Set's prompts): the interval and every unit's estimate on the stated side
    assert verdict("tested", Estimate(1.0, 0.2, 2.0, None, (0.8, 1.0, 1.2))) == "reproduced"
    assert verdict("tested", Estimate(1.0, 0.2, 2.0, None, (0.8, -0.1, 1.2))).startswith("not shown")
    assert verdict("tested", Estimate(-1.8, -4.6, 1.1, None, (-3, -1, -1)), direction=-1) == \
        "not shown (interval includes 0)"
    assert verdict("tested", Estimate(50.0, 48.6, 53.4, None, (50.5, 51.5, 51.5), reference=35.1)) == "reproduced"
    assert verdict("tested", Estimate(30.0, 28.0, 33.0, None, (30, 29, 31), reference=35.1)) == "contradicted"
    # a z against its Bonferroni bound: no interval, read against the bound
    assert verdict("tested", Estimate(14.1, reference=4.63)) == "reproduced"
    assert verdict("tested", Estimate(3.0, reference=4.63)) == "contradicted"
    # real text's first attempts: one sample of the data, one world, whatever the interval over examples says
    assert verdict("tested", Estimate(1.0, 0.2, 2.0, 1, (0.8, 1.0, 1.2))) == "not shown (n_worlds = 1 < 5)"
    assert verdict("tested", Estimate(14.1, n_worlds=1, reference=4.63)) == "not shown (n_worlds = 1 < 5; no interval)"


def test_a_family_needs_its_holm_adjusted_p(tmp_path):
    """Two claims of one family, five worlds each, both intervals above 0. By hand: a = [1, 2, 3, 4, 5]:
    mean 3, se 0.7071, t = 4.243 on 4 df -> one-sided p = 0.00662; b = [0.5, 1, 1.5, 2, 9.5]: mean 2.9,
    sd 3.747, se 1.676, t = 1.730 -> p = 0.0793. Holm: a 2 x 0.00662 = 0.0132, b max(0.0132, 0.0793) = 0.0793.
    b's own interval includes 0, so an Estimate with b's worlds and an interval above 0 stands in for the
    case the rule is for: an interval above 0 with a Holm-adjusted p >= 0.05 gives `not shown`."""
    from experiments.summary_claims import Claim
    from experiments.summary_stats import one_sided_p

    a = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    b = t_interval([0.5, 1.0, 1.5, 2.0, 9.5])
    assert one_sided_p(a) == pytest.approx(0.00662, abs=1e-4)
    assert one_sided_p(b) == pytest.approx(0.0793, abs=1e-3)
    assert one_sided_p(a, direction=-1) == pytest.approx(1 - 0.00662, abs=1e-4)
    claims = [Claim("a − x", "p", "n", None, family="M"), Claim("b − x", "p", "n", None, family="M"),
              Claim("c − x", "p", "n", None)]
    adjusted = summary.family_holm_p(claims, [a, b, a])
    assert adjusted == {0: pytest.approx(0.01324, abs=1e-4), 1: pytest.approx(0.0793, abs=1e-3)}
    assert verdict("tested", a, holm_p=adjusted[0]) == "reproduced"
    right_but_not_holm = Estimate(2.9, 0.1, 5.7, 5, b.per_unit)
    assert verdict("tested", right_but_not_holm, holm_p=adjusted[1]).startswith("not shown (Holm-adjusted p = 0.079")
    assert verdict("tested", right_but_not_holm) == "reproduced"   # outside a family: the interval alone


def test_wilson_by_hand():
    # 0 of 4: centre = (z²/2) / (n + z²) = 1.9208 / 7.8415 = 0.245, half-width the same -> [0, 0.490]
    assert wilson(0, 4) == (0.0, pytest.approx(0.490, abs=1e-3))


def test_paired_reader_by_hand(tmp_path):
    rows = [("A", 0, 1, 0.50), ("A", 0, 2, 0.52), ("F", 0, 1, 0.48), ("F", 0, 2, 0.50),
            ("A", 1, 1, 0.60), ("A", 1, 2, 0.62), ("F", 1, 1, 0.54), ("F", 1, 2, 0.56)]
    frame = pd.DataFrame(rows, columns=["row", "world_seed", "seed", "value"]).assign(eval_set="challenge mean")
    frame.to_csv(tmp_path / "t.csv", index=False)
    e = Paired(("t.csv",), "A", "F").read(tmp_path)      # per world +2.0 and +6.0 points
    assert e.per_unit == (pytest.approx(2.0), pytest.approx(6.0)) and e.n_worlds == 2
    assert e.estimate == pytest.approx(4.0) and e.low == pytest.approx(4.0 - 25.41, abs=0.01)
    with pytest.raises(NLIDataError, match="t.csv.*'A'.*'missing'"):
        Paired(("t.csv",), "A", "missing").read(tmp_path)


def test_unit_row_reader_by_hand(tmp_path):
    rows = [("g", 0, 0, "corrected", 0.50), ("g", 1, 0, "corrected", 0.70), ("g", 0, 0, "raw", 0.1),
            ("h", 0, 0, "corrected", 0.9)]
    pd.DataFrame(rows, columns=["row", "world_seed", "seed", "eval_set", "value"]).to_csv(tmp_path / "u.csv", index=False)
    e = UnitRow(("u.csv",), "g", "corrected").read(tmp_path)   # per world 50 and 70 points: 60 [-67.06, 187.06]
    assert e.per_unit == (pytest.approx(50.0), pytest.approx(70.0)) and e.estimate == pytest.approx(60.0)
    assert e.low == pytest.approx(60.0 - 127.06, abs=0.01)
    with pytest.raises(NLIDataError, match="u.csv: no row 'g' on 'other'"):
        UnitRow(("u.csv",), "g", "other").read(tmp_path)


def test_r1r4_reader(tmp_path):
    (tmp_path / "real_text").mkdir()
    (tmp_path / "real_text/results_r1r4.csv").write_text(
        "experiment,criterion,comparison,on,estimate,low,high,seed1,seed2,seed3,verdict\n"
        "real_text_r1,R1a,human - mnli,revised (1600),0.031,0.012,0.050,0.02,0.03,0.04,reproduced\n"
        "real_text_r1,,human - disco,revised (1600),0.010,-0.010,0.030,0.0,0.01,0.02,reported\n")
    e = R1R4("R1a").read(tmp_path)
    assert (e.estimate, e.low, e.high, e.n_worlds) == (pytest.approx(3.1), pytest.approx(1.2), pytest.approx(5.0), 1)
    assert verdict("tested", e) == "not shown (n_worlds = 1 < 5)"


def test_real_worlds_reader_by_hand(tmp_path):
    """Five parts 0.30, 0.35, 0.40, 0.32, 0.38: mean 0.35, sd sqrt(0.0068 / 4) = 0.04123, se 0.01844,
    t_{0.975,4} = 2.7764 -> half-width 0.05120: [0.2988, 0.4012]."""
    (tmp_path / "real_text").mkdir()
    rows = "".join(f"R5-R3a,{k},{v},2 seeds\n" for k, v in enumerate((0.30, 0.35, 0.40, 0.32, 0.38), start=1))
    (tmp_path / "real_text/results_parts.csv").write_text("criterion,part,value,note\n" + rows + "R5-R2a,1,9.0,\n")
    e = RealWorlds("R5-R3a").read(tmp_path)
    assert (e.n_worlds, e.estimate) == (5, pytest.approx(0.35))
    assert (e.low, e.high) == (pytest.approx(0.2988, abs=1e-4), pytest.approx(0.4012, abs=1e-4))
    assert verdict("tested", e) == "reproduced"
    assert RealWorlds("R5-R2a").read(tmp_path).n_worlds == 1
    (tmp_path / "real_text/results_parts.csv").write_text("criterion,part,value\nR5-R3a,1,0.3\nR5-R3a,1,0.4\n")
    with pytest.raises(NLIDataError, match="results_parts.csv: R5-R3a: a part appears twice"):
        RealWorlds("R5-R3a").read(tmp_path)


def test_committed_summary_csv_and_readme_table_are_what_the_files_give():
    text = summary.csv_text(summary.claim_rows(CLAIMS) + summary.study_rows())   # each family's Holm, as summary.py
    assert text == summary.CSV.read_text(), "run python -m experiments.summary"
    block = summary.render(summary.read_rows(summary.CSV.read_text()))
    assert block == summary.readme_block(summary.README.read_text()), "run python -m experiments.summary"


def test_committed_rows_keep_the_rules():
    rows = summary.read_rows(summary.CSV.read_text())
    assert list(rows[0]) == summary.COLUMNS and len(rows) == len(CLAIMS) + len(summary.study_rows())
    for r in rows:
        if r["verdict"].startswith("reproduced"):   # a reproduced claim always has worlds, and enough of them
            n = int(r["n_worlds"])
            assert n >= 5 or (n >= 3 and "low power" in r["verdict"]), r["claim"]
    # the world as the unit: WANLI with SmolLM2 at the paper's ratio is +1.0 and +5.0 in its two worlds
    ratio = next(c for c in CLAIMS if "paper's W-to-D0 ratio" in c.claim)
    e = ratio.source.read(EXP)
    assert e.per_unit == (pytest.approx(1.0, abs=0.01), pytest.approx(5.02, abs=0.01))
    assert e.low < -20 and e.high > 25
    # WANLI Table 3's MNLI + WANLI vs MNLI numbers, never WANLI alone (+4 / +11 / +9)
    wanli = [r for r in rows if r["paper"].startswith("WANLI") and "Table 3" in r["paper"]]
    assert wanli and all("+3.3 Diag." in r["paper_number"] and "+11" not in r["paper_number"] for r in wanli)


def test_real_text_first_attempts_are_one_world_and_r5_repeats_them():
    """The folder's own criteria (example unit, real_text/README.md) said reproduced for R2a-c and R3a-b; the
    summary reads those attempts as one world, and R5 gives each claim again over parts (5) or draws (3)."""
    committed = pd.read_csv(EXP / "real_text/results.csv")
    committed = committed[committed["quantity"] == "verdict"]
    for criterion in ("R3a", "R3b", "R2a", "R2b", "R2c"):
        assert committed.loc[committed["criterion"] == criterion, "note"].iloc[0].startswith("reproduced")
    rows = {c.claim: summary.claim_row(c) for c in CLAIMS if c.file.startswith("real_text/")}
    first = [r for r in rows.values() if r["file"] in ("real_text/results.csv", "real_text/results_r1r4.csv")]
    assert len(first) == 11 and all(r["n_worlds"] == "1" for r in first)
    assert all(r["verdict"].startswith(("not shown (n_worlds = 1 < 5", "descriptive")) for r in first)
    r5 = {re.search(r"\((R5-R\d[a-z])", claim).group(1): r for claim, r in rows.items() if "(R5-" in claim}
    assert set(r5) == {"R5-R3a", "R5-R3b", "R5-R2a", "R5-R2b", "R5-R2c", "R5-R4a"}
    assert all(r["n_worlds"] == ("3" if k == "R5-R4a" else "5") for k, r in r5.items())


def test_direction_only_rule_by_hand():
    """Five worlds 0.30, 0.35, 0.40, 0.32, 0.38 give 0.35 [0.2988, 0.4012] (test_real_worlds_reader_by_hand):
    above 0, so reproduced; a paper's r of 0.527 lies above the whole interval, so the direction holds and the
    size does not: `direction only`. A paper value inside the interval (0.38) leaves it reproduced; below the
    reference side (direction -1, an interval [3.0, 4.5] under a bound 4.79, paper 2.0 below it) likewise."""
    e = t_interval([0.30, 0.35, 0.40, 0.32, 0.38])
    assert (e.low, e.high) == (pytest.approx(0.2988, abs=1e-4), pytest.approx(0.4012, abs=1e-4))
    assert verdict("tested", e) == "reproduced"
    assert verdict("tested", e, paper_value=0.527) == "direction only (the paper's 0.527 lies above the interval)"
    assert verdict("tested", e, paper_value=0.38) == "reproduced"
    assert verdict("tested", world(0.5, 2.0, 3), costly=True, paper_value=5.0) == \
        "direction only, low power (n_worlds = 3 < 5)"
    assert verdict("tested", world(3.0, 4.5, 5), direction=-1, reference=4.79, paper_value=2.0) == \
        "direction only (the paper's 2 lies below the interval)"
    assert verdict("tested", world(-1.0, 2.0, 5), paper_value=5.0) == "not shown (interval includes 0)"


def test_provenance_rule():
    """Per source by rule: a fresh-draw file's floor comparisons are stale first attempts, its comparisons with
    D0 `vs_d0`; a D0-containing floor is current; a row whose files are a proper subset of another row's is
    superseded; a file no rule names stops the summary."""
    from experiments.summary_claims import Claim
    from experiments.summary_provenance import provenance
    from experiments.summary_real import RealWorlds as RW

    comb = Claim("a − floor", "p", "n", Paired(("combined/results.csv",), "a", "floor: biased, size D0 + N"))
    assert provenance(comb) == "fresh_draw_floor; stale: first attempt"
    vs_d0 = Claim("a − D0", "p", "n", Paired(("combined/results.csv",), "a", "D0 = D^b"))
    assert provenance(vs_d0) == "vs_d0; stale: first attempt"
    disco = Claim("a − floor", "p", "n", Paired(("disco_table3/results.csv",), "a", "floor: biased, size D0 + N"))
    assert provenance(disco) == "fresh_draw_floor; superseded: first attempt"   # re-run in five_worlds/
    five = Claim("a − floor", "p", "n", Paired(("disco_table3/five_worlds/results.csv",), "a", "floor: D0 + N biased"))
    assert provenance(five) == "d0_floor; current"
    zf = Claim("a − floor", "p", "n", Paired(("zfilter_training/results_seq_z.csv",), "a", "floor: M biased"))
    assert provenance(zf) == "fresh_draw_floor; superseded: first attempt"   # re-run in five_worlds/
    zf5 = Claim("a − floor", "p", "n", Paired(("zfilter_training/five_worlds/results_seq_z.csv",), "a", "floor: M biased, from D0"))
    assert provenance(zf5) == "d0_floor; current"
    new = Claim("a − floor", "p", "n", Paired(("wanli_generated/results_labeller.csv",), "3_full", "2_floor"))
    assert provenance(new) == "d0_floor; current"
    assert provenance(Claim("r4", "p", "n", RW("R5-R4a", ("real_text/results_draws.csv",), "draw"))) == "d0_floor; current"
    assert provenance(Claim("r3", "p", "n", RW("R5-R3a"))) == "no_floor; current"
    first = Claim("r", "p", "n", SeedColumn(("max_variability/results.csv",), "pearson_r"))
    assert provenance(first) == "no_floor; current"
    assert provenance(first, [("max_variability/results.csv", "max_variability/world1/results.csv")]) == \
        "no_floor; superseded: first attempt"
    with pytest.raises(NLIDataError, match="elsewhere/x.csv: no provenance rule"):
        provenance(Claim("x", "p", "n", Paired(("elsewhere/x.csv",), "a", "b")))


def test_committed_provenance_paper_numbers_and_top_readme():
    """summary.csv's provenance: the tables run before the D0-containing floors are stale on every row; finding
    3's paper numbers are the seed's tables (Z-Aug Tables 2-4 and 12); Eq. 1's r is `direction only`; the
    top-level README's experiments table is what summary.csv gives."""
    from experiments.summary_provenance import DESIGNS, STATUSES

    rows = summary.read_rows(summary.CSV.read_text())
    for r in rows:
        design, status = r["provenance"].split("; ")
        assert design in DESIGNS and status in STATUSES, r["claim"]
        if r["file"].startswith(("combined/", "real_lm/", "wanli_generated/results.csv")):
            assert status == "stale: first attempt", r["claim"]
        # re-run with five worlds on floors that hold D0: the first attempts superseded, the re-runs current
        if r["file"] == "disco_table3/results.csv" or r["file"].startswith("zfilter_training/results"):
            assert status == "superseded: first attempt", r["claim"]
        if r["file"].startswith(("disco_table3/five_worlds/", "zfilter_training/five_worlds/")):
            assert status == "current", r["claim"]
    by_claim = {r["claim"]: r for r in rows}
    poe = by_claim["PoE with a frozen hypothesis-only expert helps: PoE − D0, challenge mean (Z3; points)"]
    assert all(x in poe["paper_number"] for x in ("80.34 → 82.92", "76.39 → 78.37", "54.36 → 63.40"))
    best = by_claim["PoE helps most on the best debiased set: PoE on Seq-Z − Seq-Z, challenge mean (Z3; points)"]
    assert all(x in best["paper_number"] for x in ("82.82 → 84.48", "78.95 → 80.49", "62.57 → 68.75"))
    for z5 in (r for r in rows if "(Z5)" in r["claim"]):   # the first attempt and the five-world re-run
        assert "422.1 / 436.1 / 433.9" in z5["paper_number"] and "17.5 / 15.3 / 17.0" in z5["paper_number"]
    assert sum(r["file"].startswith("zfilter_training/five_worlds/") for r in rows) == 16
    eq1 = by_claim["Estimated max variability (Eq. 1) tracks true variability: Pearson r"]
    assert eq1["verdict"].startswith("direction only") and eq1["provenance"] == "no_floor; current"
    top = summary.top_table(rows)
    assert top == summary.readme_block(summary.TOP_README.read_text(), summary.TOP_START, summary.TOP_END)
    assert "**stale: first attempt**" in top


def test_a_studys_claims_become_summary_rows_as_its_verdict_wrote_them(tmp_path):
    """summary.csv takes a study's claims from its attempts' claims.csv: numbers and verdict word as written
    (the package's rule), an earlier attempt marked superseded, attempts in order."""
    from experiments.summary import study_rows

    header = "attempt,status,claim,family,contrast,metric,side,n_worlds,estimate,low,high,verdict,paper,paper_number\n"
    for n, status, est, word in ((1, "superseded by attempt 2", "1.5000", "not shown (n_worlds = 4 < 5)"),
                                 (2, "current", "6.0000", "reproduced")):
        folder = tmp_path / "toy" / f"attempt-{n}"
        folder.mkdir(parents=True)
        (folder / "claims.csv").write_text(header + f"{n},{status},c1,F,b - a,test/acc,greater,5,{est},2.1,9.9,"
                                           f"{word},Someone 2020,3.0\n")
    rows = study_rows(tmp_path)
    assert [r["provenance"] for r in rows] == ["study; superseded: later attempt", "study; current"]
    assert rows[1]["claim"] == "toy, attempt 2: b − a, test/acc (c1; points)"
    assert (rows[1]["estimate"], rows[1]["low"], rows[1]["verdict"]) == ("6.0000", "2.1", "reproduced")
    assert rows[0]["file"] == "toy/attempt-1/claims.csv"


def test_e1_rows_come_only_from_the_hans_augmentation_study():
    """E1 (HANS augmentation) is the study experiments/hans_augmentation: every summary row of it is that study's
    (one per claim of each judged attempt, 6 claims each), none is a hand-written claim of real_effects, and no
    E1 fit gate (3ep:G2, 6ep:G2) is a row. real_effects keeps E4 (3 rows: the first attempt, not run; 3ep:E4a
    and 3ep:E4b, gated by G4, whose own row is gone), E2 (3) and E3 (1)."""
    rows = summary.read_rows(summary.CSV.read_text())
    e1 = [r for r in rows if re.search(r"\((3ep:|6ep:)?E1[ab]", r["claim"]) or "HANS-like" in r["claim"]]
    judged = sorted(EXP.glob("hans_augmentation/attempt-*/claims.csv"))
    assert judged and len(e1) == 6 * len(judged)
    assert all(r["file"].startswith("hans_augmentation/attempt-") and r["provenance"].startswith("study; ")
               for r in e1)
    assert not any(re.search(r"\b(3ep|6ep):G2", r["claim"]) for r in rows)
    assert not any("HANS" in c.claim for c in CLAIMS)
    assert sum(r["file"].startswith("real_effects/") for r in rows) == 7
