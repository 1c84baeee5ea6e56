"""z-filtering: the incremental implementation equals the from-scratch reference, conditional
seeding, the Z-Aug / Par-Z / Seq-Z recipes the pipeline runs, bad input, and the world's planted artifacts."""

from __future__ import annotations

import pytest

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.filtering.features import example_features
from nliforge.filtering.zfilter import z_filter, z_filter_reference
from nliforge.filtering.zstats import dataset_biased
from nliforge.filtering.zfilter import run_recipe
from nliforge.world import WorldConfig, generate_split, measure_artifact


@pytest.fixture(scope="module")
def world():
    return generate_split(WorldConfig(n_train=1500, seed=0), "train_biased")


def _outcome(result):
    return ([r.uid for r in result.dataset], [(r.uid, r.meta["zfilter"]) for r in result.rejected],
            result.final_biased, result.n_batches)


@pytest.mark.parametrize("batch_size,k,n_seed,ties", [(50, 20, 0, "name"), (97, 5, 0, "name"), (200, 1, 0, "name"),
                                                    (64, 10, 100, "name"), (50, 20, 0, "include"),
                                                    (200, 1, 0, "include"), (64, 10, 100, "include")])
def test_incremental_equals_reference(world, batch_size, k, n_seed, ties):
    seed, cands = world[:n_seed], world[n_seed:n_seed + 400]
    preds = {r.uid: ("entailment", "neutral", "contradiction")[i % 3] for i, r in enumerate(world[:250])}
    fast = z_filter(cands, seed=seed, k=k, batch_size=batch_size, hypo_preds=preds, ties=ties)
    ref = z_filter_reference(cands, seed=seed, k=k, batch_size=batch_size, hypo_preds=preds, ties=ties)
    assert _outcome(fast) == _outcome(ref)
    assert 0 < len(fast.rejected) < len(cands)


def test_a_tie_at_the_kth_rank_decides_by_name_unless_ties_include():
    """The seed makes three contradiction features tie exactly (alpha, beta, 'alpha beta': each in the
    same six examples, all contradiction). With k = 1 the name rule keeps 'alpha beta@hypothesis' (' '
    sorts before '@'), so a candidate with 'beta' alone passes; `ties=include` puts all three in B(l)."""
    seed = [_pair(f"{label[0]}{i}", hyp, label) for label, hyp in
            [("contradiction", "alpha beta"), ("entailment", "gamma delta"), ("neutral", "epsilon zeta")]
            for i in range(6)]
    cand = [_pair("x", "beta eta", "contradiction")]
    for filt in (z_filter, z_filter_reference):
        by_name = filt(cand, seed=seed, k=1, batch_size=10)
        assert [r.uid for r in by_name.accepted] == ["x"]
        included = filt(cand, seed=seed, k=1, batch_size=10, ties="include")
        assert [(r.uid, r.meta["zfilter"]["feature"]) for r in included.rejected] == [("x", "beta@hypothesis")]
        assert [n for n, _ in included.final_biased["contradiction"]] == \
            ["alpha beta@hypothesis", "alpha@hypothesis", "beta@hypothesis"]


def test_first_batch_without_seed_is_accepted_and_meta_records_why(world):
    res = z_filter(world[:300], batch_size=100)
    assert all(r.meta["zfilter"] == {"kept": True, "feature": None, "features": [], "batch": 0}
               for r in res.accepted[:100])
    assert res.rejected and all(r.meta["zfilter"]["batch"] >= 1 for r in res.rejected)
    assert all(r.meta["zfilter"]["feature"] for r in res.rejected)
    assert res.accepted[0].meta["phenomenon"] == world[0].meta["phenomenon"]  # meta kept


def _pair(uid, hyp, label):
    return Record(uid, "The judge saw the actor at the station.", hyp, label, "hand")


def test_conditional_seeding_rejects_the_seeds_biases():
    # Balanced labels (so `null` is not biased); negation only with contradiction.
    seed = [_pair(f"s{i}", f"The judge did not see actor {i}.", "contradiction") for i in range(20)]
    seed += [_pair(f"e{i}", f"The judge saw someone {i}.", "entailment") for i in range(20)]
    seed += [_pair(f"n{i}", f"The judge saw a tall actor {i}.", "neutral") for i in range(20)]
    cands = [_pair("c1", "The judge did not see the clerk.", "contradiction"),
             _pair("c2", "The judge did not see the clerk at noon.", "neutral"),
             _pair("c3", "The judge saw the actor at the station.", "contradiction")]
    alone = z_filter(cands, batch_size=10, k=8)
    assert len(alone.accepted) == 3  # one batch, empty Z: nothing is biased yet
    seeded = z_filter(cands, seed=seed, batch_size=10, k=8)
    rejected = {r.uid: r.meta["zfilter"]["feature"] for r in seeded.rejected}
    assert set(rejected) == {"c1"}  # negation is biased towards contradiction only
    assert rejected["c1"] in {"not@hypothesis", "did not@hypothesis", "did@hypothesis",
                              "not see@hypothesis", "see@hypothesis"}
    assert [r.uid for r in seeded.dataset] == [r.uid for r in seed] + ["c2", "c3"]
    # every feature of c1 in B(contradiction), in B's order: all of them fall under the §4.1 mask
    b_contradiction = [name for name, _ in dataset_biased(seed, k=8)["contradiction"]]
    c1 = seeded.rejected[0].meta["zfilter"]
    expected = [f for f in b_contradiction if f in example_features(cands[0].premise, cands[0].hypothesis)]
    assert c1["features"] == expected and c1["feature"] == expected[0] and len(expected) >= 3, c1


def test_recipes_set_relations(world):
    d0, d_gen = world[:300], world[300:700]
    aug, aug_rejected = run_recipe("zaug", d0, d_gen, batch_size=100)
    assert aug[:300] == d0 and len(aug) < 700  # D0 kept whole, some D_G dropped
    assert len(aug) + len(aug_rejected) == 700
    par, par_rejected = run_recipe("par_z", d0, d_gen, batch_size=100)
    z_d0, z_gen = z_filter(d0, batch_size=100), z_filter(d_gen, batch_size=100)
    assert [r.uid for r in par] == [r.uid for r in z_d0.dataset] + [r.uid for r in z_gen.dataset]
    assert [r.uid for r in par_rejected] == [r.uid for r in z_d0.rejected] + [r.uid for r in z_gen.rejected]
    seq, seq_rejected = run_recipe("seq_z", d0, d_gen, batch_size=100)
    z0 = z_d0.accepted
    assert [r.uid for r in seq[:len(z0)]] == [r.uid for r in z0]
    rest = z_filter(d_gen, seed=z0, batch_size=100)
    assert [r.uid for r in seq[len(z0):]] == [r.uid for r in rest.accepted]
    assert [r.uid for r in seq_rejected] == [r.uid for r in z_d0.rejected] + [r.uid for r in rest.rejected]
    assert {r.uid for r in seq} != {r.uid for r in par}  # seeding changes what D_G keeps


def test_bad_input_names_the_setting(world):
    contra = [r for r in world if r.label == "contradiction"][:20]
    with pytest.raises(NLIDataError, match="single label"):
        z_filter(contra)
    with pytest.raises(NLIDataError, match="k = 100000"):
        z_filter(world[:20], k=100000)
    with pytest.raises(NLIDataError, match="batch_size"):
        z_filter(world[:20], batch_size=0)
    with pytest.raises(NLIDataError, match="labels"):
        z_filter(world[:5] + [Record("x", "A b.", "C d.", None)])
    with pytest.raises(NLIDataError, match="labels"):
        z_filter(world[:20], labels=("entailment",))
    with pytest.raises(NLIDataError, match="duplicate uid"):
        z_filter(world[:5], seed=world[:1])


def test_z_filtering_removes_the_planted_artifacts(world):
    before = {lab: dict(fs) for lab, fs in dataset_biased(world, k=20).items()}
    res = z_filter(world, batch_size=100, k=20)
    after = {lab: dict(fs) for lab, fs in res.final_biased.items()}
    for lab, feat in (("entailment", "full-lex-overlap"), ("contradiction", "not@hypothesis"),
                      ("neutral", "hypo-len:10-14")):
        assert before[lab][feat] > 15
        assert after[lab].get(feat, 0.0) < 0.3 * before[lab][feat], (lab, feat)
    for art in ("negation", "overlap", "length"):
        # Z keeps far fewer of the artifact's target-label examples (p̂ falls less than z: the
        # whole first batch is accepted before anything is known to be biased).
        was, now = measure_artifact(world, art), measure_artifact(res.dataset, art)
        assert was["p_target_given_feature"] > 0.75
        assert now["p_target_given_feature"] < was["p_target_given_feature"] - 0.1, art
        assert now["p_feature"] < 0.6 * was["p_feature"], art


def test_bonferroni_threshold_matches_the_normal_table():
    from nliforge.filtering.zstats import bonferroni_threshold

    # one-sided normal quantiles from a printed table: z(0.01) = 2.3263, z(1e-5) = 4.2649
    assert bonferroni_threshold(0.01, 1) == pytest.approx(2.3263, abs=1e-4)
    assert bonferroni_threshold(0.01, 1000) == pytest.approx(4.2649, abs=1e-4)
    with pytest.raises(NLIDataError, match="alpha"):
        bonferroni_threshold(1.5, 10)


def test_report_says_the_planted_artifacts_stop_being_significant(world):
    """Before filtering the three artifacts are far above the Bonferroni bar; after Algorithm 1 with
    batch 100 their z falls below it (they may still rank high: the top-k is equalised, not emptied)."""
    from nliforge.filtering.zreport import biased_report, render_markdown

    res = z_filter(world, batch_size=100, k=20)
    report = biased_report(world, [], res.dataset, top=5, k=20, recipe="par_z")
    sig = report["significance"]
    assert 3.5 < sig["threshold_after"] < sig["threshold_before"] < 6   # fewer seen features after
    for lab, feat in (("entailment", "full-lex-overlap"), ("contradiction", "not@hypothesis"),
                      ("neutral", "hypo-len:10-14")):
        row = {r[0]: r for r in sig["tracked"][lab]}[feat]
        assert row[1] > 3 * sig["threshold_before"]          # rank 1 in D0, far above the bar
        assert row[2] is not None and row[2] < sig["threshold_after"] and row[4] is False, row
    text = render_markdown(report)
    assert "| `not@hypothesis` |" in text and "significant after" in text


def test_bias_plots_are_written_per_label(world, tmp_path):
    from nliforge.filtering.zreport import write_bias_plots

    res = z_filter(world, batch_size=100, k=20)
    paths = write_bias_plots(world, res.dataset, tmp_path / "plots")
    assert [p.name for p in paths] == ["bias_entailment.png", "bias_neutral.png", "bias_contradiction.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    assert sorted(x.name for x in (tmp_path / "plots").iterdir()) == sorted(p.name for p in paths)  # no temp left


def test_feature_standing_hand_computed():
    """z of a feature seen twice, both times with its label: (1 - 1/3) / sqrt((2/9) / 2) = 2.0; a
    feature seen once with each of two labels: (1/2 - 1/3) / sqrt((2/9) / 2) = 0.5."""
    from nliforge.filtering.zreport import feature_standing

    recs = [Record("r1", "a b", "x not", "contradiction"), Record("r2", "a b", "y not", "contradiction"),
            Record("r3", "a b", "x", "entailment"), Record("r4", "c d", "zz", "neutral")]
    got = feature_standing(recs, {"contradiction": ["not@hypothesis", "never@hypothesis"],
                                  "entailment": ["x@hypothesis"]})
    (name, z, rank, significant), unseen = got["contradiction"]
    assert (name, rank, significant) == ("not@hypothesis", 1, False)  # 4 pairs: far from any bar
    assert z == pytest.approx(2.0)
    assert unseen == ["never@hypothesis", None, None, False]
    assert got["entailment"][0][1] == pytest.approx(0.5)


def test_report_follows_d0_biases_into_the_generated_samples():
    """`not@hypothesis`: in D0 2 of 2 contradiction; among the samples 1 of 3; above τ 1 of 1."""
    from nliforge.filtering.zreport import biased_report, render_markdown

    d0 = [Record("r1", "a b", "x not", "contradiction"), Record("r2", "a b", "y not", "contradiction"),
          Record("r3", "a b", "x", "entailment"), Record("r4", "c d", "zz", "neutral")]
    samples = [Record("s1", "a b", "not here", "contradiction"), Record("s2", "a b", "not there", "entailment"),
               Record("s3", "c", "not", "neutral"), Record("s4", "c", "q", "contradiction")]
    report = biased_report(d0, samples[:1], d0, top=5, k=5, samples=samples)
    rows = {row[0]: row[1:] for row in report["generated_rates"]["contradiction"]}
    assert rows["not@hypothesis"] == [[2, 1.0], [3, 0.333], [1, 1.0]]
    assert report["sizes"]["samples"] == 4
    assert "| `not@hypothesis` | 1.00 (n 2) | 0.33 (n 3) | 1.00 (n 1) |" in render_markdown(report)
    assert "generated_rates" not in biased_report(d0, [], d0, top=5, k=5)   # no samples given: no table
    none_kept = biased_report(d0, [], d0, top=5, k=5, samples=samples)     # nothing above τ
    assert {tuple(r[3]) for rows in none_kept["generated_rates"].values() for r in rows} == {(0, None)}


def test_ties_setting_reaches_the_pipeline_recipes(tmp_path):
    """`pipeline.zfilter.ties` and `pipeline.zaug_debias.ties` exist (default name), a wrong value names
    its key, and the recipes apply the rule."""
    from conftest import compose_config
    from nliforge.pipelines.zaug.pipeline import zfilter_ties

    cfg = compose_config("generate", ["pipeline=zaug", "pipeline.zfilter.ties=include"], tmp_path / "o", tmp_path / "c")
    assert zfilter_ties(cfg.pipeline.zfilter, "pipeline.zfilter") == "include"
    assert zfilter_ties(cfg.pipeline.zaug_debias, "pipeline.zaug_debias") == "name"
    cfg.pipeline.zfilter.ties = "random"
    with pytest.raises(NLIDataError, match=r"pipeline.zfilter.ties='random'; valid: name, include"):
        zfilter_ties(cfg.pipeline.zfilter, "pipeline.zfilter")
    d0 = [_pair(f"{label[0]}{i}", hyp, label) for label, hyp in
          [("contradiction", "alpha beta"), ("entailment", "gamma delta"), ("neutral", "epsilon zeta")]
          for i in range(6)]
    gen = [_pair("x", "beta eta", "contradiction")]
    assert [r.uid for r in run_recipe("zaug", d0, gen, k=1, batch_size=10)[1]] == []
    assert [r.uid for r in run_recipe("zaug", d0, gen, k=1, batch_size=10, ties="include")[1]] == ["x"]
