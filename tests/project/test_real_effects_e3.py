"""experiments/real_effects E3 and the record across machines: E3's arms are E2's construction at N = the kept
counterfactuals, its values and gap closure come out as computed by hand, its yield is read from a DISCO run's
manifest, a gate that holds per world stops E3a when one world falls short, and the analysis merges what it
computes into the committed record (a row computed here replaces the recorded one; the rest is kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from test_real_effects_e2 import write_run

from experiments.real_effects.analysis_record import kept_text, merge
from experiments.real_effects.e3_sets import e3_arms


def test_e3_arms_are_base_plus_as_many_of_each():
    base, human, mnli, cf = ["o1", "o2"], ["h1", "h2", "h3"], ["m1", "m2", "m3", "m4"], ["c1", "c2"]
    arms = e3_arms(base, human, mnli, cf)
    assert arms == {"disco": ["o1", "o2", "c1", "c2"], "human_at": ["o1", "o2", "h1", "h2"],
                    "mnli_at": ["o1", "o2", "m1", "m2"]}
    with pytest.raises(ValueError, match="4 counterfactuals; E3's arms need 1..3"):
        e3_arms(base, human, mnli, ["c"] * 4)
    with pytest.raises(ValueError, match="0 counterfactuals"):
        e3_arms(base, human, mnli, [])


def write_disco_run(run: Path, kept_labels: list[str]) -> None:
    """A finished DISCO run's manifest (stage counts) and its kept counterfactuals."""
    counts = {"disco_source": 10, "disco_prompts": 50, "disco_generate": 150, "splice": 148,
              "disco_heuristics": 60, "teacher_filter": len(kept_labels)}
    stages = {k: {"count_out": v, "drops": {}} for k, v in counts.items()}
    stages["disco_heuristics"]["drops"] = {"heuristic:copied_sentence": 50, "heuristic:leftover_gap": 38}
    (run / "augment").mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps({"stages": stages}))
    recs = [{"premise": f"p{i}", "hypothesis": "h", "label": lab,
             "meta": {"original_premise": f"o{i}", "original_label": "neutral"}} for i, lab in enumerate(kept_labels)]
    (run / "augment" / "counterfactuals.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_e3_values_yield_and_gap_closure_by_hand(tmp_path):
    from experiments.real_effects.analysis_e3 import e3_rows, gap_closure, samples

    disco = {"rp": [True, True, True, True], "rh": [True, False, True, False]}     # orig 3/4; rev 1.0, 0.5
    human = {"rp": [True, True, True, True], "rh": [True, True, True, True]}       # orig 4/4; rev 1.0, 1.0
    mnli = {"rp": [True, True, True, False], "rh": [True, True, False, False]}     # orig 4/4; rev 0.5, 0.0
    for arm, right in (("disco", disco), ("human_at", human), ("mnli_at", mnli)):
        write_run(tmp_path / "e3" / "w1" / arm, right, 0.5)
    write_disco_run(tmp_path / "e3" / "w1" / "generate", ["entailment"] * 3 + ["contradiction"])
    (tmp_path / "e3" / "w1" / "disco" / "dynamics").mkdir()   # two epochs of the disco arm: the last is read
    for e, first in ((0, [0.1, 0.8, 0.1]), (1, [0.8, 0.1, 0.1])):   # argmax: epoch 0 [1,1,0,0], epoch 1 [0,1,0,0]
        pd.DataFrame({"uid": list("abcd"), "gold": [0, 1, 2, 0],
                      "p_entailment": [first[0], 0.1, 0.5, 0.6], "p_neutral": [first[1], 0.8, 0.2, 0.2],
                      "p_contradiction": [first[2], 0.1, 0.3, 0.2]}).to_parquet(
            tmp_path / "e3" / "w1" / "disco" / "dynamics" / f"epoch_00{e}.parquet")
    write_disco_run(tmp_path / "e3" / "w2" / "generate", ["neutral"])                  # its arms not run: yield only
    labels = ["entailment"] * 2 + ["neutral"] * 5 + ["contradiction"] * 3              # largest class 0.5
    rows, levels, yields = e3_rows(tmp_path, labels, worlds=(1, 2))
    value = {r["criterion"]: r["value"] for r in rows}
    assert {r["world"] for r in rows} == {1} and len(levels) == 3 and [y["world"] for y in yields] == [1, 2]
    # rev: disco 0.75, mnli 0.25; orig: disco 0.75, mnli 1.0 -> (0.5) - (-0.25) = 0.75
    assert value["E3a"] == pytest.approx(75.0)
    lev = {x["arm"]: x for x in levels}
    assert lev["disco"]["top_pred"] == pytest.approx(6 / 8) and lev["disco"]["fit"] == pytest.approx(3 / 4)
    assert lev["mnli_at"]["top_pred"] == pytest.approx(5 / 8) and lev["mnli_at"]["fit"] != lev["mnli_at"]["fit"]  # NaN
    assert value["E3-disco−human-rev"] == pytest.approx(-25.0) and value["E3-human−mnli-rev"] == pytest.approx(75.0)
    assert value["G3-N"] == 4 - 100 and value["G3-disco"] == pytest.approx(25.0)
    assert gap_closure(rows) == pytest.approx(50.0 / 75.0)
    assert yields[0]["teacher_filter"] == 4 and yields[0]["kept_entailment"] == 3 and yields[0]["kept_contradiction"] == 1
    assert yields[0]["heuristic_drops"] == "copied_sentence 50, leftover_gap 38"
    drawn = samples(tmp_path, worlds=(1, 2), k=3)
    assert len(drawn) == 3 and drawn == samples(tmp_path, worlds=(1, 2), k=3)
    assert all(d["meta"]["original_premise"] == "o" + d["premise"][1:] for d in drawn)


def load_analysis():
    """experiments/real_effects/analysis.py (real_text has an analysis.py too: the package keeps them apart)."""
    from experiments.real_effects import analysis

    return analysis


def test_a_per_world_gate_stops_e3a_when_one_world_falls_short():
    analysis = load_analysis()

    rows = [{"criterion": "G3-N", "world": w, "value": v} for w, v in zip(range(1, 6), (120, 130, -3, 150, 140))]
    rows += [{"criterion": f"G3-{a}", "world": w, "value": 10.0 + w} for a in ("disco", "human_at", "mnli_at")
             for w in range(1, 6)]
    rows += [{"criterion": "E3a", "world": w, "value": 5.0 + w} for w in range(1, 6)]
    s = analysis.summarise(rows)
    assert s.loc["G3-N", "low"] > 0 and not analysis.gate_passed(s, "G3-N")     # mean high, one world short
    assert analysis.gate_failed(s, "E3a") == "too few pairs: gate G3-N"
    table = "\n".join(analysis.claims_table(s))
    assert "**not tested (too few pairs: gate G3-N)**" in table and "| G3-N |" in table
    s2 = analysis.summarise([r if r["criterion"] != "G3-N" else {**r, "value": abs(r["value"])} for r in rows])
    assert analysis.gate_failed(s2, "E3a") == "" and analysis.verdict(s2.loc["E3a"]) == "reproduced"


def test_merge_keeps_the_record_and_replaces_what_is_computed_here(tmp_path):
    recorded = tmp_path / "results.csv"
    pd.DataFrame({"criterion": ["E4a", "E4a", "E2-333"], "world": [1, 2, 1], "value": [1.0, 2.0, 5.0]}).to_csv(
        recorded, index=False)
    new = [{"criterion": "E2-333", "world": 1, "value": 6.0}, {"criterion": "E2-333", "world": 2, "value": 7.0}]
    merged, n_kept = merge(new, recorded, ["criterion", "world"])
    got = {(r.criterion, r.world): r.value for r in merged.itertuples()}
    assert n_kept == 2 and got == {("E4a", 1): 1.0, ("E4a", 2): 2.0, ("E2-333", 1): 6.0, ("E2-333", 2): 7.0}
    same, n = merge([], recorded, ["criterion", "world"])
    assert n == 3 and same.equals(pd.read_csv(recorded))
    fresh, n = merge(new, tmp_path / "absent.csv", ["criterion", "world"])
    assert n == 0 and len(fresh) == 2


def test_walls_read_the_runs_of_this_folders_steps_only(tmp_path):
    """A scratch folder of before E1 became the study hans_augmentation also holds E1's runs: their wall times
    are not this folder's record; E4's map runs (diag/w<k>/mnli_3ep) are."""
    from experiments.real_effects.analysis_record import walls

    for name in ("e1/w1/mnli", "e1_6ep/w2/plus_6ep", "diag/w1/plus_3ep", "diag/w1/mnli_3ep", "e2/w1/base",
                 "e3/teacher", "e3/w1/generate", "e4/w1/easy", "e4_3ep/w3/random"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{name}.done").write_text("rc=0 wall=7 end=2026-11-28T00:00:00Z\n")
    got = walls(tmp_path)
    assert [r["run"] for r in got] == ["diag/w1/mnli_3ep", "e2/w1/base", "e3/teacher", "e3/w1/generate",
                                       "e4/w1/easy", "e4_3ep/w3/random"]
    assert {(r["wall_s"], r["end"]) for r in got} == {(7, "2026-11-28T00:00:00Z")}


def test_kept_text_writes_what_is_computed_and_reads_it_back_otherwise(tmp_path):
    f = tmp_path / "section.md"
    assert kept_text([], f) == []
    assert kept_text(["", "## a", "x"], f) == ["", "## a", "x"] and f.read_text() == "\n## a\nx\n"
    assert kept_text([], f) == ["", "## a", "x"]
