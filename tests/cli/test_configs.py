"""Every config composes and resolves; selections and bad choices behave."""

from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from nliforge.data import NLIDataError
from nliforge.utils.cli import check_group_choices

from conftest import CONF_DIR, compose_config, resolved

CONF = Path(CONF_DIR)


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.mark.parametrize("model", _options("model"))
def test_every_model_composes(model, tmp_path):
    cfg = compose_config("train", [f"model={model}"], tmp_path, tmp_path)
    if model == "pretrained":
        assert OmegaConf.is_missing(cfg.model.backbone, "name_or_path")
        return
    node = resolved(cfg)
    assert node["model"]["backbone"]["kind"] in ("tiny", "minilm", "pretrained")
    assert node["data"]["batch_size"] == node["model"]["batch_size"]


def test_roberta_large_is_table4_recipe(tmp_path):
    m = resolved(compose_config("train", ["model=roberta_large"], tmp_path, tmp_path))["model"]
    assert m["backbone"]["name_or_path"] == "roberta-large"
    assert (m["max_epochs"], m["optimizer"]["lr"], m["batch_size"], m["weight_decay"], m["warmup_ratio"],
            m["max_length"]) == (5, 1e-5, 32, 0.1, 0.06, 128)


@pytest.mark.parametrize("group", ["trainer", "logger", "callbacks", "suite", "experiment", "debug", "preset",
                                   "world"])
def test_every_option_of_group_composes(group, tmp_path):
    for option in _options(group):
        cfg = compose_config("train", [f"{group}={option}"], tmp_path, tmp_path)
        resolved(cfg)


@pytest.mark.parametrize("train_set", _options("data/train_sets"))
def test_every_train_set_composes_under_its_own_name(train_set, tmp_path):
    cfg = compose_config("train", [f"data/train_sets=[{train_set}]"], tmp_path, tmp_path)
    assert list(cfg.data.train_sets) == [train_set]
    assert cfg.data.train_sets[train_set].name == train_set


def test_every_eval_set_has_version_and_classes():
    for path in (CONF / "data/eval_sets").glob("*.yaml"):
        node = OmegaConf.load(path)
        assert node.name == path.stem, path
        assert int(node.version) >= 1 and int(node.num_classes) in (2, 3), path


def test_several_train_sets_keep_selection_order(tmp_path):
    cfg = compose_config("train", ["data/train_sets=[mnli,wanli]", "data.combine=replace"], tmp_path, tmp_path)
    assert list(cfg.data.train_sets) == ["mnli", "wanli"] and cfg.data.combine == "replace"


def test_evaluate_config_composes(tmp_path):
    cfg = compose_config("evaluate", ["model.backbone.name_or_path=some/folder"], tmp_path, tmp_path)
    assert resolved(cfg)["model"]["backbone"]["name_or_path"] == "some/folder"


def test_unknown_train_set_lists_valid_choices(tmp_path):
    with pytest.raises(ConfigCompositionException, match="nosuchset"):
        compose_config("train", ["data/train_sets=[mnli,nosuchset]"], tmp_path, tmp_path)
    with pytest.raises(NLIDataError, match=r"data/train_sets: unknown option 'nosuchset'; valid choices: .*mnli.*synthetic_biased"):
        check_group_choices(["data/train_sets=[mnli,nosuchset]"], CONF_DIR)
    with pytest.raises(NLIDataError, match=r"model: unknown option 'gpt5'"):
        check_group_choices(["model=gpt5"], CONF_DIR)
    # multirun sweeps and plain keys pass
    check_group_choices(["data/train_sets=[mnli],[wanli],[mnli,wanli]", "data.combine=augment,replace",
                         "model=tiny", "seed=1,2", "experiment=glob(*)"], CONF_DIR)


def test_cli_reports_unknown_train_set(tmp_path):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "nliforge.train", "data/train_sets=[nosuchset]"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown option 'nosuchset'; valid choices:" in proc.stderr and "synthetic" in proc.stderr


def _eval_set_suites() -> dict[str, list[str]]:
    """Eval-set name -> the suites that list it."""
    out: dict[str, list[str]] = {}
    for suite in _options("suite"):
        for entry in OmegaConf.load(CONF / "suite" / f"{suite}.yaml").get("defaults", []):
            for target, option in dict(entry).items():
                if target.startswith("/data/eval_sets@"):
                    out.setdefault(option, []).append(suite)
    return out


def _is_template(eval_set: str) -> bool:
    """A set with a mandatory `???` value (e.g. counterfactual_pairs' base path): added to a suite
    on the command line, `+data/eval_sets@suite.sets.<key>=<set>`, rather than listed in one."""
    return bool(OmegaConf.missing_keys(OmegaConf.load(CONF / "data/eval_sets" / f"{eval_set}.yaml")))


@pytest.mark.parametrize("eval_set", _options("data/eval_sets"))
def test_every_eval_set_composes_through_a_suite(eval_set, tmp_path):
    suites = _eval_set_suites().get(eval_set)
    if not suites and _is_template(eval_set):
        cfg = compose_config("train", ["suite=disco", f"+data/eval_sets@suite.sets.{eval_set}={eval_set}"],
                             tmp_path, tmp_path)
    else:
        assert suites, f"eval set {eval_set} is in no suite"
        cfg = compose_config("train", [f"suite={suites[0]}"], tmp_path, tmp_path)
    node = resolved(cfg)["suite"]["sets"][eval_set]
    assert node["name"] == eval_set and int(node["version"]) >= 1


@pytest.mark.parametrize("eval_set", _options("data/eval_sets"))
def test_every_eval_set_label_map_covers_its_labels(eval_set):
    """The set's label map yields every gold label of its class space, and an id-keyed (Hub
    ClassLabel) map yields nothing outside it: a 2-class set cannot borrow a 3-class id map."""
    from nliforge.data.derivations import DERIVATIONS
    from nliforge.data.hub import HUB_SOURCES
    from nliforge.data.labels import SOURCE_LABEL_MAPS
    from nliforge.data.registry import gold_labels_for, loader_names

    spec = OmegaConf.to_container(OmegaConf.load(CONF / "data/eval_sets" / f"{eval_set}.yaml"))
    assert spec["loader"] in loader_names()
    allowed = set(gold_labels_for(spec))
    if spec["loader"] == "derived":
        assert spec["derivation"] in DERIVATIONS
        base = spec["base"]
        if isinstance(base, dict):  # an inline set node (counterfactual_pairs: a jsonl of records)
            assert base.get("loader") in loader_names(), base
        else:
            assert (CONF / "data/eval_sets" / f"{base}.yaml").is_file(), base
        return
    if spec["loader"] == "world_part":   # a part of registered sets, whose labels those sets' maps give
        bases = spec["base"] if isinstance(spec["base"], list) else [spec["base"]]
        assert all(any((CONF / "data" / kind / f"{b}.yaml").is_file() for kind in ("eval_sets", "train_sets"))
                   for b in bases), bases
        return
    if spec["loader"] in ("world", "jsonl"):
        return  # our own data model: label names, checked on read
    if spec["loader"] == "hub" and spec.get("source") not in HUB_SOURCES:
        # a source without loader defaults describes itself: Hub id, columns and a named label map
        assert spec.get("path") and isinstance(spec.get("label_map"), str), spec
        assert {"premise", "hypothesis", "label"} <= set(spec.get("fields") or {}), spec
    label_map = spec.get("label_map") or HUB_SOURCES.get(spec.get("source"), {}).get("label_map")
    table = SOURCE_LABEL_MAPS[label_map] if isinstance(label_map, str) else dict(label_map)
    produced = {v for v in table.values() if v is not None}
    assert allowed <= produced, (eval_set, label_map)
    if all(isinstance(k, int) and not isinstance(k, bool) for k in table) and not spec.get("binarize_gold"):
        assert produced <= allowed, (eval_set, label_map)


# DISCO (Chen et al. 2023) Table 2, in the table's order; ST is its four Liu-2020b parts.
DISCO_TABLE2 = [
    "snli_hard",                                                    # PI-CD
    "robust_nli_pi_sp", "robust_nli_is_cs", "robust_nli_li_li", "robust_nli_li_ts",
    "robust_nli_st_wo", "robust_nli_st_ne", "robust_nli_st_lm", "robust_nli_st_se",  # ST
    "hans", "mnli_hard_matched", "mnli_hard_mismatched", "glue_qnli_dev", "human_cad_test",
]


def test_disco_suite_lists_table2_in_order(tmp_path):
    node = resolved(compose_config("train", ["suite=disco"], tmp_path, tmp_path))["suite"]
    assert node["name"] == "disco" and node["skip_missing"] is True and node["collapse"] == "argmax"
    assert list(node["sets"]) == DISCO_TABLE2
    assert all(node["sets"][k]["name"] == k for k in DISCO_TABLE2)
    two_class = {k: (s["num_classes"], s.get("positive")) for k, s in node["sets"].items() if s["num_classes"] == 2}
    assert two_class == {"robust_nli_li_ts": (2, "contradiction"), "hans": (2, "entailment"),
                         "glue_qnli_dev": (2, "entailment")}
