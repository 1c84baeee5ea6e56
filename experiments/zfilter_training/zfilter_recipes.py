"""Experiment 7 helper (issue 8): the three z-filtering recipes from ONE zaug pipeline run, the z of
the planted artifacts before/after, label consistency, train-set registration, and results.md.

    python zfilter_recipes.py prepare RUN_DIR SCRATCH CONF_DIR   # recipes + z table + train-set YAMLs
    python zfilter_recipes.py results SCRATCH EXP_DIR            # results.md/.csv from the report

`prepare` calls exactly what the pipeline's `zfilter` stage calls (`run_recipe`, `biased_report`) on
the pipeline's own D0 (classifier/train_set.jsonl) and confidence-filtered samples of the `ul`
generator, once per recipe, so the generators are trained and sampled once. The pipeline run itself
used recipe seq_z; its dataset.jsonl must equal the seq_z output here (checked).
"""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.filtering.features import FeatureSpace
from nliforge.filtering.zstats import dataset_biased, feature_label_counts, label_ids, z_scores
from nliforge.pipeline.classifier import ClassifierRun
from nliforge.pipeline.run_folder import RunFolder
from nliforge.pipeline.zaug_report import RECIPES, biased_report, run_recipe

K, VARIANT = 20, "ul"
BATCH = int(os.environ.get("ZF_BATCH", "1000"))  # Algorithm 1's batch; run.sh passes the pipeline's own
PLANTED = [("not@hypothesis", "contradiction"), ("full-lex-overlap", "entailment"), ("hypo-len:10-14", "neutral")]
ROW_NAMES = {"synthetic_biased": "D0 (synthetic_biased)", "exp_zf_zaug": "Z-Aug  Z(D_G|D0)",
             "exp_zf_par_z": "Par-Z  Z(D0) ∪ Z(D_G)", "exp_zf_seq_z": "Seq-Z  Z(D_G|Z(D0))",
             "synthetic_biased_poe": "PoE w/ D0", "exp_zf_seq_z_poe": "PoE w/ Seq-Z"}


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


def prepare(run_dir: Path, scratch: Path, conf_dir: Path) -> None:
    folder = RunFolder(run_dir)
    d0 = [r for r in ClassifierRun(run_dir / "classifier").train_records() if r.label is not None]
    conf_rows = folder.read_rows("confidence")
    gen = [Record(**r) for r in conf_rows if r["meta"]["variant"] == VARIANT]
    consistency = folder.stage_entry("confidence")["extra"]["label_consistency"]
    sizes = {"d0": len(d0), "generated_after_tau": {v: sum(r["meta"]["variant"] == v for r in conf_rows)
                                                    for v in consistency}}
    z = {"D0": planted_z(d0), "D0 + D_G (unfiltered)": planted_z(d0 + gen)}
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
        name = f"exp_zf_{recipe}"
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
    stats = {"label_consistency": consistency, "sizes": sizes, "planted_z": z, "top5": top5,
             "k": K, "batch_size": BATCH, "variant": VARIANT}
    (scratch / "zstats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"sizes": sizes, "label_consistency": consistency}, indent=2))
    if not same:
        sys.exit("seq_z output differs from the pipeline's dataset.jsonl")


def _cell(d: dict) -> str:
    if d["z"] is None:
        return "absent"
    return f"{d['rank'] if d['rank'] else '>20'} / {d['z']:.1f} (p̂={d['p_target']:.2f}, n={d['n']})"


def results(scratch: Path, exp: Path) -> None:
    stats = json.loads((scratch / "zstats.json").read_text(encoding="utf-8"))
    L = ["# Experiment 7: z-filtering and PoE in the synthetic world (results)", "",
         "Generated by `experiments/zfilter_training/run.sh`; narrative in README.md.", "",
         "## Label consistency (teacher argmax = generated label; confidence stage)", "",
         "| generator | samples parsed | teacher agrees | p_teacher(own) > τ |", "|---|---|---|---|"]
    for v, c in stats["label_consistency"].items():
        lam = "λ = 0.5 (unlikelihood)" if v == "ul" else "λ = 0 (MLE)"
        L.append(f"| {v}: {lam} | {c['samples']} | {100 * c['teacher_agrees']:.1f}% | {c['above_tau']} |")
    s = stats["sizes"]
    L += ["", "## Set sizes", "", f"D0: {s['d0']}; generated after τ: {s['generated_after_tau']} "
          f"(only `{stats['variant']}` is filtered). k = {stats['k']}, batch {stats['batch_size']}. "
          f"Seq-Z output identical to the pipeline's own dataset.jsonl: {s['seq_z_matches_pipeline_output']}.", "",
          "| recipe | kept | from D0 | generated | rejected |", "|---|---|---|---|---|"]
    for r in RECIPES:
        L.append(f"| {r} | {s[r]['kept']} | {s[r]['from_d0']} | {s[r]['generated']} | {s[r]['rejected']} |")
    L += ["", "## Planted artifacts: rank in the label's top 20 / z* (p̂(target|feature), n)", "",
          "| dataset | " + " | ".join(f"`{f}` → {l}" for f, l in PLANTED) + " |", "|---|---|---|---|"]
    zrows = []
    for ds, feats in stats["planted_z"].items():
        L.append(f"| {ds} | " + " | ".join(_cell(feats[f]) for f, _ in PLANTED) + " |")
        for f, l in PLANTED:
            zrows.append({"table": "planted_z", "dataset": ds, "feature": f, "label": l, **{
                k: feats[f][k] for k in ("z", "n", "p_target", "rank")}})
    L += ["", "Top-5 biased features per label after each recipe (Table 12 form) are in "
          "`zaug_report_<recipe>.md`; D0's and the outputs' top 3:", "",
          "| label | D0 | " + " | ".join(RECIPES) + " |", "|---|---|---|---|---|"]
    for label in LABELS:
        cells = [", ".join(f"`{n}` {z:.1f}" for n, z in stats["top5"][ds][label][:3]) for ds in ["D0", *RECIPES]]
        L.append(f"| {label} | " + " | ".join(cells) + " |")
    # the training table: nliforge-report's report.md
    L += ["", "## Training (tiny model, 3 seeds; accuracy %, mean ± std over seeds)", ""]
    L += [ln for ln in (exp / "report" / "report.md").read_text(encoding="utf-8").splitlines()
          if not ln.startswith("# ")]   # nliforge-report's own title
    per = {}
    for path in sorted((scratch / "sweep").glob("*/[0-9]*/metrics.csv")):
        for r in csv.DictReader(path.open(encoding="utf-8")):
            if r["metric"] == "acc":
                per.setdefault((r["train_id"], int(r["seed"])), {})[r["eval_set"]] = 100 * float(r["value"])
    sets = list(dict.fromkeys(s for v in per.values() for s in v))
    L += ["", "Per seed (acc %):", "", "| train set | seed | " + " | ".join(s.replace("synthetic_", "") for s in sets)
          + " |", "|---|---|" + "---|" * len(sets)]
    for (tid, seed), v in sorted(per.items(), key=lambda kv: (list(ROW_NAMES).index(kv[0][0])
                                                               if kv[0][0] in ROW_NAMES else 99, kv[0][1])):
        L.append(f"| {tid} | {seed} | " + " | ".join(f"{v.get(s, float('nan')):.1f}" for s in sets) + " |")
    with (exp / "results.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["table", "dataset", "feature", "label", "z", "n", "p_target", "rank"])
        w.writeheader()
        w.writerows(zrows)
        for v, c in stats["label_consistency"].items():
            w.writerow({"table": "label_consistency", "dataset": v, "feature": "teacher_agrees",
                        "z": c["teacher_agrees"], "n": c["samples"]})
    (exp / "results.md").write_text("\n".join(L) + "\n", encoding="utf-8")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:] or ["--help"]
    if cmd == "prepare":
        prepare(Path(args[0]), Path(args[1]), Path(args[2]))
    elif cmd == "results":
        results(Path(args[0]), Path(args[1]))
    else:
        sys.exit(__doc__)
