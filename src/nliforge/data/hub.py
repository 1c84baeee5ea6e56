"""Loaders for Hugging Face Hub datasets, mapped by label name into Records.

Offline (HF_DATASETS_OFFLINE / HF_HUB_OFFLINE set), a dataset that is not in the local cache
fails at once with DatasetNotCachedError instead of retrying the network.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tqdm.auto import tqdm

from nliforge.data.errors import DatasetNotCachedError, NLIDataError
from nliforge.data.labels import SOURCE_LABEL_MAPS, map_label
from nliforge.data.records import Record

# Known Hub sources: default path, fields and label map. A set's YAML may override any of these.
HUB_SOURCES: dict[str, dict[str, Any]] = {
    "mnli": {"path": "nyu-mll/multi_nli", "label_map": "mnli",
             "fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "label", "uid": "pairID"}},
    "snli": {"path": "stanfordnlp/snli", "label_map": "snli",
             "fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"}},
    "anli": {"path": "facebook/anli", "label_map": "anli",
             "fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "label", "uid": "uid"}},
    "wanli": {"path": "alisawuffles/WANLI", "label_map": "wanli",
              "fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "gold", "uid": "id"}},
    # Nie et al. (2019) FEVER-NLI as mirrored on the Hub (columns cid, fid, premise, hypothesis,
    # verifiable, fever_gold_label, label; splits train/dev/test, test unlabelled). `cid` can repeat
    # across evidence rows, so uids come from the row index. A Hub discussion on the mirror asks
    # whether premise and hypothesis are swapped (the claim should be the hypothesis): check
    # before relying on it, and swap with `fields` if needed.
    "fever_nli": {"path": "pietrolesci/nli_fever", "label_map": "fever_nli",
                  "fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"}},
}


def hf_offline() -> bool:
    return any(os.environ.get(k, "").lower() in ("1", "true", "yes") for k in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"))


def _load_hf(path: str, config: str | None, split: str, where: str):
    import datasets

    try:
        return datasets.load_dataset(path, config, split=split)
    except Exception as err:  # noqa: BLE001 - re-raised with the set named
        if hf_offline():
            raise DatasetNotCachedError(
                f"{where}: Hub dataset {path!r} (config {config!r}, split {split!r}) is not in the local "
                f"cache and offline mode is on (HF_DATASETS_OFFLINE/HF_HUB_OFFLINE); download it once "
                f"with network access, or point the set at a local file. ({type(err).__name__})"
            ) from None
        raise NLIDataError(f"{where}: could not load Hub dataset {path!r} split {split!r}: {err}") from err


def load_hub_records(spec: Mapping[str, Any], where: str) -> list[Record]:
    """Load one split of a Hub (or local HF-loadable) dataset into Records."""
    source = spec.get("source") or spec["name"]
    defaults = HUB_SOURCES.get(source, {})
    path = spec.get("path") or defaults.get("path")
    if not path:
        raise NLIDataError(f"{where}.path: no Hub id given and {source!r} is not a known source; "
                           f"known: {', '.join(HUB_SOURCES)}")
    fields = {**defaults.get("fields", {}), **dict(spec.get("fields") or {})}
    label_map = spec.get("label_map") or defaults.get("label_map")
    split = spec.get("split", "train")
    table = _load_hf(path, spec.get("config"), split, where)
    missing = [f"{k}={v}" for k, v in fields.items() if k != "uid" and v not in table.column_names]
    if missing:
        raise NLIDataError(f"{where}.fields: columns {missing} not in {path} (has {table.column_names})")
    limit = spec.get("limit")
    n = len(table) if limit is None else min(int(limit), len(table))
    records = []
    cols = {k: table[v][:n] for k, v in fields.items() if v in table.column_names}
    table = _label_table(label_map, where)
    for i in tqdm(range(n), desc=f"load {spec['name']}", disable=n < 50_000, mininterval=2):
        raw = cols["label"][i]
        if raw not in table:
            _raise_unmapped(label_map, raw, f"{where} ({path} row {i})")
        label = table[raw]
        if label is None:  # no gold label (SNLI -1): dropped, as every paper does
            continue
        uid = f"{spec['name']}-{split}-{cols['uid'][i] if 'uid' in cols else i}"
        records.append(Record(uid, cols["premise"][i], cols["hypothesis"][i], label, spec["name"],
                              {"hub": path, "split": split, "row": i}))
    return records


def _label_table(label_map, where: str) -> dict:
    """Raw label -> canonical name, resolved once per load (a source's name or an explicit mapping)."""
    if isinstance(label_map, str):
        if label_map not in SOURCE_LABEL_MAPS:
            map_label(label_map, None, where)  # raises, listing the known sources
        return SOURCE_LABEL_MAPS[label_map]
    return {(int(k) if isinstance(k, str) and k.lstrip("-").isdigit() else k): v for k, v in label_map.items()}


def _raise_unmapped(label_map, raw: object, where: str) -> None:
    if isinstance(label_map, str):
        map_label(label_map, raw, where)  # raises with the source's valid labels
    table = _label_table(label_map, where)
    raise NLIDataError(f"{where}: label {raw!r} is not covered by label_map; it maps {list(table)}")
