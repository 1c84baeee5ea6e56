"""The real-LM Z-Aug table (README, Z-Aug with SmolLM2) from the run folders of `zaug_run.sh`.

    python -m experiments.real_lm.zaug_table --scratch /tmp/nliforge_exp/real_lm_zaug --out zaug_table.md

Per generator (scratch / smollm2), variant (ul: λ = 0.5, mle: λ = 0) and seed: parsed samples,
agreement of the teacher (trained on D0, the paper's set-up; read from the `confidence` stage) and of
an oracle scorer (trained on the unbiased world split; measurement only), and each planted artifact
in the samples twice: z of the z-filter's feature for its label (`feature_standing`), and the world's
own definition (P(target | feature), prevalence; `measure_artifact`). Then mean ± std over seeds and
the paired difference ul − mle with a 95% t interval (n = 3: 2 degrees of freedom).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

import pandas as pd

from nliforge.data.labels import LABELS
from nliforge.evaluation.differences import seed_difference
from nliforge.data.records import Record
from nliforge.engine.classifier import ClassifierRun
from nliforge.engine.run_folder import RunFolder
from nliforge.filtering.zreport import feature_standing
from nliforge.world.artifacts import ARTIFACTS, measure_artifact

GENERATORS = {"scratch": "tiny GPT-2 from scratch", "smollm2": "SmolLM2-135M-Instruct fine-tuned",
              "meaninit_smollm2": "SmolLM2, label tokens mean-resized (first run)"}
Z_FEATURES = {"entailment": "full-lex-overlap", "neutral": "hypo-len:10-14", "contradiction": "not@hypothesis"}


def measure_run(run: Path, oracle: ClassifierRun) -> dict[str, dict]:
    """variant -> the numbers of one generator run (None where no sample parsed, or z where one label only)."""
    folder = RunFolder(run)
    consistency = folder.stage_entry("confidence").get("extra", {}).get("label_consistency", {})
    rows, out = folder.read_rows("zaug_sample"), {}
    for variant in ("ul", "mle"):
        recs = [Record(r["uid"], r["premise"], r["hypothesis"], r["label"]) for r in rows if r["variant"] == variant]
        out[variant] = {"parsed": len(recs), "teacher": consistency.get(variant, {}).get("teacher_agrees"),
                        "oracle": None, "z": {label: None for label in Z_FEATURES},
                        "world": {name: (None, None) for name in ARTIFACTS}}
        if not recs:
            continue
        probs = oracle.final_probs([(r.premise, r.hypothesis) for r in recs])
        out[variant]["oracle"] = sum(LABELS[int(p.argmax())] == r.label for p, r in zip(probs, recs)) / len(recs)
        world = {name: measure_artifact(recs, name) for name in ARTIFACTS}
        out[variant]["world"] = {name: (m["p_target_given_feature"], m["p_feature"]) for name, m in world.items()}
        if len({r.label for r in recs}) > 1:  # z measures label skew: it needs two labels
            standing = feature_standing(recs, {label: [name] for label, name in Z_FEATURES.items()})
            out[variant]["z"] = {label: standing[label][0][1] for label in Z_FEATURES}
    return out


def mean_sd(values: list[float], digits: int = 3) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.{digits}f} ± {sd:.{digits}f}"


def paired_interval(a: list[float], b: list[float]) -> str:
    """mean of a − b with a 95% t interval over the paired seeds, as `nliforge-report baseline=`
    computes it (evaluation.differences.seed_difference)."""
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if not pairs:
        return "–"
    d = seed_difference(pd.Series([x for x, _ in pairs]), pd.Series([y for _, y in pairs]))
    if math.isnan(d["ci_low"]):
        return f"{d['diff']:+.3f}"
    return f"{d['diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"


def d0_row(d0: list[Record]) -> str:
    """The planted artifacts in D0 itself, the reference the samples are read against."""
    standing = feature_standing(d0, {label: [name] for label, name in Z_FEATURES.items()})
    zs = [f"{standing[label][0][1]:.1f}" for label in Z_FEATURES]
    world = [f"{m['p_target_given_feature']:.3f} / {m['p_feature']:.3f}"
             for m in (measure_artifact(d0, name) for name in ARTIFACTS)]
    return "| D0 (training data) | – | " + " | ".join(zs + world) + " |"


def render(results: dict[str, dict[int, dict]], n_train: int, d0: str = "", per_seed: str = "zaug_table.json") -> str:
    lines = ["# Z-Aug generator: pretrained (SmolLM2) vs from scratch, λ = 0.5 vs 0 (3 seeds)", "",
             f"D0 = {n_train} biased world pairs. Samples: whole instances, temperature 1, top_p 1.", "",
             "## Label consistency (mean ± std over seeds; Δ = ul − mle, paired by seed, 95% t interval)", "",
             "| generator | variant | parsed | teacher agrees (biased teacher) | oracle agrees |",
             "|---|---|---|---|---|"]
    for gen, seeds in results.items():
        for variant in ("ul", "mle"):
            per = [seeds[s][variant] for s in sorted(seeds)]
            lines.append(f"| {GENERATORS[gen]} | {variant} | {mean_sd([p['parsed'] for p in per], 0)} | "
                         f"{mean_sd([p['teacher'] for p in per])} | {mean_sd([p['oracle'] for p in per])} |")
        ul, mle = ([seeds[s][v] for s in sorted(seeds)] for v in ("ul", "mle"))
        lines.append(f"| {GENERATORS[gen]} | **Δ ul − mle** | | {paired_interval([p['teacher'] for p in ul], [p['teacher'] for p in mle])} | "
                     f"{paired_interval([p['oracle'] for p in ul], [p['oracle'] for p in mle])} |")
    lines += ["", "## Planted artifacts in the samples (mean ± std over seeds)", "",
              "z: the z-filter feature's z for its label; world: P(target | feature) / prevalence, by the world's own "
              "definition (any negation word, full overlap, long hypothesis).", "",
              "| generator | variant | " + " | ".join(f"z {Z_FEATURES[l]}" for l in Z_FEATURES) + " | "
              + " | ".join(f"world {n}" for n in ARTIFACTS) + " |", "|---" * (2 + len(Z_FEATURES) + len(ARTIFACTS)) + "|", d0]
    for gen, seeds in results.items():
        for variant in ("ul", "mle"):
            per = [seeds[s][variant] for s in sorted(seeds)]
            zs = [mean_sd([p["z"][l] for p in per]) for l in Z_FEATURES]
            world = [f"{mean_sd([p['world'][n][0] for p in per])} / {mean_sd([p['world'][n][1] for p in per])}"
                     for n in ARTIFACTS]
            lines.append(f"| {GENERATORS[gen]} | {variant} | " + " | ".join(zs + world) + " |")
    lines += ["", f"Per seed: `{per_seed}`."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    oracle = ClassifierRun(args.scratch / "oracle")
    results: dict[str, dict[int, dict]] = {}
    for run in sorted(args.scratch.glob("*_s[0-9]*")):
        gen, seed = run.name.rsplit("_s", 1)
        if RunFolder(run).is_done("zaug_sample"):
            results.setdefault(gen, {})[int(seed)] = measure_run(run, oracle)
    d0 = [r for r in ClassifierRun(args.scratch / "teacher").train_records() if r.label is not None]
    args.out.write_text(render(results, len(d0), d0_row(d0), args.out.with_suffix(".json").name))
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
