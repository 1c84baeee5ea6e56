"""Offline derivations (Naik stress tests, LI-TS), the `derived` and `file` loaders, and the
WANLI Table 3 / Z-Aug eval sets on local stand-ins of their Hub schemas and author files."""

import json
import logging
from pathlib import Path

import datasets
import pytest
from omegaconf import OmegaConf

from nliforge.data import DatasetNotCachedError, NLIDataError, Record
from nliforge.data.derivations import (DERIVATIONS, content_word_spans, derive, insert_at_sentence_end,
                                       stress_spelling)
from nliforge.data.registry import load_set
from nliforge.evaluation.registry import load_suite

from conftest import CONF_DIR, SMALL_WORLD, compose_config


def _rec(uid, premise, hypothesis, label="entailment"):
    return Record(uid, premise, hypothesis, label, "hand")


def _yaml_spec(name, **overrides):
    """The set's YAML over a hand-made stand-in file: its registered counts cannot hold, so they are allowed
    to differ (a mismatch is otherwise an error, see test_real_data.py)."""
    spec = OmegaConf.to_container(OmegaConf.load(Path(CONF_DIR) / "data/eval_sets" / f"{name}.yaml"))
    return {**spec, "allow_count_mismatch": True, **overrides}


# ---------------------------------------------------------------- derivations on hand-made input

@pytest.mark.parametrize("text,expected", [
    ("The doctor left.", "The doctor left and true is true."),
    ("He ran. Then she sat.", "He ran and true is true. "),        # text after the first sentence dropped
    ("A man is sleeping", "A man is sleeping and true is true"),   # no [.!?]: appended
    ("Is it raining?  Yes.", "Is it raining and true is true?  "),
])
def test_insertion_rule(text, expected):
    assert insert_at_sentence_end(text, " and true is true") == expected


def test_naik_distraction_tests_exact_strings_labels_unchanged():
    recs = [_rec("a", "The cat sat on the mat.", "A cat sat.", "entailment"),
            _rec("b", "Two dogs run", "No dogs run.", "contradiction")]
    wo = derive(recs, "stress_word_overlap")
    assert [r.hypothesis for r in wo] == ["A cat sat and true is true.", "No dogs run and true is true."]
    assert [r.premise for r in wo] == [r.premise for r in recs]
    ne = derive(recs, "stress_negation")
    assert [r.hypothesis for r in ne] == ["A cat sat and false is not true.", "No dogs run and false is not true."]
    lm = derive(recs, "stress_length_mismatch")
    taut5 = " and true is true" * 5
    assert [r.premise for r in lm] == [f"The cat sat on the mat{taut5}.", f"Two dogs run{taut5}"]
    assert [r.hypothesis for r in lm] == ["A cat sat.", "No dogs run."]
    for out in (wo, ne, lm):
        assert [r.label for r in out] == ["entailment", "contradiction"]
    assert wo[0].uid == "a~stress_word_overlap" and wo[0].meta["base_uid"] == "a"
    assert wo[0].meta["derivation"] == "stress_word_overlap"
    assert recs[0].hypothesis == "A cat sat."  # inputs untouched


def test_content_words():
    text = "The dog's owner, Mary, didn't sleep at all."
    words = [text[s:e] for s, e in content_word_spans(text)]
    # "dog's"/"didn't" are not letters only; the/at/all are function words
    assert words == ["owner", "Mary", "sleep"]
    assert content_word_spans("It is not here.") == []
    assert content_word_spans("I see a tree.") == [(2, 5), (8, 12)]  # "see", "tree" ("ee" alone cannot swap)


def test_spelling_exact_when_one_choice_and_drops_without_content_word():
    recs = [_rec("a", "p", "It is an ox."), _rec("b", "p", "It is not."), _rec("c", "p", "Zo is here.", "neutral")]
    out = derive(recs, "stress_spelling", seed=3)
    assert [(r.uid, r.hypothesis, r.label) for r in out] == [
        ("a~stress_spelling", "It is an xo.", "entailment"), ("c~stress_spelling", "oZ is here.", "neutral")]


def test_spelling_seeded_deterministic_and_order_independent():
    recs = [_rec(f"u{i}", "p", "The musician played a wonderful melody yesterday evening.") for i in range(40)]
    a = [r.hypothesis for r in stress_spelling(recs, seed=0)]
    assert a == [r.hypothesis for r in stress_spelling(recs, seed=0)]
    assert [r.hypothesis for r in stress_spelling(recs[::-1], seed=0)][::-1] == a      # per-uid, not per-position
    assert [r.hypothesis for r in stress_spelling(recs[:5], seed=0)] == a[:5]
    assert len(set(a)) > 5                                                             # varies across records
    assert a != [r.hypothesis for r in stress_spelling(recs, seed=1)]
    for h in a:  # exactly one adjacent swap in one word
        words, orig = h.split(), recs[0].hypothesis.split()
        diff = [(w, o) for w, o in zip(words, orig) if w != o]
        assert len(diff) == 1 and sorted(diff[0][0]) == sorted(diff[0][1])
        w, o = diff[0]
        i = next(k for k in range(len(w)) if w[k] != o[k])
        assert w[i] == o[i + 1] and w[i + 1] == o[i] and w[i + 2:] == o[i + 2:]


def test_li_ts_swaps_and_binarises():
    recs = [_rec("e", "P1.", "H1.", "entailment"), _rec("n", "P2.", "H2.", "neutral"),
            _rec("c", "P3.", "H3.", "contradiction")]
    out = derive(recs, "li_ts")
    assert [(r.premise, r.hypothesis, r.label) for r in out] == [
        ("H1.", "P1.", "non-contradiction"), ("H2.", "P2.", "non-contradiction"), ("H3.", "P3.", "contradiction")]
    with pytest.raises(NLIDataError, match="li_ts: record 'x' has label 'non-entailment'"):
        derive([_rec("x", "p", "h", "non-entailment")], "li_ts")


def test_unknown_derivation_lists_valid():
    with pytest.raises(NLIDataError, match=r"where=.nope.: unknown derivation; valid: counterfactual_pairs, hans_subcase_200, li_ts, mccoy_hard, revision_pairs, stress_"):
        derive([], "nope", where="where")
    assert set(DERIVATIONS) == {"stress_word_overlap", "stress_negation", "stress_length_mismatch",
                                "stress_spelling", "li_ts", "counterfactual_pairs", "revision_pairs",
                                "hans_subcase_200", "mccoy_hard"}


# ---------------------------------------------------------------- the derived loader on the world

@pytest.fixture(scope="module")
def stress_cfg(world_cache, tmp_path_factory):
    return compose_config("train", ["suite=synthetic_stress", *SMALL_WORLD],
                          tmp_path_factory.mktemp("stress"), world_cache)


def _world(cfg):
    return OmegaConf.to_container(cfg.world, resolve=True)


def test_derived_loader_world_split_and_eval_set_name(stress_cfg):
    world, cache = _world(stress_cfg), stress_cfg.data.cache_dir
    test = load_set({"name": "t", "loader": "world", "split": "test"}, "k", world, cache)
    by_split = load_set({"name": "neg", "loader": "derived", "base": "test", "derivation": "stress_negation"},
                        "suite.sets.neg", world, cache)
    by_name = load_set(_yaml_spec("synthetic_stress_negation"), "suite.sets.neg", world, cache)
    assert [r.hypothesis for r in by_split] == [r.hypothesis for r in by_name]
    assert [r.hypothesis for r in by_split] == [insert_at_sentence_end(r.hypothesis, " and false is not true")
                                                for r in test]
    assert [r.label for r in by_split] == [r.label for r in test]
    assert by_split[0].source == "neg" and by_split[0].uid == f"{test[0].uid}~stress_negation"


def test_synthetic_stress_suite(stress_cfg):
    sets = {es.name: es for es in load_suite(stress_cfg)}
    assert list(sets) == ["synthetic_test", "synthetic_stress_word_overlap", "synthetic_stress_negation",
                          "synthetic_stress_length_mismatch", "synthetic_stress_spelling", "synthetic_li_ts"]
    test = sets["synthetic_test"].records
    assert len(sets["synthetic_stress_word_overlap"].records) == len(test)
    assert 0 < len(sets["synthetic_stress_spelling"].records) <= len(test)
    li = sets["synthetic_li_ts"].records
    assert {r.label for r in li} == {"contradiction", "non-contradiction"}
    assert [(r.premise, r.hypothesis) for r in li] == [(r.hypothesis, r.premise) for r in test]
    assert [r.label == "contradiction" for r in li] == [r.label == "contradiction" for r in test]
    again = load_suite(stress_cfg)
    assert [r.to_json() for r in again[4].records] == [r.to_json() for r in sets["synthetic_stress_spelling"].records]


def test_derived_loader_errors_name_the_key(stress_cfg):
    world, cache = _world(stress_cfg), stress_cfg.data.cache_dir
    with pytest.raises(NLIDataError, match=r"suite.sets.x.derivation='nope': unknown derivation; valid: counterfactual_pairs, hans_subcase_200, li_ts"):
        load_set({"name": "x", "loader": "derived", "base": "test", "derivation": "nope"},
                 "suite.sets.x", world, cache)
    with pytest.raises(NLIDataError, match=r"suite.sets.x.base='nosuch': neither an eval set .* world splits: "):
        load_set({"name": "x", "loader": "derived", "base": "nosuch", "derivation": "li_ts"},
                 "suite.sets.x", world, cache)
    with pytest.raises(NLIDataError, match=r"suite.sets.x.base: a derived set needs `base`"):
        load_set({"name": "x", "loader": "derived", "derivation": "li_ts"}, "suite.sets.x", world, cache)
    with pytest.raises(NLIDataError, match=r"suite.sets.x.label_map: the set yields labels \['non-contradiction'\]"):
        load_set({"name": "x", "loader": "derived", "base": "test", "derivation": "li_ts", "num_classes": 3},
                 "suite.sets.x", world, cache)


# ---------------------------------------------------------------- Hub sets on local stand-ins

def _parquet_folder(tmp_path, name, columns, features=None):
    folder = tmp_path / name
    folder.mkdir()
    datasets.Dataset.from_dict(columns, features=features).to_parquet(str(folder / "train-00000.parquet"))
    return str(folder)


def test_hans_stand_in(tmp_path):
    feats = datasets.Features({
        "premise": datasets.Value("string"), "hypothesis": datasets.Value("string"),
        "label": datasets.ClassLabel(names=["entailment", "non-entailment"]),
        "heuristic": datasets.Value("string"), "subcase": datasets.Value("string"),
        "template": datasets.Value("string")})
    path = _parquet_folder(tmp_path, "hans", {
        "premise": ["The doctor saw the lawyer.", "The lawyer saw the doctor."],
        "hypothesis": ["The lawyer saw the doctor.", "The lawyer saw the doctor."], "label": [1, 0],
        "heuristic": ["lexical_overlap"] * 2, "subcase": ["ln_subject/object_swap", "le_relative_clause"],
        "template": ["temp1", "temp5"]}, feats)
    spec = _yaml_spec("hans", path=path, config=None, split="train")
    recs = load_set(spec, "suite.sets.hans")
    assert [r.label for r in recs] == ["non-entailment", "entailment"]
    assert recs[0].meta["subcase"] == "ln_subject/object_swap" and recs[0].meta["heuristic"] == "lexical_overlap"
    assert recs[0].uid == "hans-train-0"
    # li_ts needs e/n/c gold: a 2-class base is refused
    with pytest.raises(NLIDataError, match="has label 'non-entailment'"):
        load_set({"name": "x", "loader": "derived", "base": spec, "derivation": "li_ts",
                  "num_classes": 2, "positive": "contradiction"}, "suite.sets.x")
    # a stress test over an inline 2-class base keeps its labels
    wo = load_set({"name": "hans_wo", "loader": "derived", "base": spec, "derivation": "stress_word_overlap",
                   "num_classes": 2, "positive": "entailment"}, "suite.sets.hans_wo")
    assert wo[0].hypothesis == "The lawyer saw the doctor and true is true." and wo[0].label == "non-entailment"


def test_glue_qnli_and_wnli_stand_ins(tmp_path):
    qnli = _parquet_folder(tmp_path, "qnli", {
        "question": ["Who wrote it?", "When?"], "sentence": ["Ann wrote it.", "It rained."],
        "label": [0, 1], "idx": [10, 11]})
    recs = load_set(_yaml_spec("glue_qnli_dev", path=qnli, config=None, split="train"), "suite.sets.glue_qnli_dev")
    assert [(r.premise, r.hypothesis, r.label) for r in recs] == [
        ("Ann wrote it.", "Who wrote it?", "entailment"), ("It rained.", "When?", "non-entailment")]
    assert recs[0].uid == "glue_qnli_dev-train-10"
    wnli = _parquet_folder(tmp_path, "wnli", {"sentence1": ["a", "b"], "sentence2": ["x", "y"],
                                              "label": [0, 1], "idx": [0, 1]})
    recs = load_set(_yaml_spec("glue_wnli_train", path=wnli, config=None), "suite.sets.glue_wnli_train")
    assert [r.label for r in recs] == ["non-entailment", "entailment"]  # WNLI ids are reversed


def test_bigbench_parse_stand_in(tmp_path):
    path = _parquet_folder(tmp_path, "bb", {
        "idx": [0, 1],
        "inputs": ["Identify the relation.\n\nPremise: Ann thinks that it rains.\nHypothesis: It rains.\nRelation:",
                   "Premise: Bo knows that Cy left. Hypothesis: Cy left."],
        "targets": [["non-entailment"], ["entailment"]],
        "multiple_choice_targets": [["entailment", "non-entailment"]] * 2})
    spec = _yaml_spec("bigbench_epistemic_reasoning", path=path, config=None, split="train")
    recs = load_set(spec, "suite.sets.bb")
    assert [(r.premise, r.hypothesis, r.label) for r in recs] == [
        ("Ann thinks that it rains.", "It rains.", "non-entailment"),
        ("Bo knows that Cy left.", "Cy left.", "entailment")]
    bad = _parquet_folder(tmp_path, "bb2", {"idx": [0], "inputs": ["no markers"], "targets": [["entailment"]]})
    with pytest.raises(NLIDataError, match=r"suite.sets.bb.parse.pattern: no match in .* row 0"):
        load_set({**spec, "path": bad}, "suite.sets.bb")


# ---------------------------------------------------------------- author files

def test_file_sets_missing_say_where_to_put_them(tmp_path):
    spec = _yaml_spec("snli_hard", path=str(tmp_path / "x" / "snli_1.0_test_hard.jsonl"))
    url = "https://nlp.stanford.edu/projects/snli/snli_1.0_test_hard.jsonl"
    with pytest.raises(DatasetNotCachedError, match=r"suite.sets.snli_hard.path: .*snli_1.0_test_hard.jsonl "
                       rf"not found.*download it from {url} and put it at"):
        load_set(spec, "suite.sets.snli_hard")


def test_zaug_suite_offline_skips_every_missing_set(tmp_path, caplog):
    cfg = compose_config("train", ["suite=zaug"], tmp_path, tmp_path)
    assert cfg.suite.skip_missing is True
    with caplog.at_level(logging.WARNING):
        assert load_suite(cfg) == []
    text = caplog.text
    assert "skipping eval set snli_hard" in text and "put it at" in text
    assert "suite.sets.mnli_mm_li_ts.base: Hub dataset 'nyu-mll/multi_nli'" in text


def test_snli_hard_jsonl_drops_no_gold(tmp_path):
    file = tmp_path / "snli_1.0_test_hard.jsonl"
    rows = [{"sentence1": "A dog runs.", "sentence2": "An animal moves.", "gold_label": "entailment", "pairID": "1e"},
            {"sentence1": "A cat.", "sentence2": "A dog.", "gold_label": "-", "pairID": "2x"},
            {"sentence1": "A man.", "sentence2": "Nobody.", "gold_label": "contradiction", "pairID": "3c"}]
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    recs = load_set(_yaml_spec("snli_hard", path=str(file)), "suite.sets.snli_hard")
    assert [(r.uid, r.label) for r in recs] == [("snli_hard-1e", "entailment"), ("snli_hard-3c", "contradiction")]


def test_glue_diagnostics_tsv(tmp_path):
    file = tmp_path / "diagnostic-full.tsv"
    header = ["Lexical Semantics", "Predicate-Argument Structure", "Logic", "Knowledge", "Domain",
              "Premise", "Hypothesis", "Label"]
    lines = ["\t".join(header),
             "\t\tNegation\t\tArtificial\tThe cat sat.\tThe cat did not sit.\tcontradiction",
             '\t\t\t\tNews\tHe said "yes".\tHe spoke.\tentailment']
    file.write_text("\n".join(lines) + "\n")
    recs = load_set(_yaml_spec("glue_diagnostics", path=str(file)), "suite.sets.glue_diagnostics")
    assert [(r.premise, r.label) for r in recs] == [("The cat sat.", "contradiction"), ('He said "yes".', "entailment")]
    assert recs[0].meta["Logic"] == "Negation"


def test_human_cad_tsv_reads_csv_quoted_fields(tmp_path):
    file = tmp_path / "test.tsv"
    lines = ["sentence1\tsentence2\tgold_label", 'A man reads.\tA man sleeps.\tcontradiction',
             '"The sign says ""Politie"" here."\tThere is a sign.\tentailment']
    file.write_text("\n".join(lines) + "\n")
    recs = load_set(_yaml_spec("human_cad_test", path=str(file)), "suite.sets.human_cad_test")
    assert [(r.premise, r.label) for r in recs] == [("A man reads.", "contradiction"),
                                                    ('The sign says "Politie" here.', "entailment")]
    with pytest.raises(NLIDataError, match="suite.sets.h.quoting='odd'"):
        load_set({**_yaml_spec("human_cad_test", path=str(file)), "quoting": "odd"}, "suite.sets.h")


def test_mnli_hard_aligned_lines(tmp_path):
    (tmp_path / "s1.test").write_text("P one.\nP two.\n")
    (tmp_path / "s2.test").write_text("H one.\nH two.\n")
    (tmp_path / "labels.test").write_text("neutral\ncontradiction\n")
    recs = load_set(_yaml_spec("mnli_hard_matched", path=str(tmp_path)), "suite.sets.mnli_hard_matched")
    assert [(r.premise, r.hypothesis, r.label) for r in recs] == [
        ("P one.", "H one.", "neutral"), ("P two.", "H two.", "contradiction")]
    (tmp_path / "labels.test").write_text("neutral\n")
    with pytest.raises(NLIDataError, match=r"suite.sets.m.files: line counts differ"):
        load_set(_yaml_spec("mnli_hard_matched", path=str(tmp_path)), "suite.sets.m")
