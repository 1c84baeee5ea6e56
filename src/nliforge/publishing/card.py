"""The dataset card (README.md) of a published set: the Hub's YAML header (license, task, language,
size, sources, `configs` with the split files and `dataset_info` with the features) built with
huggingface_hub's DatasetCardData and datasets' own writers (the ones `push_to_hub` uses), and a
provenance section written from the run's manifest and config.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from nliforge.publishing.dataset_files import PublishedSet, data_file
from nliforge.publishing.provenance import provenance_markdown

# datasets/utils/resources/size_categories.json, with each bucket's upper bound (exclusive).
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"))


def size_category(n: int) -> str:
    """The Hub's size_categories bucket of n examples."""
    return next((name for bound, name in SIZE_CATEGORIES if n < bound), "n>1B")


def card_data(meta: Mapping, chosen: PublishedSet, names: list[str], sizes: Mapping[str, Mapping]):
    """DatasetCardData: the settings of `card` in conf/publish.yaml, the size bucket, and the `configs`
    and `dataset_info` entries that `datasets.load_dataset` reads."""
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    from nliforge.publishing.dataset_files import features

    total = sum(s["num_examples"] for s in sizes.values())
    data = DatasetCardData(
        license=meta["license"], language=list(meta["language"]), task_categories=list(meta["task_categories"]),
        task_ids=list(meta["task_ids"]), size_categories=[size_category(total)],
        source_datasets=list(meta["source_datasets"]), pretty_name=meta["pretty_name"], tags=list(meta["tags"]))
    info = DatasetInfo(config_name="default", features=features(names), splits=SplitDict(),
                       download_size=sum(s["file_bytes"] for s in sizes.values()),
                       dataset_size=sum(s["num_bytes"] for s in sizes.values()))
    for split, s in sizes.items():
        info.splits.add(SplitInfo(name=split, num_bytes=s["num_bytes"], num_examples=s["num_examples"]))
    info.size_in_bytes = info.download_size + info.dataset_size
    DatasetInfosDict({"default": info}).to_dataset_card_data(data)
    MetadataConfigs({"default": {"data_files": [{"split": split, "path": data_file(split)} for split in sizes]}}
                    ).to_dataset_card_data(data)
    return data


def _label_table(chosen: PublishedSet, names: list[str]) -> str:
    lines = ["| split | examples | " + " | ".join(f"label: {n}" for n in names) + " | label: none | "
             + " | ".join(f"intended: {n}" for n in names) + " |", "|---" * (2 * len(names) + 3) + "|"]
    for split, recs in chosen.splits.items():
        gold = Counter(r.label for r in recs)
        wanted = Counter(r.meta.get("intended_label") for r in recs)
        cells = [str(gold[n]) for n in names] + [str(gold[None])] + [str(wanted[n]) for n in names]
        lines.append(f"| {split} | {len(recs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def card_body(meta: Mapping, chosen: PublishedSet, names: list[str], manifest: Mapping, config: Mapping,
              run: Path) -> str:
    """The card's Markdown: what the set is, its fields, label counts, then the provenance."""
    which = ("the reviewed set (`review/reviewed.jsonl`, nliforge-review aggregate)" if chosen.kind == "reviewed"
             else f"the final dataset (`dataset.jsonl`, stage `{(manifest.get('final') or {}).get('stage', '?')}`)")
    unlabeled = sum(r.label is None for recs in chosen.splits.values() for r in recs)
    note = (f"\n{unlabeled} records have no label (`label` is null): generated, not reviewed; `intended_label` is "
            "the relation the generator was asked for, which nobody checked.\n" if unlabeled else "")
    return "\n".join([
        f"# {meta['pretty_name']}", "",
        f"Natural language inference pairs made with nliforge's `{manifest.get('pipeline', '?')}` pipeline: "
        f"{which} of the run folder `{run.name}`.", "",
        "## Fields", "",
        "- `uid` (string): unique within the set",
        "- `premise`, `hypothesis` (string)",
        f"- `label` (ClassLabel: {', '.join(f'{i} {n}' for i, n in enumerate(names))}; null = unlabeled)",
        "- `intended_label` (ClassLabel, same names): the label the generator was asked to produce, when any",
        "- `source` (string): the pipeline's source tag",
        "- `meta` (string): the record's provenance as JSON (seed and neighbour uids, generator, scores, ...)", "",
        "## Labels", "", _label_table(chosen, names), note,
        provenance_markdown(manifest, config, chosen.review), ""])


def write_card(path: Path, meta: Mapping, chosen: PublishedSet, names: list[str], sizes: Mapping[str, Mapping],
               manifest: Mapping, config: Mapping, run: Path) -> str:
    """Write README.md (YAML header + body) and return its text."""
    data = card_data(meta, chosen, names, sizes)
    text = f"---\n{data.to_yaml()}\n---\n\n{card_body(meta, chosen, names, manifest, config, run)}"
    path.write_text(text, encoding="utf-8")
    return text
