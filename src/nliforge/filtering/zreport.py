"""The Table 12-style report (Z-Aug) of the most biased features of a dataset (and their z) before and
after z-filtering, with their significance and plots; the filtering itself is `zfilter`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.utils.atomic import atomic_write_text

ALPHA = 0.01  # family-wise level of the significance column (Gardner et al.'s plots use 0.01)


class _ZTable(NamedTuple):
    """One dataset featurised once: counts (features x labels), names, Bonferroni bar, size."""

    counts: np.ndarray
    names: list[str]
    threshold: float
    size: int


def _z_table(records: Sequence[Record]) -> _ZTable:
    """Counts over the App. B features and the Bonferroni bar over the seen features x labels."""
    from nliforge.filtering.zstats import bonferroni_threshold, dataset_counts

    counts, names = dataset_counts(records)
    seen = int((counts.sum(axis=1) > 0).sum())
    return _ZTable(counts, names, bonferroni_threshold(ALPHA, seen * counts.shape[1]), len(records))


def _top(counts: np.ndarray, names: Sequence[str], k: int, top: int) -> dict[str, list[list]]:
    from nliforge.filtering.zstats import top_biased

    return {label: [[name, round(z, 2)] for name, z in feats[:top]]
            for label, feats in top_biased(counts, names, k=k).items()}


Counts = tuple[np.ndarray, Sequence[str]]  # (features x labels) counts and the feature names


def _summed(a: Counts, b: Counts) -> tuple[np.ndarray, list[str]]:
    """The counts of two datasets together, aligned by feature name (each example's features are its
    own, so this equals featurising the union, without featurising either dataset again)."""
    names = list(dict.fromkeys([*a[1], *b[1]]))
    index = {name: i for i, name in enumerate(names)}
    counts = np.zeros((len(names), a[0].shape[1]), dtype=np.int64)
    for part, part_names in (a, b):
        np.add.at(counts, [index[n] for n in part_names], part)
    return counts, names


def _tracked(before: dict, after: _ZTable) -> dict:
    """For each of D0's top features: z before, z after (None if unseen), rank after, significant after."""
    from nliforge.filtering.zstats import z_scores

    z, n = z_scores(after.counts), after.counts.sum(axis=1)
    index = {name: i for i, name in enumerate(after.names)}
    out = {}
    for label, feats in before.items():
        li = LABELS.index(label)
        col = np.nan_to_num(z[:, li], nan=-np.inf)
        rows = []
        for name, z_before in feats:
            i = index.get(name)
            if i is None or n[i] == 0:
                rows.append([name, z_before, None, None, False])
                continue
            rank = int((col > col[i]).sum()) + 1  # ties share the best rank
            rows.append([name, z_before, round(float(z[i, li]), 2), rank, bool(z[i, li] > after.threshold)])
        out[label] = rows
    return out


def feature_standing(records: Sequence[Record], features: dict[str, Sequence[str]]) -> dict[str, list]:
    """Where named features stand in a dataset, per label: [name, z, rank, significant] each (z and
    rank None if unseen); rank and significance as in the report's table."""
    tracked = _tracked({label: [(name, None) for name in names] for label, names in features.items()},
                       _z_table(records))
    return {label: [[row[0], *row[2:]] for row in rows] for label, rows in tracked.items()}


def _rates(counts: np.ndarray, names: Sequence[str], features: dict[str, list]) -> dict[str, list[list]]:
    """For each label's named features: [n, p̂(label | feature)] in a dataset's counts (p̂ None if unseen)."""
    index = {name: i for i, name in enumerate(names)}
    out = {}
    for label, feats in features.items():
        li, rows = LABELS.index(label), []
        for name, _ in feats:
            i = index.get(name)
            n = int(counts[i].sum()) if i is not None else 0
            rows.append([n, round(float(counts[i, li]) / n, 3) if n else None])
        out[label] = rows
    return out


def _generated_rates(d0: _ZTable, samples: Sequence[Record], gen: Counts,
                     before: dict[str, list]) -> dict[str, list[list]]:
    """Does generation keep D0's biases, and does the confidence filter concentrate them? For each
    of D0's top features: [name, [n, p̂] in D0, in every parsed sample, in the samples above τ
    (`gen`: their counts and names)]."""
    from nliforge.filtering.zstats import dataset_counts

    tables = [_rates(d0.counts, d0.names, before), _rates(*dataset_counts(samples, single_label_ok=True), before),
              _rates(*gen, before)]
    return {label: [[name, *(t[label][j] for t in tables)] for j, (name, _) in enumerate(feats)]
            for label, feats in before.items()}


def biased_report(d0: Sequence[Record], gen: Sequence[Record], kept: Sequence[Record], top: int = 5,
                  k: int = 20, out: Path | None = None, recipe: str = "", plots_dir: Path | None = None,
                  samples: Sequence[Record] | None = None, plot_note: str = "") -> dict:
    """Top-`top` biased features per label (name, z) of D0, of D0 + the generations unfiltered, and
    of the filtered output; whether each of D0's top features is still in the output's top-k; and
    whether it is still significant (one-sided z test at family-wise α = 0.01, Bonferroni over every
    seen feature x label of the dataset), before and after. With `plots_dir`, also the plots of
    `write_bias_plots`, from the same counts.

    Algorithm 1 rejects a feature's instances only while the feature is in B(l), so a feature that
    keeps arriving settles near the edge of the top k rather than leaving it: the significance
    column says whether its correlation with the label is still distinguishable from chance.
    With `samples` (every parsed sample of the filtered variant, `gen` being those above τ), also
    `generated_rates`: D0's top features' [n, p̂(label | feature)] in D0, in the samples, above τ."""
    from nliforge.filtering.zstats import dataset_counts

    before, after = _z_table(d0), _z_table(kept)
    gen_counts = dataset_counts(gen, single_label_ok=True)
    tables = {"before": _top(before.counts, before.names, k, top),
              "naive_augmentation": _top(*_summed((before.counts, before.names), gen_counts), k, top),
              "after": _top(after.counts, after.names, k, k)}
    gone = {label: [name for name, _ in feats if name not in {n for n, _ in tables["after"][label]}]
            for label, feats in tables["before"].items()}
    tables["after"] = {label: feats[:top] for label, feats in tables["after"].items()}
    significance = {"alpha": ALPHA, "threshold_before": round(before.threshold, 3),
                    "threshold_after": round(after.threshold, 3), "tracked": _tracked(tables["before"], after)}
    report = {**tables, "gone_from_top_k": gone, "significance": significance, "k": k, "recipe": recipe,
              "sizes": {"d0": len(d0), "generated": len(gen), "output": len(kept)}}
    if samples:
        report["generated_rates"] = _generated_rates(before, samples, gen_counts, tables["before"])
        report["sizes"]["samples"] = len(samples)
    if out is not None:
        atomic_write_text(out, [render_markdown(report)])
    if plots_dir is not None:
        _plot_tables(before, after, plots_dir, plot_note)
    return report


def write_bias_plots(d0: Sequence[Record], kept: Sequence[Record], out_dir: Path, note: str = "") -> list[Path]:
    """`bias_<label>.png` per label: D0 and the filtered output side by side, Gardner-style (n against
    p̂(label | feature)), each with its own Bonferroni significance curve (α = 0.01); `note` is drawn on
    each figure (a stand-in generator's output says so)."""
    return _plot_tables(_z_table(d0), _z_table(kept), out_dir, note)


def _plot_tables(before: _ZTable, after: _ZTable, out_dir: Path, note: str = "") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nliforge.filtering.zstats import draw_word_label
    from nliforge.utils.atomic import save_figure
    from nliforge.utils.figures import add_note

    paths = []
    for label in LABELS:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
        for ax, title, table in zip(axes, ("D0", "after z-filtering"), (before, after)):
            draw_word_label(ax, table.counts, label, table.threshold, names=table.names, annotate=3,
                            title=f"{title}: {table.size} examples")
        add_note(fig, note)
        paths.append(save_figure(fig, Path(out_dir) / f"bias_{label}.png", dpi=120, bbox_inches="tight"))
    return paths


def render_markdown(report: dict) -> str:
    """The report as Markdown: one table per label, Table 12 of Z-Aug in form."""
    sizes = report["sizes"]
    lines = [f"# Biased features before and after z-filtering ({report['recipe']})", "",
             f"D0: {sizes['d0']} examples; generated (after the confidence filter): {sizes['generated']}; "
             f"output: {sizes['output']}. z* with p0 = 1/3; B(l) = top {report['k']} per label.", ""]
    for label in report["before"]:
        lines += [f"## {label}", "", "| rank | D0 | D0 + generated, unfiltered | after z-filtering |", "|---|---|---|---|"]
        cols = [report["before"][label], report["naive_augmentation"][label], report["after"][label]]
        for i in range(max(len(c) for c in cols)):
            cells = [f"`{c[i][0]}` ({c[i][1]:.1f})" if i < len(c) else "" for c in cols]
            lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
        gone = report["gone_from_top_k"][label]
        lines += ["", f"D0's top features no longer in the output's top {report['k']}: "
                  + (", ".join(f"`{g}`" for g in gone) or "none"), ""]
        lines += _significance_lines(report, label)
        lines += _generated_lines(report, label)
    return "\n".join(lines) + "\n"


def _generated_lines(report: dict, label: str) -> list[str]:
    rates = report.get("generated_rates")
    if not rates:
        return []

    def cell(rate):
        return "unseen" if rate[1] is None else f"{rate[1]:.2f} (n {rate[0]})"

    lines = [f"D0's top features in the generated samples: p̂({label} | feature) and n; p0 = 0.33 is no bias:", "",
             "| feature | D0 | every parsed sample | above τ (filtered) |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {cell(a)} | {cell(b)} | {cell(c)} |" for name, a, b, c in rates[label]]
    return lines + [""]


def _significance_lines(report: dict, label: str) -> list[str]:
    sig = report.get("significance")
    if not sig:
        return []
    lines = [f"D0's top features in the output (significant: z* > {sig['threshold_after']:.2f}, one-sided, "
             f"α = {sig['alpha']:g} Bonferroni-corrected; in D0 the bar was {sig['threshold_before']:.2f}):", "",
             "| feature | z in D0 | z after | rank after | significant after |", "|---|---|---|---|---|"]
    for name, z_before, z_after, rank, significant in sig["tracked"][label]:
        after = "unseen" if z_after is None else f"{z_after:.1f}"
        lines.append(f"| `{name}` | {z_before:.1f} | {after} | {rank or '-'} | {'yes' if significant else 'no'} |")
    return lines + [""]
