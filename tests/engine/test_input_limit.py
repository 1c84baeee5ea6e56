"""`input_limit=` (nliforge.engine.input_set): the first N input records, or the first N of each label,
for every pipeline that takes `input=`; a bad value or a limit without an input is one error line."""

from __future__ import annotations

import json

import pytest
import yaml
from omegaconf import OmegaConf

from conftest import compose_config
from nliforge.data.records import Record
from nliforge.engine import registry
from nliforge.engine.input_set import check_input, input_limit, limited
from nliforge.errors import NLIDataError
from nliforge.generate import generate

LABELS = ["entailment", "entailment", "neutral", "contradiction", "entailment", None, "neutral", None, "neutral"]
RECORDS = [Record(f"r{i}", f"Premise {i}.", f"Hypothesis {i}.", lab, "hand", {}) for i, lab in enumerate(LABELS)]


def test_the_first_n_records_in_order():
    kept, left = limited(RECORDS, input_limit(4))
    assert [r.uid for r in kept] == ["r0", "r1", "r2", "r3"] and [r.uid for r in left] == ["r4", "r5", "r6", "r7", "r8"]
    assert limited(RECORDS, input_limit(50)) == (RECORDS, [])
    assert limited(RECORDS, input_limit(None)) == (RECORDS, [])


def test_the_first_n_of_each_label_unlabeled_counted_as_a_label():
    kept, left = limited(RECORDS, input_limit(OmegaConf.create({"per_label": 1})))
    # entailment r0, neutral r2, contradiction r3, unlabeled r5; the later ones of each are left out
    assert [r.uid for r in kept] == ["r0", "r2", "r3", "r5"]
    assert [r.uid for r in left] == ["r1", "r4", "r6", "r7", "r8"]
    kept, _ = limited(RECORDS, input_limit({"per_label": 2}))
    assert [r.uid for r in kept] == ["r0", "r1", "r2", "r3", "r5", "r6", "r7"]


@pytest.mark.parametrize("value", [0, -3, "ten", True, 2.5, {"per_label": 0}, {"per_labels": 2}, {"per_label": 2, "x": 1}])
def test_a_bad_limit_is_one_line_naming_the_key(value):
    with pytest.raises(NLIDataError, match=r"^input_limit=.*: expected a positive whole number .* \{per_label: N\}"):
        input_limit(OmegaConf.create(value) if isinstance(value, dict) else value)


def test_a_limit_without_an_input_is_refused_before_the_run(tmp_path):
    cfg = compose_config("generate", ["pipeline=wanli", "input_limit=5"], tmp_path / "run", tmp_path / "cache")
    with pytest.raises(NLIDataError, match=r"^input_limit=5: caps `input=`, and this run of pipeline 'wanli' has no input"):
        check_input(cfg)


def _takes_input() -> list[str]:
    """Every registered pipeline whose YAML says it consumes `input=`."""
    return [name for name, spec in registry.pipelines().items()
            if (yaml.safe_load(spec.config_file.read_text()) or {}).get("accepts_input")]


def test_every_pipeline_that_takes_an_input_applies_the_limit(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in RECORDS))
    names = _takes_input()
    assert {"disco", "zfilter"} <= set(names)
    for name in names:
        run = tmp_path / name
        cfg = compose_config("generate", [f"pipeline={name}", f"input={pairs}", "input_limit={per_label: 1}",
                                          "pipeline.stages=[input]"], run, tmp_path / "cache")
        manifest = generate(cfg)
        assert manifest["stages"]["input"]["drops"] == {"over_input_limit": 5}, name
        rows = [json.loads(line) for line in (run / "dataset.jsonl").read_text().splitlines()]
        assert [r["uid"] for r in rows] == ["r0", "r2", "r3", "r5"], name
