"""R2 (experiments/real_text/README.md): artifacts of real MNLI / SNLI pairs.

R2a/R2b: hypothesis-only accuracy against the majority class of the test set; the interval is a percentile
bootstrap over the test examples (the bootstrap of a mean of 0/1 correctness depends only on the count
correct and n, which metrics.csv gives). R2c: z-statistics (nliforge.filtering.zstats, the App. B feature
space of nliforge.filtering.features) of hypothesis unigrams; Bonferroni over every hypothesis-unigram x
label test. R2d: z-filtered vs same-size random subset, paired by training seed, t-interval
(nliforge.evaluation.differences.seed_difference)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from nliforge.data.labels import LABELS
from nliforge.evaluation.differences import seed_difference
from nliforge.filtering.zstats import bonferroni_threshold, dataset_counts, top_biased, z_scores

from experiments.real_text.common import boot_idx, fmt, interval, load_named, row, run_acc, run_dirs, seed_status, verdict

NEGATION = {"no", "not", "never", "nobody", "nothing"}   # and any token ending in n't (the tokenizer keeps
                                                         # "don't" whole, so n't is never a token by itself)
ACC_ARMS = (("R2a", "r2a", "mnli_dev_test_part"), ("R2b", "r2b", "snli_cad_original_test"))


def majority(eval_set: str | list) -> tuple[float, str, int]:
    """(share, label, n) of the most frequent gold label of an eval set (by name, or its records)."""
    counts = Counter(r.label for r in (load_named(eval_set) if isinstance(eval_set, str) else eval_set))
    label, c = counts.most_common(1)[0]
    n = sum(counts.values())
    return c / n, label, n


def acc_interval(acc: float, n: int, seed: int) -> tuple[float, float]:
    """Bootstrap interval over examples of an accuracy from n examples."""
    k = int(round(acc * n))
    correct = np.r_[np.ones(k), np.zeros(n - k)]
    return interval(correct[boot_idx(n, seed)].mean(1))


def hyp_only(scratch: Path) -> tuple[list[dict], list[str]]:
    rows, lines = [], ["## R2a, R2b: hypothesis-only MiniLM against the majority class", "",
                       "Accuracy % [95% bootstrap over test examples, 1,000 resamples].", "",
                       "| criterion | trained on -> tested on | majority | seed 1 | seed 2 | seed 3 | verdict |",
                       "|---|---|---|---|---|---|---|"]
    for crit, arm, test in ACC_ARMS:
        base, label, n = majority(test)
        rows.append(row(crit, arm, "-", f"majority_{label}", base, note=f"n={n}"))
        cells, statuses = [], []
        for s, run in run_dirs(scratch, arm).items():
            acc, n_run = run_acc(run, test)
            lo, hi = acc_interval(acc, n_run, s)
            rows.append(row(crit, arm, s, f"acc_{test}", acc, lo, hi))
            cells.append(fmt(acc, lo, hi, 100, 1))
            statuses.append(seed_status(lo, hi, base))
        v = verdict(statuses)
        rows.append(row(crit, arm, "all", "verdict", np.nan, note=v))
        cells += ["not run"] * (3 - len(cells))
        train = "mnli_dev_train_part" if arm == "r2a" else "snli_cad_original"
        lines.append(f"| {crit} | {train} -> {test} | {base * 100:.1f} ({label}) | " + " | ".join(cells) + f" | **{v}** |")
    return rows, lines + [""]


def unigram_z(name: str | list) -> tuple[pd.DataFrame, float, float]:
    """Hypothesis unigrams of a training set (by name, or its records): n, count and z per label; the
    Bonferroni z over the unigram x label tests and, for reference, over every feature x label test of the
    whole App. B space."""
    records = load_named(name) if isinstance(name, str) else name
    counts, names = dataset_counts(records)
    seen = counts.sum(1) > 0
    keep = np.array([nm.endswith("@hypothesis") and " " not in nm for nm in names]) & seen
    sub, sub_names = counts[keep], [nm for nm, k in zip(names, keep) if k]
    z = z_scores(sub)
    frame = pd.DataFrame({"feature": [nm.removesuffix("@hypothesis") for nm in sub_names], "n": sub.sum(1)})
    for li, lab in enumerate(LABELS):
        frame[f"count_{lab}"], frame[f"z_{lab}"] = sub[:, li], z[:, li]
    thr_uni = bonferroni_threshold(0.05, int(keep.sum()) * len(LABELS))
    thr_all = bonferroni_threshold(0.05, int(seen.sum()) * len(LABELS))
    top = top_biased(sub, list(frame["feature"]), k=10)
    frame.attrs["top"], frame.attrs["pairs"] = top, len(records)
    return frame, thr_uni, thr_all


def is_negation(word: str) -> bool:
    return word in NEGATION or word.endswith("n't")


def zstats(name: str, crit: str) -> tuple[list[dict], list[str], list, float]:
    frame, thr, thr_all = unigram_z(name)
    by = frame.set_index("feature")
    rows, lines = [], [f"### {name} ({frame.attrs['pairs']} pairs; "
                       f"{len(frame)} hypothesis unigrams; Bonferroni z > {thr:.2f} over their "
                       f"{len(frame) * 3} tests, {thr_all:.2f} over every App. B feature)", "",
                       "| rank | " + " | ".join(f"{lab}: feature (n, count, z)" for lab in LABELS) + " |",
                       "|---|---|---|---|"]
    top = frame.attrs["top"]
    for i in range(10):
        cells = []
        for lab in LABELS:
            w, z = top[lab][i]
            f = by.loc[w]
            cells.append(f"{w} ({int(f['n'])}, {int(f[f'count_{lab}'])}, {z:.2f})")
            rows.append(row(crit, name, "-", f"top{i + 1}_{lab}:{w}", z, note=f"n={int(f['n'])} count={int(f[f'count_{lab}'])}"))
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    neg = [(w, z) for w, z in top["contradiction"] if is_negation(w) and z > thr]
    rows.append(row(crit, name, "-", "bonferroni_z_unigrams", thr, note=f"all-features threshold {thr_all:.3f}"))
    return rows, lines + [""], neg, thr


def r2c() -> tuple[list[dict], list[str]]:
    rows, lines = [], ["## R2c: z-statistics of hypothesis unigrams (top 10 per label)", ""]
    neg = None
    for name in ("mnli_dev_train_part", "snli_cad_original"):
        r, l, found, thr = zstats(name, "R2c")
        rows += r
        lines += l
        if name == "mnli_dev_train_part":
            neg = found
    v = "reproduced" if neg else "not shown"
    rows.append(row("R2c", "mnli_dev_train_part", "all", "verdict", np.nan, note=f"{v}; negation words {neg}"))
    lines += [f"**R2c** (MNLI: a negation word among the top 10 for contradiction with z above Bonferroni): "
              f"{', '.join(f'{w} (z {z:.2f})' for w, z in neg) or 'none'} -> **{v}**", ""]
    return rows, lines


def r2d(scratch: Path) -> tuple[list[dict], list[str]]:
    kept = sum(1 for ln in (scratch / "zfilter" / "dataset.jsonl").open() if ln.strip())
    rows = [row("R2d", "zfilter", "-", "kept", kept, note="of 6918")]
    lines = ["## R2d: z-filtering of mnli_dev_train_part against a same-size random subset", "",
             f"z-filtering (unconditional Z(input), k 20, batch 1,000) kept **{kept}** of 6,918 pairs; the random "
             f"subset: {kept} pairs, limit_seed = the training seed. Accuracy % on mnli_dev_test_part; "
             "difference = filtered - random, paired by seed, mean [95% t-interval].", "",
             "| input | z-filtered (seeds 1, 2, 3) | random (seeds 1, 2, 3) | difference | verdict |", "|---|---|---|---|---|"]
    for arm, label in (("r2d_hyp", "hypothesis only"), ("r2d_full", "full input")):
        acc = {}
        for side in ("zf", "random"):
            runs = run_dirs(scratch, f"{arm}_{side}")
            acc[side] = pd.Series({s: run_acc(r, "mnli_dev_test_part")[0] for s, r in runs.items()}, dtype=float)
            for s, a in acc[side].items():
                rows.append(row("R2d", f"{arm}_{side}", s, "acc_mnli_dev_test_part", a))
        shared = sorted(set(acc["zf"].index) & set(acc["random"].index))
        if len(shared) < 3:
            v, diff_text = f"not tested ({len(shared)} of 3 seed pairs ran)", "–"
        else:
            d = seed_difference(acc["zf"][shared], acc["random"][shared])
            rows.append(row("R2d", arm, "all", "diff_zf_minus_random", d["diff"], d["ci_low"], d["ci_high"]))
            diff_text = fmt(d["diff"], d["ci_low"], d["ci_high"], 100, 1)
            if arm == "r2d_hyp":
                v = "reproduced" if d["ci_high"] < 0 else ("contradicted" if d["ci_low"] > 0 else "not shown")
            else:
                v = "reported (no criterion)"
        rows.append(row("R2d", arm, "all", "verdict", np.nan, note=v))
        cell = {k: ", ".join(f"{a * 100:.1f}" for a in s.values) or "not run" for k, s in acc.items()}
        lines.append(f"| {label} | {cell['zf']} | {cell['random']} | {diff_text} | **{v}** |")
    return rows, lines + [""]
