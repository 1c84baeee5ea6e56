"""Real NLI files from the authors' releases: registered sets, counts and hashes, formats, splits, pairs,
fetching, and the row checks every file loader shares.

Tests marked `real_data` read NLIFORGE_DATA_DIR (CI: ../shared/data/real). Without it they skip, saying
why; with NLIFORGE_REQUIRE_REAL_DATA=1 (CI) a missing folder is a failure.
"""

from __future__ import annotations

import functools
import http.server
import logging
import shutil
import threading
from collections import Counter
from pathlib import Path

import pytest
from conftest import real_data_dir
from omegaconf import OmegaConf

from nliforge.data.checks import DEFAULT_MAX_FIELD_CHARS, hash_fraction
from nliforge.data.fetch import fetch, registered_files, select
from nliforge.data.records import Record
from nliforge.data.registry import eval_set_spec, load_set
from nliforge.errors import DatasetNotCachedError, NLIDataError

MCCOY = "mnli_dev_matched_mccoy.tsv"


@pytest.fixture
def real_dir() -> Path:
    return real_data_dir(MCCOY)


def _load(name: str, **overrides) -> list[Record]:
    spec = {**eval_set_spec(name, "t", "data_cache"), **overrides}
    return load_set(spec, f"suite.sets.{name}", None, "data_cache")


def _train_spec(name: str) -> dict:
    f = select([name], registered_files())[0]
    return {**f.spec, "path": str(f.path)}


# ------------------------------------------------------------------ the registered releases, read for real

REGISTERED = [f.name for f in registered_files()]
COUNTS = {  # the release notes' counts (shared/data/real/README.md), typed in by hand
    "mnli_dev_matched_mccoy": (9815, {"entailment": 3479, "neutral": 3123, "contradiction": 3213}),
    "snli_cad_original": (1666, None), "snli_cad_original_dev": (200, None), "snli_cad_original_test": (400, None),
    "snli_cad_revised_premise": (3332, None), "snli_cad_revised_hypothesis": (3332, None),
    "snli_cad_revised_premise_test": (800, None), "snli_cad_revised_hypothesis_test": (800, None),
    "snli_cad_revised_premise_dev": (400, None), "snli_cad_revised_hypothesis_dev": (400, None),
    "wanli_sample": (100, None),
}


def test_every_release_file_of_the_data_readme_is_registered():
    assert set(COUNTS) <= set(REGISTERED)
    assert {"mnli_dev_train_part", "mnli_dev_test_part"} <= set(REGISTERED)


@pytest.mark.parametrize("name", REGISTERED)
def test_every_registered_real_set_loads_with_its_exact_counts(name, real_dir):
    spec = _train_spec(name)
    records = load_set(spec, f"data.sets.{name}", None, "data_cache")
    assert Path(spec["path"]).resolve().is_relative_to(real_dir.resolve())
    if name in COUNTS:
        size, labels = COUNTS[name]
        assert len(records) == size
        if labels:
            assert dict(Counter(r.label for r in records)) == labels
    assert len({r.uid for r in records}) == len(records)


def test_mnli_parts_are_disjoint_cover_the_file_and_follow_the_hash(real_dir):
    train = load_set(_train_spec("mnli_dev_train_part"), "t", None, "data_cache")
    test = _load("mnli_dev_test_part")
    whole = _load("mnli_dev_matched_mccoy")
    assert (len(train), len(test)) == (6918, 2897)
    assert not {r.uid for r in train} & {r.uid for r in test}
    assert {r.uid for r in train} | {r.uid for r in test} == {r.uid for r in whole}
    assert all(hash_fraction("mnli_dev_matched", r.uid) < 0.3 for r in test)
    assert whole[1].meta["number of correct responses (out of 100)"] == "100"


def test_mccoy_file_read_with_csv_quoting_is_refused_by_its_count(real_dir):
    with pytest.raises(NLIDataError, match=r"loaded 9714 rows, expected_size is 9815.*allow_count_mismatch"):
        _load("mnli_dev_matched_mccoy", quoting="csv")


def test_cad_file_read_with_no_quoting_is_refused_at_its_line(real_dir):
    with pytest.raises(NLIDataError, match=r"revised_premise/test.tsv:\d+: column 'sentence1' is CSV-quoted.*quoting: csv"):
        _load("snli_cad_revised_premise_test", quoting="none")


def test_cad_quotes_are_unescaped_under_csv_quoting(real_dir):
    texts = [r.premise for r in _load("snli_cad_revised_premise_test")]
    assert any('"Politie"' in t for t in texts) and not any('""' in t for t in texts)


def test_revised_tests_pair_with_their_originals_by_position(real_dir):
    originals = _load("snli_cad_original_test")
    pairs = _load("snli_cad_cf_hypothesis_test")
    assert len(pairs) == 1600
    first_orig, first_cf = pairs[0], pairs[1]
    assert (first_orig.meta["role"], first_cf.meta["role"]) == ("original", "counterfactual")
    assert first_orig.premise == originals[0].premise == first_cf.premise
    assert pairs[2].premise == originals[0].premise and pairs[4].premise == originals[1].premise
    assert first_cf.label != first_orig.label


def test_naik_stress_sets_are_derived_from_the_held_out_part(real_dir):
    test = _load("mnli_dev_test_part")
    negation = _load("mnli_dev_test_part_stress_negation")
    assert [r.meta["base_uid"] for r in negation] == [r.uid for r in test]
    assert all("and false is not true" in r.hypothesis for r in negation)


def test_wanli_release_through_the_jsonl_loader_is_detected_and_said(real_dir, caplog):
    spec = {"name": "jsonl", "loader": "jsonl", "path": str(real_dir / "wanli_train_sample.jsonl"), "num_classes": 3}
    with caplog.at_level(logging.INFO, logger="nliforge.data.registry"):
        records = load_set(spec, "data.train_sets.jsonl")
    assert len(records) == 100 and records[0].uid == "jsonl-116646" and records[0].label == "entailment"
    assert records[0].meta["genre"] == "generated" and records[0].meta["pairID"] == 47695
    assert "WANLI's release format" in caplog.text


# ------------------------------------------------------------------ counts, hashes, rows (hand-made files)

def _tsv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pairs.tsv"
    path.write_text("sentence1\tsentence2\tgold_label\n" + text, encoding="utf-8")
    return path


def _file_spec(path: Path, **extra) -> dict:
    return {"name": "mine", "loader": "file", "format": "tsv", "path": str(path), "num_classes": 3,
            "fields": {"premise": "sentence1", "hypothesis": "sentence2", "label": "gold_label"},
            "label_map": "nli_names", **extra}


def test_a_count_mismatch_is_an_error_unless_allowed(tmp_path, caplog):
    path = _tsv(tmp_path, "a\tb\tneutral\nc\td\tentailment\n")
    with pytest.raises(NLIDataError, match=r"data.eval_sets.mine: loaded 2 rows, expected_size is 3"):
        load_set(_file_spec(path, expected_size=3), "data.eval_sets.mine")
    with pytest.raises(NLIDataError, match=r"label counts \{'entailment': 1, 'neutral': 1\}"):
        load_set(_file_spec(path, expected_labels={"entailment": 2, "neutral": 0}), "data.eval_sets.mine")
    with caplog.at_level(logging.WARNING):
        assert len(load_set(_file_spec(path, expected_size=3, allow_count_mismatch=True), "x")) == 2
    assert "allowed by x.allow_count_mismatch" in caplog.text


def test_a_file_that_is_not_the_registered_release_is_refused(tmp_path):
    path = _tsv(tmp_path, "a\tb\tneutral\n")
    with pytest.raises(NLIDataError, match=rf"{path}: sha256 [0-9a-f]{{64}} is not the registered 00+"):
        load_set(_file_spec(path, sha256="0" * 64), "data.eval_sets.mine")


@pytest.mark.parametrize("body,line,what", [
    ("a\tb\tneutral\nc\tentailment\n", 3, "2 tab-separated fields, the header has 3"),   # a short row
    ("a\tb\tneutral\nc\td\tneutral\textra\n", 3, "4 tab-separated fields, the header has 3"),
])
def test_a_malformed_tsv_row_is_refused_at_its_line(tmp_path, body, line, what):
    path = _tsv(tmp_path, body)
    with pytest.raises(NLIDataError, match=rf"{path}:{line}: .*({what})"):
        load_set(_file_spec(path), "data.eval_sets.mine")


@pytest.mark.parametrize("row", ['{"premise": null, "hypothesis": "h", "label": "neutral"}',
                                 '{"premise": "p", "label": "neutral"}'])
def test_a_jsonl_file_row_without_a_text_is_refused_at_its_line(tmp_path, row):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"premise": "p", "hypothesis": "h", "label": "neutral"}\n\n' + row + "\n")
    spec = {"name": "mine", "loader": "file", "format": "jsonl", "path": str(path), "label_map": "nli_names"}
    with pytest.raises(NLIDataError, match=rf"{path}:3: (premise|hypothesis) is missing or null"):
        load_set(spec, "data.train_sets.mine")


def test_an_over_long_field_is_refused_at_its_line_in_every_loader(tmp_path):
    long = "x" * (DEFAULT_MAX_FIELD_CHARS + 1)
    ours = tmp_path / "ours.jsonl"
    ours.write_text('{"uid": "a", "premise": "p", "hypothesis": "h", "label": "neutral"}\n'
                    f'{{"uid": "b", "premise": "{long}", "hypothesis": "h", "label": "neutral"}}\n')
    with pytest.raises(NLIDataError, match=rf"{ours}:2: premise has 100,001 characters, above the limit of 100,000"):
        load_set({"name": "jsonl", "loader": "jsonl", "path": str(ours)}, "data.train_sets.jsonl")
    assert len(load_set({"name": "jsonl", "loader": "jsonl", "path": str(ours), "max_field_chars": 200_000}, "x")) == 2
    path = _tsv(tmp_path, f"a\tb\tneutral\nc\t{long}\tneutral\n")
    with pytest.raises(NLIDataError, match=rf"{path}:3: hypothesis has 100,001 characters"):
        load_set(_file_spec(path), "data.eval_sets.mine")


def test_revision_pairs_refuse_files_that_do_not_line_up():
    from nliforge.data.derivations import revision_pairs

    orig = [Record(f"o{i}", f"premise {i}", f"hypothesis {i}", "neutral") for i in range(2)]
    good = [Record("r0", "premise 0", "other", "entailment"), Record("r1", "changed", "hypothesis 0", "contradiction"),
            Record("r2", "premise 1", "other", "entailment"), Record("r3", "changed", "hypothesis 1", "contradiction")]
    pairs = revision_pairs(orig, good, 2, "x", "cf")
    assert [(p.uid, p.meta["original_uid"]) for p in pairs[:4]] == [
        ("r0/original", "o0"), ("r0/counterfactual", "o0"), ("r1/original", "o0"), ("r1/counterfactual", "o0")]
    with pytest.raises(NLIDataError, match="3 revisions for 2 originals"):
        revision_pairs(orig, good[:3], 2, "x", "cf")
    shuffled = [good[0], good[2], good[1], good[3]]
    shuffled = [Record(r.uid, "new " + r.premise, r.hypothesis if i % 2 else "new", r.label) for i, r in enumerate(shuffled)]
    with pytest.raises(NLIDataError, match="do not line up by position"):
        revision_pairs(orig, shuffled, 2, "x", "cf")


def test_a_derived_set_may_name_a_base_from_a_user_config_folder(tmp_path, monkeypatch):
    folder = tmp_path / "conf" / "data" / "eval_sets"
    folder.mkdir(parents=True)
    rows = _tsv(tmp_path, "The cat sat. It slept.\tA cat sat.\tentailment\n")
    (folder / "my_base.yaml").write_text(OmegaConf.to_yaml(_file_spec(rows, name="my_base")))
    (folder / "my_stress.yaml").write_text("name: my_stress\nloader: derived\nbase: my_base\n"
                                           "derivation: stress_negation\nnum_classes: 3\n")
    monkeypatch.setenv("NLIFORGE_CONFIG_PATH", str(tmp_path / "conf"))
    [rec] = load_set(eval_set_spec("my_stress", "suite.sets.my_stress"), "suite.sets.my_stress")
    assert rec.hypothesis == "A cat sat and false is not true."


# ------------------------------------------------------------------ getting the files

def test_a_missing_release_file_names_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv("NLIFORGE_DATA_DIR", str(tmp_path / "empty"))
    with pytest.raises(DatasetNotCachedError, match=r"not found; get it with `nliforge-data fetch snli_cad_original_test`"
                                                     r" \(from https://.*\), or set NLIFORGE_DATA_DIR"):
        _load("snli_cad_original_test")


@pytest.fixture
def release_server(tmp_path):
    """A local HTTP server over a folder (the releases' stand-in host on 127.0.0.1)."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_fetch_downloads_checks_the_hash_and_leaves_nothing_when_it_differs(tmp_path, monkeypatch, release_server):
    root, base = release_server
    src = Path(__file__)                                           # any bytes will do
    shutil.copy(src, root / "a.tsv")
    monkeypatch.setenv("NLIFORGE_DATA_DIR", str(tmp_path / "data"))
    [f] = select(["snli_cad_original_test"], registered_files())
    from dataclasses import replace

    from nliforge.data.checks import file_sha256

    good = replace(f, url=f"{base}/a.tsv", sha256=file_sha256(src))
    lines = []
    assert fetch([good], log=lines.append) == [f.path] and f.path.read_bytes() == src.read_bytes()
    assert fetch([good], log=lines.append) and "already present (sha256 ok)" in lines[-1]
    f.path.unlink()
    with pytest.raises(NLIDataError, match=r"a.tsv: downloaded file has sha256 .* nothing was written"):
        fetch([replace(good, sha256="1" * 64)], log=lines.append)
    with pytest.raises(NLIDataError, match=r"missing.tsv: download failed .*404"):
        fetch([replace(good, url=f"{base}/missing.tsv")], log=lines.append)
    assert list(f.path.parent.iterdir()) == []


def test_nliforge_data_cli_lists_and_refuses_unknown_sets(tmp_path, monkeypatch, capsys):
    from nliforge.data.cli import main

    monkeypatch.setenv("NLIFORGE_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        main(["list"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "snli_cad_original_test" in out and "missing" in out
    with pytest.raises(SystemExit) as done:
        main(["fetch", "nope"])
    assert done.value.code == 2 and "error: unknown set(s) ['nope']" in capsys.readouterr().err
