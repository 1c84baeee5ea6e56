"""nliforge-analyze: dataset analyses of WANLI §4.1 on any JSONL file of records.

    nliforge-analyze stats          data.jsonl --out DIR
    nliforge-analyze partial-input  data.jsonl --out DIR [--eval other.jsonl] [--equal-size N] [--pair]
    nliforge-analyze word-label     data.jsonl --out DIR [--threshold 3 | --alpha 0.01] [--balance]
    nliforge-analyze similarity     data.jsonl --out DIR [--model minilm] [--format parquet]
    nliforge-analyze data-map       DYNAMICS_DIR --out DIR
    nliforge-analyze label-following gen.jsonl [gen2.jsonl ...] --judge DIR [...] --heldout held.jsonl [...]
                                     --out DIR

Each subcommand writes its files into --out and prints a short summary. A plain argparse tool
rather than a Hydra entry point: every analysis is one input file and a few flags, with no
config composition to gain. `main(argv)` is what tests call.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.utils.system_errors import system_errors

PROG = "nliforge-analyze"


def load_records(path: str | Path, what: str = "input", overrides: Sequence[str] = ()):
    """Records of a JSONL file, or of a training set registered under data/train_sets (by name,
    e.g. `synthetic_biased`, composed with the `train` config and any Hydra `overrides` such as
    `world.n_train=2000`); a missing input says what kind of input was expected."""
    from nliforge.data.jsonl import read_jsonl
    from nliforge.data.registry import find_set_yaml

    path = Path(path)
    if path.is_file():
        return read_jsonl(path)
    if path.suffix == "" and find_set_yaml(path.name, "train_sets") is not None:
        return named_train_set(path.name, overrides)
    raise NLIDataError(f"{what} {path}: file not found; expected a JSONL file of records "
                       "(one JSON object per line with uid, premise, hypothesis, label) "
                       "or the name of a set in conf/data/train_sets")


def named_train_set(name: str, overrides: Sequence[str] = ()):
    """The records nliforge-train would train on with `data/train_sets=[name]` and these overrides."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from nliforge.data.training_set import build_training_set
    from nliforge.utils.cli import CONF_DIR, with_user_config_path
    from nliforge.utils.home import user_conf_dir

    GlobalHydra.instance().clear()
    overrides = with_user_config_path([f"data/train_sets=[{name}]", *overrides], extra=[user_conf_dir(create=True)])
    try:
        with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
            cfg = compose("train", overrides=overrides)
    finally:
        GlobalHydra.instance().clear()
    return build_training_set(cfg).records


def _labels(text: str) -> tuple[str, ...]:
    labels = tuple(s.strip() for s in text.split(",") if s.strip())
    if len(labels) < 2:
        raise argparse.ArgumentTypeError(f"--labels needs at least two names, got {text!r}")
    return labels


def cmd_stats(args) -> None:
    from nliforge.analysis.stats import dataset_stats, stats_markdown, write_stats

    stats = dataset_stats(load_records(args.input, overrides=args.override), where=str(args.input))
    paths = write_stats(stats, args.out, name=args.name or Path(args.input).stem)
    print(stats_markdown(stats, args.name or Path(args.input).stem), end="")
    print(f"wrote {paths['json']} and {paths['markdown']}")


def cmd_partial_input(args) -> None:
    from nliforge.analysis.partial_input import partial_input_baselines
    from nliforge.utils.atomic import atomic_write_text

    views = ["hypothesis", "premise"] + (["pair"] if args.pair else [])
    result = partial_input_baselines(
        load_records(args.input, overrides=args.override), load_records(args.eval, "--eval") if args.eval else None,
        views=views, balance=not args.no_balance, equal_size=args.equal_size,
        test_fraction=args.test_fraction, seed=args.seed, tfidf=not args.counts,
        labels=args.labels, where=str(args.input), eval_where=str(args.eval))
    out = atomic_write_text(Path(args.out) / "partial_input.json",
                            [json.dumps(result.to_dict(), indent=2) + "\n"])
    accs = ", ".join(f"{view} {acc:.3f}" for view, acc in result.accuracy.items())
    print(f"partial-input accuracy: {accs} (majority {result.majority:.3f}; "
          f"n_train {result.n_train}, n_test {result.n_test})")
    print(f"wrote {out}")


def cmd_word_label(args) -> None:
    from nliforge.analysis.word_label import word_label_correlations, write_word_label

    result = word_label_correlations(
        load_records(args.input, overrides=args.override), side=args.side, threshold=args.threshold, alpha=args.alpha,
        min_count=args.min_count, balance=args.balance, seed=args.seed, labels=args.labels,
        where=str(args.input))
    paths = write_word_label(result, args.out, annotate=args.annotate)
    print(f"{len(result.names)} {args.side} words, z* threshold {result.threshold:.3f}: "
          f"{len(result.significant)} (word, label) pairs above it")
    for word, label, n, _, p, z in result.significant[:10]:
        print(f"  {word:<16} {label:<14} n={n:<6} p={p:.2f} z={z:.1f}")
    print(f"wrote {paths['csv']} and {len(result.labels)} plots in {args.out}")


def cmd_similarity(args) -> None:
    from nliforge.analysis.similarity import (
        load_encoder, similarity_frame, summarize_by_label, write_similarity,
    )

    records = load_records(args.input, overrides=args.override)
    frame = similarity_frame(records, load_encoder(args.model, args.device), args.batch_size)
    paths = write_similarity(frame, args.out, fmt=args.format,
                             title=f"premise-hypothesis similarity: {Path(args.input).stem}")
    print(summarize_by_label(frame).round(3).to_string())
    print(f"wrote {paths['similarities']}, {paths['summary']} and {paths['plot']}")


def cmd_data_map(args) -> None:
    from nliforge.analysis.stats import write_data_map

    paths = write_data_map(args.input, args.out, title=args.title, allow_missing=args.allow_missing)
    print(f"data map of {paths['n']} examples: wrote {paths['plot']} and {paths['metrics']}")


def cmd_label_following(args) -> None:
    from nliforge.analysis.label_following import classifier_judge, measure_set, over_worlds
    from nliforge.utils.atomic import atomic_write_text

    n = len(args.input)
    judges, heldouts = _per_input(args.judge, n, "--judge"), _per_input(args.heldout, n, "--heldout")
    results, rows = [], []
    for path, judge, held in zip(args.input, judges, heldouts):
        records = load_records(path)
        result, judged, acc = measure_set(records, classifier_judge(judge), load_records(held, "--heldout"), str(path))
        results.append(result)
        rows.append({"input": str(path), "judge": str(judge), "heldout": str(held), "judge_accuracy": acc,
                     **result.to_dict(), "judged": {r.uid: lab for r, lab in zip(records, judged)}})
        print(f"{path}: {result.n} pairs, label-following raw {result.raw:.3f}, corrected {result.corrected:.3f} "
              f"(judge accuracy on held-out {acc:.3f}, condition {result.condition:.1f})")
    summary = over_worlds(results)
    if n > 1:
        for key, e in summary.items():
            print(f"over {n} worlds: {key} {e['estimate']:.3f} [{e['low']:.3f}, {e['high']:.3f}] (95% t)")
    out = atomic_write_text(Path(args.out) / "label_following.json",
                            [json.dumps({"per_world": rows, "over_worlds": summary}, indent=1) + "\n"])
    print(f"wrote {out}")


def _per_input(values: list[str], n: int, flag: str) -> list[str]:
    """One value per input (a single value serves every input)."""
    if len(values) not in (1, n):
        raise NLIDataError(f"{flag}: {len(values)} values for {n} inputs; give one, or one per input")
    return values * n if len(values) == 1 else values


def _add_label_following(subs) -> None:
    s = subs.add_parser("label-following", help="share of generated pairs whose judge label is the intended one")
    s.add_argument("input", nargs="+", help="generated JSONL file(s) with meta.intended_label; one per world")
    s.add_argument("--out", required=True, help="folder the outputs are written into")
    s.add_argument("--judge", nargs="+", required=True,
                   help="classifier folder(s) (an nliforge-train run or its model/): one, or one per input")
    s.add_argument("--heldout", nargs="+", required=True,
                   help="held-out JSONL with gold labels for the judge's confusion matrix: one, or one per input")
    s.set_defaults(func=cmd_label_following)


def _add_common(sub, input_help: str):
    sub.add_argument("input", help=input_help)
    sub.add_argument("--out", required=True, help="folder the outputs are written into")
    sub.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                     help="Hydra override when input names a training set, e.g. world.n_train=2000 (repeatable)")


def _add_partial_input(subs, jsonl: str, labels: dict) -> None:
    s = subs.add_parser("partial-input", help="hypothesis-only / premise-only baselines")
    _add_common(s, jsonl)
    s.add_argument("--eval", help="held-out JSONL (default: a seeded stratified split of input)")
    s.add_argument("--equal-size", type=int, help="subsample the training part to N examples")
    s.add_argument("--no-balance", action="store_true", help="keep the label distribution as is")
    s.add_argument("--pair", action="store_true", help="also train on premise+hypothesis")
    s.add_argument("--test-fraction", type=float, default=0.2)
    s.add_argument("--counts", action="store_true", help="raw n-gram counts instead of TF-IDF")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--labels", **labels)
    s.set_defaults(func=cmd_partial_input)


def _add_word_label(subs, jsonl: str, labels: dict) -> None:
    s = subs.add_parser("word-label", help="word-label z* correlations and Gardner plots")
    _add_common(s, jsonl)
    s.add_argument("--side", choices=("hypothesis", "premise"), default="hypothesis")
    s.add_argument("--threshold", type=float, default=3.0, help="z* threshold (default 3)")
    s.add_argument("--alpha", type=float, help="Bonferroni: threshold from alpha / number of words")
    s.add_argument("--min-count", type=int, default=1)
    s.add_argument("--balance", action="store_true", help="downsample labels to the rarest first")
    s.add_argument("--annotate", type=int, default=8, help="label the N highest-z words per plot")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--labels", **labels)
    s.set_defaults(func=cmd_word_label)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser with one subcommand per analysis."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    subs = parser.add_subparsers(dest="command", required=True)
    jsonl = "JSONL file of records (uid, premise, hypothesis, label), or a training-set name (synthetic_biased)"
    labels = dict(type=_labels, default=LABELS, help="comma-separated label names (default e,n,c)")

    s = subs.add_parser("stats", help="size, labels, lengths, overlap, duplicates, vocabulary")
    _add_common(s, jsonl)
    s.add_argument("--name", help="dataset name in the table (default: file stem)")
    s.set_defaults(func=cmd_stats)
    _add_partial_input(subs, jsonl, labels)
    _add_word_label(subs, jsonl, labels)

    s = subs.add_parser("similarity", help="premise-hypothesis cosine similarity per label")
    _add_common(s, jsonl)
    s.add_argument("--model", default="minilm",
                   help="'minilm' (packaged all-MiniLM-L6-v2, offline) or a sentence-transformers id/folder")
    s.add_argument("--device", help="cpu, cuda ... (default: sentence-transformers' choice)")
    s.add_argument("--batch-size", type=int, default=64)
    s.add_argument("--format", choices=("csv", "parquet"), default="csv")
    s.set_defaults(func=cmd_similarity)

    s = subs.add_parser("data-map", help="data map PNG of a training-dynamics folder")
    _add_common(s, "training-dynamics folder (epoch_NNN.parquet, written by callbacks.dynamics)")
    s.add_argument("--title", default="Data map")
    s.add_argument("--allow-missing", action="store_true",
                   help="keep only uids present in every epoch instead of failing")
    s.set_defaults(func=cmd_data_map)
    _add_label_following(subs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; bad input exits with status 2 and a one-line message naming it."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with system_errors():
            args.func(args)
    except NLIDataError as err:
        parser.exit(2, f"{PROG} {args.command}: error: {err}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
