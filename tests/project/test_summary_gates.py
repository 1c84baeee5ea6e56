"""experiments/summary_gates.py and the gated claims of summary.csv: a gate is never a row; a claim whose gate
failed reads `not tested (gate …)` with the gate's own numbers (computed here by hand from the committed
per-world values); the redesigned WANLI mechanism test's results file says the same. Offline, ~3 s."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from experiments import summary, world_unit
from experiments.summary_claims import CLAIMS
from experiments.summary_gates import EveryWorld, OverWorlds, failed
from experiments.summary_real import RealWorlds
from experiments.summary_sources import Sizes
from experiments.wanli_generated import results_labeller
from experiments.wanli_generated.gates_labeller import read_g1
from nliforge.errors import NLIDataError

EXP = Path(__file__).resolve().parents[2] / "experiments"


def rows() -> dict[str, dict[str, str]]:
    return {r["claim"]: r for r in summary.read_rows(summary.CSV.read_text())}


def one(pattern: str) -> dict[str, str]:
    (row,) = [r for claim, r in rows().items() if re.search(pattern, claim)]
    return row


def test_over_worlds_gate_by_hand(tmp_path):
    (tmp_path / "r.csv").write_text("criterion,world,value\ng,1,1.0\ng,2,2.0\ng,3,3.0\nh,1,4\nh,2,5\nh,3,6\n")
    # 1, 2, 3: mean 2, sd 1, se 1/sqrt(3) = 0.5774; t_{0.975,2} = 4.3027 -> half-width 2.484: [-0.5, +4.5]
    gate = OverWorlds("G", "a − its bound", RealWorlds("g", ("r.csv",), "world"), "it did not learn")
    assert gate.failure(tmp_path) == ("G: a − its bound +2.0 [−0.5, +4.5] points over 3 worlds, interval not "
                                      "entirely above 0: it did not learn")
    # 4, 5, 6: [+2.5, +7.5], above 0: passed
    assert OverWorlds("H", "b", RealWorlds("h", ("r.csv",), "world")).failure(tmp_path) is None
    (tmp_path / "one.csv").write_text("criterion,world,value\ng,1,3.0\n")
    assert OverWorlds("G", "a", RealWorlds("g", ("one.csv",), "world")).failure(tmp_path) == \
        "G: a +3.0 points in 1 world, no interval"


class Values:
    files = ("v.md",)

    def __init__(self, values):
        self.values = values

    def per_world(self, root):
        return self.values


def test_every_world_gate_by_hand(tmp_path):
    g1 = EveryWorld("G1", "acc", Values({0: (60.3, 60.8), 1: (61.9, 59.2), 2: (65.3, 63.0)}), bound_what="floor",
                    why="no use", unit="%")
    assert g1.failure(tmp_path) == "G1: acc 60.3% < floor 60.8% in world 0 (passed in worlds 1, 2): no use"
    assert EveryWorld("G1", "acc", Values({0: (60.8, 60.8)})).failure(tmp_path) is None   # ≥ passes
    yield_ = EveryWorld("yield", "pairs", Values({0: 179.0, 1: 600.0, 2: 45.0}), 500.0, digits=0)
    assert yield_.failure(tmp_path) == "yield: pairs 179 < 500 in world 0, 45 < 500 in world 2 (passed in world 1)"
    assert failed((g1, yield_), tmp_path) == g1.failure(tmp_path) + "; " + yield_.failure(tmp_path)
    assert failed((), tmp_path) is None


def test_read_g1_reads_its_own_table_and_refuses_a_word_the_numbers_do_not_give(tmp_path):
    head = "| world | N = K | labeller test | floor test (mean) | G1 | W pairs | W = intended | G2 | G = intended | c |\n"
    ok = head + "| 0 | 1000 | 60.3 | 60.8 | **FAIL** | 2442 | 34.4 | **FAIL** | 35.1 | 60.3 |\n" \
                "| 1 | 1000 | – | – | **–** | – | – | **–** | – | – |\n"
    (tmp_path / "g.md").write_text(ok)
    assert read_g1(tmp_path / "g.md") == {0: (60.3, 60.8)}
    (tmp_path / "bad.md").write_text(head + "| 0 | 1000 | 61.3 | 60.8 | **FAIL** | 1 | 2 | **FAIL** | 3 | 4 |\n")
    with pytest.raises(NLIDataError, match=r"bad.md:2: G1 says \*\*FAIL\*\* for the labeller 61.3"):
        read_g1(tmp_path / "bad.md")


def test_no_summary_row_is_a_gate():
    """Gates are conditions on claims, not claims: no row names a gate, a manipulation check or a fit gate."""
    for claim, r in rows().items():
        assert not re.search(r"\bgate\b|\bG\d\b|manipulation check|learns", claim + r["paper_number"]), claim
    assert not any("G4-" in str(getattr(c.source, "criterion", "")) for c in CLAIMS)


def test_e4_at_3_epochs_is_not_tested_with_g4s_numbers():
    """G4 (real_effects/README.md): every arm's MNLI test accuracy − its largest class, interval over worlds above
    0. The random third's committed per-world values −1.528, +0.6791, +0.8489, +2.5467, +0.6791: mean 0.6452,
    sd 1.4476, se 0.6474, t_{0.975,4} = 2.7764 -> [−1.15, +2.44]; the other two arms pass."""
    expected = ("not tested (gate G4: the random third's MNLI test accuracy − its largest class +0.6 [−1.2, +2.4] "
                "points over 5 worlds, interval not entirely above 0: the random third is not above its largest "
                "class)")
    for crit in ("3ep:E4a", "3ep:E4b"):
        assert one(re.escape(f"({crit};"))["verdict"] == expected
    e4a = one(r"\(3ep:E4a;")   # its numbers stay in the row (README: +3.4 [+2.1, +4.8])
    assert [round(float(e4a[k]), 1) for k in ("estimate", "low", "high")] == [3.4, 2.1, 4.8]


def test_the_redesigned_mechanism_test_l1_l3_are_not_tested_with_g1s_numbers():
    """World 0's challenge means (points, seeds 1-3): floor 33.17, 35.06, 32.50 (mean 33.574); D0 + W 31.44,
    34.39, 34.22 (33.352); random 33.44, 34.56, 33.17 (33.722); ceiling 35.78, 41.50, 34.56 (37.278).
    L1 = −0.222, L2 = −0.370, L3 = −3.926; the manipulation check ceiling − floor = +3.70 (one world)."""
    g1 = ("G1: the labeller's artifact-free test accuracy 60.3% < the floor's mean 60.8% in world 0 (passed in "
          "worlds 1, 2): the labeller is not worth asking")
    check = "manipulation check: ceiling − floor, challenge mean +3.7 points in 1 world, no interval"
    for name, estimate in (("L1", -0.222), ("L2", -0.370), ("L3", -3.926)):
        r = one(rf"\({name}; points\)")
        assert float(r["estimate"]) == pytest.approx(estimate, abs=1e-3) and r["n_worlds"] == "1"
        assert r["verdict"].startswith(f"not tested (gate {g1}; {check}")
        assert r["file"] == "wanli_generated/results_labeller.csv; wanli_generated/gates_labeller.md"
    md = (EXP / "wanli_generated/results_labeller.md").read_text()
    assert md == results_labeller.results_md(EXP)      # the committed file is what the committed files give
    for name in ("L1", "L2", "L3"):
        (line,) = [x for x in md.splitlines() if x.startswith(f"| {name} |")]
        assert f"| – | not tested (gate {g1}; {check}" in line and "not shown" not in line
    assert (EXP / "wanli_generated/results_labeller_check.md").read_text() == results_labeller.check_md(EXP)


def test_other_gated_claims_carry_their_gate():
    """real_lm's H3 at the paper's ratio needs its manipulation check (ceiling − floor above 0), five-world Z-Aug
    its yield (≥ 500 pairs beyond D0 in every world) and ceiling above floor; E2 and E3 pass their gates."""
    h3 = one(r"paper's W-to-D0 ratio \(every seed.*D0 \+ W − floor")
    assert h3["verdict"].startswith("not tested (gate manipulation check: ceiling − floor, challenge mean +6.0 "
                                    "[−32.2, +44.3] points over 2 worlds")
    for r in (r for c, r in rows().items() if c.startswith("Z-Aug beats") and "five worlds" in c):
        assert r["verdict"].startswith("not tested (gate yield: Z-Aug's pairs added to D0 179 < 500 in world 0, "
                                       "326 < 500 in world 1, 148 < 500 in world 2, 216 < 500 in world 3, 45 < 500 "
                                       "in world 4")
        assert "ceiling above floor: Z-Aug's ceiling − floor, challenge mean +0.8 [−0.9, +2.6]" in r["verdict"]
    for r in (r for c, r in rows().items() if re.search(r"\((E2-\d+|E3a);", c)):
        assert not r["verdict"].startswith("not tested"), r["claim"]
    # Par-Z, Seq-Z (≥ 1,742 pairs) and DISCO (N ≥ 1,456) pass theirs: their verdicts stand, their gate files are
    # named, and a gate's file does not make another row of the same data look superseded
    passing = [r for c, r in rows().items() if re.match(r"(Par-Z|Seq-Z) beats|DISCO", c) and "five worlds" in c]
    assert len(passing) == 7 and not any(r["verdict"].startswith("not tested") for r in passing)
    assert all(r["file"].split("; ")[1].endswith(".md") for r in passing)
    assert one(r"^Par-Z − D0 on the in-distribution test, five worlds")["provenance"] == "vs_d0; current"


def test_sizes_reads_both_layouts_by_hand(tmp_path):
    (tmp_path / "z.md").write_text("# t\n\nSizes per world seed: world 0: zaug_added=179 par_z=2695; world 1: "
                                   "zaug_added=45 par_z=2620; \n")
    (tmp_path / "d.md").write_text("N per world seed (the smaller D^c): world 0: 1574; world 1: 1456; \n")
    assert Sizes("par_z", ("z.md",)).per_world(tmp_path) == {0: 2695.0, 1: 2620.0}
    assert Sizes("zaug_added", ("z.md",)).per_world(tmp_path) == {0: 179.0, 1: 45.0}
    assert Sizes("", ("d.md",), "N per world seed").per_world(tmp_path) == {0: 1574.0, 1: 1456.0}
    with pytest.raises(NLIDataError, match="z.md: no world's size"):
        Sizes("seq_z", ("z.md",)).per_world(tmp_path)


def test_a_claim_whose_gate_failed_leaves_holm_and_reads_not_tested():
    m = pd.DataFrame([{"row": r, "world_seed": 0, "seed": 1, "eval_set": "challenge mean", "value": v}
                      for r, v in (("a", 0.5), ("b", 0.4), ("c", 0.45))])
    lines = world_unit.table(m, {"X": ("a", "b"), "Y": ("a", "c")}, {"X": "G: 1 < 2 in world 0"})
    assert lines[2].endswith("| – | not tested (gate G: 1 < 2 in world 0) |")
    assert lines[3].endswith("| not shown (n_worlds = 1 < 5; no interval) |") and "| – |" not in lines[3]
    gated = [c for c in CLAIMS if c.gates]
    estimates = [c.source.read(EXP) for c in gated]
    sentences = [failed(c.gates, EXP) for c in gated]
    held = summary.family_holm_p(gated, estimates, sentences)
    assert held and all(not sentences[i] for i in held)   # E2, E3a in Holm; the gated E4 and L1-L3 out


def test_results_labeller_names_a_missing_file(tmp_path):
    with pytest.raises(NLIDataError, match=r"wanli_generated/results_labeller.csv: missing"):
        results_labeller.results_md(tmp_path)
    (tmp_path / "wanli_generated").mkdir()
    (tmp_path / "wanli_generated/results_labeller.csv").write_text("row,seed,value\n")
    with pytest.raises(NLIDataError, match=r"results_labeller.csv: expected columns"):
        results_labeller.results_md(tmp_path)
