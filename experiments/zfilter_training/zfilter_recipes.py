"""Experiment 7 helper: the three z-filtering recipes from ONE zaug pipeline run, the z of
the planted artifacts before/after, label consistency, train-set registration, and results.md.

    python zfilter_recipes.py prepare RUN_DIR SCRATCH CONF_DIR [ORACLE_DIR]   # recipes + z tables + train-set YAMLs
    python zfilter_recipes.py zsummary SCRATCH OUT.md           # results_z.md over the world seeds

`prepare` calls exactly what the pipeline's `zfilter` stage calls (`run_recipe`, `biased_report`) on
the pipeline's own D0 (classifier/train_set.jsonl) and confidence-filtered samples of the `ul`
generator, once per recipe, so the generators are trained and sampled once. The pipeline run itself
used recipe seq_z; its dataset.jsonl must equal the seq_z output here (checked).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.filtering.features import FeatureSpace
from nliforge.filtering.zstats import dataset_biased, feature_label_counts, label_ids, z_scores
from nliforge.engine.classifier import ClassifierRun
from nliforge.engine.run_folder import RunFolder
from nliforge.filtering.zfilter import RECIPES, run_recipe
from nliforge.filtering.zreport import biased_report
from nliforge.world.artifacts import ARTIFACTS, measure_artifact

K, VARIANT = 20, "ul"
BATCH = int(os.environ.get("ZF_BATCH", "1000"))  # Algorithm 1's batch; run.sh passes the pipeline's own
SUFFIX = os.environ.get("ZF_SUFFIX", "")        # appended to the registered set names (one per world seed)
PLANTED = [("not@hypothesis", "contradiction"), ("full-lex-overlap", "entailment"), ("hypo-len:10-14", "neutral")]


def planted_z(records) -> dict:
    """(z*, n, rank in the label's top-K or None) of each planted artifact in `records`."""
    space = FeatureSpace(LABELS)
    counts = feature_label_counts(space.featurise_records(records), label_ids(records), len(LABELS))
    z = z_scores(counts)
    top = dataset_biased(records, k=K)
    out = {}
    for feat, label in PLANTED:
        fid = space.ids.get(feat)
        names = [n for n, _ in top[label]]
        out[feat] = {"label": label, "z": None if fid is None else round(float(z[fid, LABELS.index(label)]), 2),
                     "n": 0 if fid is None else int(counts[fid].sum()),
                     "p_target": None if fid is None or counts[fid].sum() == 0
                     else round(float(counts[fid, LABELS.index(label)] / counts[fid].sum()), 3),
                     "rank": names.index(feat) + 1 if feat in names else None}
    return out


def world_z(records) -> dict:
    """Each planted artifact as the WORLD defines it (not only the z-filter's n-gram proxy):
    prevalence, p̂(target | feature) and z* = (p̂ − 1/3) / sqrt(1/3 · 2/3 / n_feature) (Z-Aug §3.1)."""
    out = {}
    for name in ARTIFACTS:
        m = measure_artifact(records, name)
        n = m["n_feature"]
        z = (m["p_target_given_feature"] - 1 / 3) / ((2 / 9) / n) ** 0.5 if n else None
        out[name] = {"p_feature": round(m["p_feature"], 3), "p_target": round(m["p_target_given_feature"], 3),
                     "n": n, "z": None if z is None else round(z, 2)}
    return out


def oracle_agreement(run_dir: Path, oracle_dir: Path) -> dict:
    """Per generator variant: the share of parsed samples whose generated label the oracle SCORER (a
    classifier on the unbiased split; a measurement, never a filter) agrees with."""
    rows = RunFolder(run_dir).read_rows("zaug_sample")
    oracle, out = ClassifierRun(oracle_dir), {}
    for variant in sorted({r["variant"] for r in rows}):
        recs = [r for r in rows if r["variant"] == variant]
        probs = oracle.final_probs([(r["premise"], r["hypothesis"]) for r in recs])
        out[variant] = round(sum(LABELS[int(p.argmax())] == r["label"] for p, r in zip(probs, recs)) / len(recs), 4)
    return out


def prepare(run_dir: Path, scratch: Path, conf_dir: Path, oracle_dir: Path | None = None) -> None:
    folder = RunFolder(run_dir)
    d0 = [r for r in ClassifierRun(run_dir / "classifier").train_records() if r.label is not None]
    conf_rows = folder.read_rows("confidence")
    gen = [Record(**r) for r in conf_rows if r["meta"]["variant"] == VARIANT]
    consistency = folder.stage_entry("confidence")["extra"]["label_consistency"]
    sizes = {"d0": len(d0), "generated_after_tau": {v: sum(r["meta"]["variant"] == v for r in conf_rows)
                                                    for v in consistency}}
    z = {"D0": planted_z(d0), "D0 + D_G (unfiltered)": planted_z(d0 + gen)}
    wz = {"D0": world_z(d0), "D0 + D_G (unfiltered)": world_z(d0 + gen)}
    top5 = {}
    for recipe in RECIPES:
        out = scratch / "recipes" / recipe
        out.mkdir(parents=True, exist_ok=True)
        kept, rejected = run_recipe(recipe, d0, gen, k=K, batch_size=BATCH)
        report = biased_report(d0, gen, kept, top=5, k=K, out=out / "zaug_report.md", recipe=recipe)
        top5[recipe] = report["after"]
        path = out / "dataset.jsonl"
        path.write_text("".join(r.to_json() + "\n" for r in kept), encoding="utf-8")
        n_gen = sum(r.source != d0[0].source for r in kept)
        sizes[recipe] = {"kept": len(kept), "from_d0": len(kept) - n_gen, "generated": n_gen,
                         "rejected": len(rejected)}
        z[recipe] = planted_z(kept)
        wz[recipe] = world_z(kept)
        name = f"exp_zf_{recipe}{SUFFIX}"
        (conf_dir / f"{name}.yaml").write_text(
            f"# Registered by experiments/zfilter_training/run.sh from {run_dir} (recipe {recipe})\n"
            f"{name}:\n  name: {name}\n  loader: jsonl\n  path: \"{path.resolve()}\"\n"
            "  num_classes: 3\n  limit: null\n", encoding="utf-8")
    # the pipeline's own zfilter stage ran seq_z: its final dataset must be ours
    final = (run_dir / "dataset.jsonl").read_text(encoding="utf-8").splitlines()
    ours = (scratch / "recipes" / "seq_z" / "dataset.jsonl").read_text(encoding="utf-8").splitlines()
    same = [json.loads(a)["uid"] for a in final] == [json.loads(b)["uid"] for b in ours]
    sizes["seq_z_matches_pipeline_output"] = same
    top5["D0"] = {l: [list(x) for x in v[:5]] for l, v in dataset_biased(d0, k=K).items()}
    stats = {"label_consistency": consistency, "sizes": sizes, "planted_z": z, "world_z": wz, "top5": top5,
             "k": K, "batch_size": BATCH, "variant": VARIANT,
             "oracle_agrees": oracle_agreement(run_dir, oracle_dir) if oracle_dir else None}
    (scratch / "zstats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"sizes": sizes, "label_consistency": consistency}, indent=2))
    if not same:
        sys.exit("seq_z output differs from the pipeline's dataset.jsonl")


def _cell(d: dict) -> str:
    if d["z"] is None:
        return "absent"
    return f"{d['rank'] if d['rank'] else '>20'} / {d['z']:.1f} (p̂={d['p_target']:.2f}, n={d['n']})"


def _world_cell(d: dict) -> str:
    return "absent" if d["z"] is None else f"{d['z']:.1f} (p̂={d['p_target']:.2f}, {100 * d['p_feature']:.0f}%)"


def z_summary(scratch: Path, out: Path) -> None:
    """results_z.md: per world seed, label consistency (teacher and oracle scorer), set sizes, and each planted
    artifact after each recipe, by the z-filter's n-gram proxy and by the world's own definition."""
    L = ["# Z-Aug offline: label consistency and the planted artifacts, per world seed", "",
         "Written by `experiments/zfilter_training/run.sh` (`zfilter_recipes.py zsummary`). World-defined z* = "
         "(p̂ − 1/3) / sqrt(2/9 / n_feature) for the artifact's target label; significant at |z*| > 4.79 "
         "(Gardner et al. 2021's Bonferroni bound, as the proxy's).", ""]
    for path in sorted(scratch.glob("world*/zstats.json")):
        st = json.loads(path.read_text(encoding="utf-8"))
        L += [f"## {path.parent.name}", "", "| generator | samples | teacher agrees | oracle scorer agrees |",
              "|---|---|---|---|"]
        for v, c in st["label_consistency"].items():
            oracle = (st.get("oracle_agrees") or {}).get(v)
            L.append(f"| {v} | {c['samples']} | {100 * c['teacher_agrees']:.1f}% | "
                     + (f"{100 * oracle:.1f}%" if oracle is not None else "–") + " |")
        sz = st["sizes"]
        L += ["", "Sizes: D0 " + str(sz["d0"]) + "; " + "; ".join(
            f"{r} {sz[r]['kept']} ({sz[r]['generated']} generated)" for r in RECIPES), "",
            "| set | " + " | ".join(f"{a}: proxy z (p̂, n) / world z (p̂, prevalence)" for a in ARTIFACTS) + " |",
            "|---|" + "---|" * len(ARTIFACTS)]
        proxy = dict(zip(ARTIFACTS, [f for f, _ in PLANTED]))
        for ds in st["world_z"]:
            cells = [f"{_cell(st['planted_z'][ds][proxy[a]])} / {_world_cell(st['world_z'][ds][a])}" for a in ARTIFACTS]
            L.append(f"| {ds} | " + " | ".join(cells) + " |")
        L.append("")
    out.write_text("\n".join(L) + "\n", encoding="utf-8")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:] or ["--help"]
    if cmd == "prepare":
        prepare(Path(args[0]), Path(args[1]), Path(args[2]), Path(args[3]) if len(args) > 3 else None)
    elif cmd == "zsummary":
        z_summary(Path(args[0]), Path(args[1]))
    else:
        sys.exit(__doc__)
