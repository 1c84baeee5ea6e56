"""What a run folder publishes, and its Hub layout: one Parquet file per split under `data/`, with
the label columns as `ClassLabel`, so `datasets.load_dataset(<folder or repo>)` gives the label names.

The set is the run's final dataset (`<run>/dataset.jsonl`, written by nliforge-generate from the last
stage) or its reviewed set (`<run>/review/reviewed.jsonl`, written by `nliforge-review aggregate`).
It is the `train` split; more splits may be named as JSONL files of the data model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.data.labels import ALL_GOLD_LABELS, LABELS
from nliforge.data.records import Record
from nliforge.utils.atomic import read_json_file

SETS = ("auto", "final", "reviewed")
FINAL = "dataset.jsonl"
REVIEWED = Path("review") / "reviewed.jsonl"
REVIEW_REPORT = Path("review") / "review_report.json"
COLUMNS = ("uid", "premise", "hypothesis", "label", "intended_label", "source", "meta")


@dataclass
class PublishedSet:
    """The records to publish, by split, and where they came from."""

    kind: str                                   # "final" or "reviewed"
    path: Path                                  # the train split's JSONL
    splits: dict[str, list[Record]]
    review: dict = field(default_factory=dict)  # review_report.json of a reviewed set


def data_file(split: str) -> str:
    """The Parquet file of a split, named as `datasets.push_to_hub` names its shards."""
    return f"data/{split}-00000-of-00001.parquet"


def choose_set(run: Path, which: str) -> tuple[str, Path]:
    """`set=auto` takes the reviewed set when the run has one, else the final dataset."""
    if which not in SETS:
        raise NLIDataError(f"set={which!r}; valid: {', '.join(SETS)}")
    reviewed, final = run / REVIEWED, run / FINAL
    if which == "reviewed" or (which == "auto" and reviewed.is_file()):
        if not reviewed.is_file():
            raise NLIDataError(f"{reviewed}: no reviewed set; run `nliforge-review aggregate run={run}` first "
                               "or publish the final dataset with set=final")
        return "reviewed", reviewed
    if not final.is_file():
        raise NLIDataError(f"{final}: the run has no final dataset; run nliforge-generate to its last stage first")
    return "final", final


def load_set(run: Path, which: str, manifest: Mapping, extra: Mapping[str, str] | None = None) -> PublishedSet:
    """Read the chosen set as the `train` split (checked against the manifest's count) and any extra
    splits (`splits={name: file.jsonl}`)."""
    kind, path = choose_set(run, which)
    records = read_jsonl(path)
    recorded = (manifest.get("final") or {}).get("count")
    if kind == "final" and recorded is not None and recorded != len(records):
        raise NLIDataError(f"{path}: {len(records)} records, but manifest.json says the final stage wrote "
                           f"{recorded}; the file is stale or edited, re-run nliforge-generate")
    splits = {"train": records}
    for name, other in (extra or {}).items():
        if name == "train" or not str(name).replace("_", "").isalnum():
            raise NLIDataError(f"splits.{name}: a split name is letters, digits and _, and not 'train' "
                               "(train is the published set)")
        splits[str(name)] = read_jsonl(Path(str(other)))
    review = {}
    if kind == "reviewed" and (run / REVIEW_REPORT).is_file():
        review = read_json_file(run / REVIEW_REPORT)
    return PublishedSet(kind, path, splits, review)


def label_names(splits: Mapping[str, list[Record]]) -> list[str]:
    """entailment, neutral, contradiction (the ids nliforge uses), then any 2-class gold name present."""
    seen = {name for recs in splits.values() for r in recs for name in (r.label, r.meta.get("intended_label"))}
    return list(LABELS) + [name for name in ALL_GOLD_LABELS if name in seen and name not in LABELS]


def features(names: list[str]):
    """The columns' Arrow/`datasets` types; `meta` (free-form provenance per record) is a JSON string,
    since its keys differ between pipelines and Parquet needs one schema."""
    from datasets import ClassLabel, Features, Value

    return Features({"uid": Value("string"), "premise": Value("string"), "hypothesis": Value("string"),
                     "label": ClassLabel(names=names), "intended_label": ClassLabel(names=names),
                     "source": Value("string"), "meta": Value("string")})


def columns(records: list[Record]) -> dict[str, list]:
    """Records as columns; an unlabeled record's label is null (so is a missing intended label)."""
    return {"uid": [r.uid for r in records], "premise": [r.premise for r in records],
            "hypothesis": [r.hypothesis for r in records], "label": [r.label for r in records],
            "intended_label": [r.meta.get("intended_label") for r in records],
            "source": [r.source for r in records],
            "meta": [json.dumps(r.meta, ensure_ascii=False, sort_keys=True) for r in records]}


def write_split(records: list[Record], names: list[str], path: Path) -> dict:
    """Write one split's Parquet file; returns its example count and sizes (for the card's dataset_info)."""
    import pyarrow.parquet as pq
    from datasets import Dataset

    ds = Dataset.from_dict(columns(records), features=features(names))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(ds.data.table, path)          # the schema's metadata carries the features (ClassLabel names)
    return {"num_examples": len(ds), "num_bytes": ds.data.nbytes, "file_bytes": path.stat().st_size}
