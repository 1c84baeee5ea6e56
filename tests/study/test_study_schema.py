"""The study file: what it resolves to, and each mistake as one line naming file:line and the key."""

from __future__ import annotations

import subprocess
import sys

import pytest
from study_files import STUDY, write_study

from nliforge.errors import NLIDataError
from nliforge.study.schema import PARTS_KEY, load_study


def test_a_study_resolves_to_overrides_gates_and_claims(tmp_path):
    s = load_study(str(write_study(tmp_path)))
    assert s.base == ("world.n_train=300", "model.max_epochs=1")
    assert s.arms["b"] == ("data/train_sets=[synthetic_biased,synthetic]", "data.combine=augment",
                           "++data.train_sets.synthetic.limit=300", "++data.train_sets.synthetic.limit_seed=0")
    assert s.gates["learns"].threshold is None and s.gates["learns"].scope == "over_worlds"
    assert s.gates["fit"].scope == "every_world" and s.gates["fit"].threshold == 0.65
    assert [(c.id, c.a, c.b, c.needs) for c in s.claims] == [("c1", "b", "a", ("pairs",)), ("c2", "b", "a", ("fit",))]
    assert s.min_worlds == 5 and s.evaluation_data == "fresh_per_attempt" and len(s.run_names()) == 20


def test_worlds_as_parts_of_real_sets_and_a_combine_expression(tmp_path):
    arms = {"m": {"train_sets": ["mnli"]},
            "d": {"train_sets": ["mnli", "hans"], "combine": "mnli ◇ hans", "limit": [1000, 500]}}
    s = load_study(str(write_study(tmp_path, worlds={"parts": 5, "seed": 3}, arms=arms,
                                   claims=[{"id": "c", "contrast": "d - m", "cell": "hans/acc"}], gates={})))
    assert (s.worlds.key, s.worlds.values) == (PARTS_KEY, (1, 2, 3, 4, 5))
    assert s.worlds.fixed == ("world_part.count=5", "world_part.seed=3")
    assert "data.combine='mnli ◇ hans'" in s.arms["d"]
    assert "++data.train_sets.hans.limit=500" in s.arms["d"]


def test_the_grouped_claims_form_shares_family_and_gates(tmp_path):
    grouped = {"family": "E1a", "needs": ["fit"], "list": [{"id": "x", "contrast": "b - a", "cell": "hans/acc"}]}
    (c,) = load_study(str(write_study(tmp_path, claims=grouped))).claims
    assert (c.family, c.needs, c.side) == ("E1a", ("fit",), "greater")


def _error(tmp_path, text: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(NLIDataError) as err:
        load_study(str(path))
    message = str(err.value)
    assert "\n" not in message
    return message.removeprefix(str(path))


@pytest.mark.parametrize("change, expected", [
    ({"sedes": [1]}, ":58: sedes: no such key; did you mean 'seeds'?"),
    ({"claims": [{"id": "c", "contrast": "b - z", "cell": "t/acc"}]}, ":45: claims.0.contrast: 'b - z': expected"),
    ({"claims": [{"id": "c", "contrast": "b - a", "cell": "t/acc", "needs": ["fitt"]}]},
     ":47: claims.0.needs: 'fitt': not a gate of this study"),
    ({"gates": {"g": {"arm": "a", "metric": "acc", "at_least": 1}}}, ":32: gates.g.metric: 'acc': expected"),
    ({"worlds": {"key": "world.seed", "values": [0, 1, 2]}}, ":6: worlds: 3 worlds, fewer than min_worlds=5"),
    ({"evaluation_data": "again"}, ":58: evaluation_data: 'again': expected fresh_per_attempt or"),
])
def test_a_mistake_is_one_line_naming_line_and_key(tmp_path, change, expected):
    import yaml

    data = {**STUDY, **change}
    assert _error(tmp_path, yaml.safe_dump(data, sort_keys=False)).startswith(expected)


def test_a_yaml_syntax_error_names_its_line(tmp_path):
    assert _error(tmp_path, "name: x\nworlds: [1, 2\n").startswith(":3: not YAML")


def test_a_study_by_name_comes_from_the_config_path(tmp_path, monkeypatch):
    (tmp_path / "study").mkdir()
    write_study(tmp_path / "study", name="mine")
    monkeypatch.setenv("NLIFORGE_CONFIG_PATH", str(tmp_path))
    assert load_study("mine").source == tmp_path / "study" / "mine.yaml"
    assert load_study("synthetic_ceiling").name == "synthetic_ceiling"      # the package's example
    with pytest.raises(NLIDataError, match="did you mean 'mine'"):
        load_study("mien")


def test_the_console_script_prints_one_error_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\n")
    done = subprocess.run([sys.executable, "-m", "nliforge.study", "preregister", str(bad)], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: {bad}:1: worlds: missing (a study needs name, worlds, seeds, arms, suite " \
                                  "and claims)"
    # --help: tests/cli/test_cli_manners.py, with every console script


def test_groups_of_claims_share_a_contrast_and_a_gate_reads_a_subset_of_training_pairs(tmp_path):
    claims = [{"family": "E1a", "needs": ["fit"], "contrast": "b - a", "side": "greater",
               "list": [{"id": "lo", "cell": "hans/acc@lexical_overlap@non-entailment"},
                        {"id": "sub", "cell": "hans/acc@subsequence@non-entailment"}]},
              {"id": "solo", "contrast": "a - b", "cell": "hans/acc", "side": "less"}]
    gates = {"fit": {"arm": "b", "metric": "train/acc", "rows": {"uid_prefix": "hans"}, "last_epoch": True,
                     "at_least": 0.65, "every_world": True, "why": "augmentation not learned"}}
    s = load_study(str(write_study(tmp_path, claims=claims, gates=gates)))
    assert [(c.id, c.family, c.contrast, c.needs) for c in s.claims] == [
        ("lo", "E1a", "b − a", ("fit",)), ("sub", "E1a", "b − a", ("fit",)), ("solo", "main", "a − b", ())]
    assert s.gates["fit"].metric == "train/acc@hans" and s.gates["fit"].why == "augmentation not learned"


def test_the_studies_in_docs_studies_md_are_valid_and_the_synthetic_one_is_the_shipped_example(tmp_path):
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "studies.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if b.startswith("name:")]
    assert len(blocks) == 2
    studies = []
    for i, block in enumerate(blocks):
        (tmp_path / f"s{i}.yaml").write_text(block)
        studies.append(load_study(str(tmp_path / f"s{i}.yaml")))
    assert studies[0].plan() == load_study("synthetic_ceiling").plan()
    assert studies[1].worlds.fixed == ("world_part.count=5", "world_part.seed=0")
