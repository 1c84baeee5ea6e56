"""Loaders for Hugging Face Hub datasets, mapped by label name into Records.

Offline (HF_DATASETS_OFFLINE / HF_HUB_OFFLINE set), a dataset that is not in the local cache
fails at once with DatasetNotCachedError instead of retrying the network.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any


from nliforge.data.checks import check_text_field, max_field_chars
from nliforge.errors import DatasetNotCachedError, NLIDataError
from nliforge.data.labels import SOURCE_LABEL_MAPS, map_label
from nliforge.data.records import Record
from nliforge.utils.progress import progress as progress_bar

log = logging.getLogger(__name__)

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
    # HANS (McCoy et al. 2019): `validation` is the 30,000-pair evaluation set; 0 e, 1 non-entailment.
    # heuristic/subcase/template go to meta for per-heuristic scores.
    "hans": {"path": "jhu-cogsci/hans", "label_map": "hans",
             "fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"},
             "meta_fields": ["heuristic", "subcase", "template"]},
    # GLUE configs (nyu-mll/glue). QNLI: WANLI uses premise = sentence, hypothesis = question.
    "glue_qnli": {"path": "nyu-mll/glue", "label_map": "qnli",
                  "fields": {"premise": "sentence", "hypothesis": "question", "label": "label", "uid": "idx"}},
    # WNLI's ids are reversed: 0 not_entailment, 1 entailment.
    "glue_wnli": {"path": "nyu-mll/glue", "label_map": "wnli",
                  "fields": {"premise": "sentence1", "hypothesis": "sentence2", "label": "label", "uid": "idx"}},
    "glue_rte": {"path": "nyu-mll/glue", "label_map": "rte",
                 "fields": {"premise": "sentence1", "hypothesis": "sentence2", "label": "label", "uid": "idx"}},
    # BIG-bench tasks as used by lm-eval-harness (`hails/bigbench`, config `<task>_zero_shot`):
    # premise and hypothesis are parsed out of `inputs`; the gold label is `targets[0]` (a name).
    "bigbench": {"path": "hails/bigbench", "label_map": "nli_names",
                 "fields": {"label": "targets", "uid": "idx"}},
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


def hub_id(spec: Mapping[str, Any], where: str) -> str:
    """The set's Hub id (or local folder): its YAML's `path`, else its source's default."""
    source = spec.get("source") or spec["name"]
    path = spec.get("path") or HUB_SOURCES.get(source, {}).get("path")
    if not path:
        raise NLIDataError(f"{where}.path: no Hub id given and {source!r} is not a known source; "
                           f"known: {', '.join(HUB_SOURCES)}")
    return path


def hub_table(spec: Mapping[str, Any], where: str):
    """One split of a set's Hub dataset as an HF `Dataset` (memory-mapped), with its Hub id and split:
    what `load_hub_records` reads, and what a run checks for before hours of training (offline, a set
    that is not cached raises DatasetNotCachedError naming it)."""
    path, split = hub_id(spec, where), spec.get("split", "train")
    return _load_hf(path, spec.get("config"), split, where), path, split


def load_hub_records(spec: Mapping[str, Any], where: str) -> list[Record]:
    """Load one split of a Hub (or local HF-loadable) dataset into Records."""
    source = spec.get("source") or spec["name"]
    defaults = HUB_SOURCES.get(source, {})
    table, path, split = hub_table(spec, where)
    limit = spec.get("limit")
    n = len(table) if limit is None else min(int(limit), len(table))
    resolved = resolve_source(spec, defaults)
    wanted = {*resolved["fields"].values(), *resolved["meta_fields"]}
    if resolved["parse"]:
        wanted.add(resolved["parse"].get("column"))
    columns = {c: table[c][:n] for c in table.column_names if c in wanted}
    return columns_to_records(spec, where, columns, table.column_names, n, resolved,
                              {"hub": path, "split": split}, f"{path} row")


def resolve_source(spec: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Fields, label map, meta fields and parse rule of a set: its YAML over its source's defaults."""
    parse = spec.get("parse", defaults.get("parse"))
    fields = {**defaults.get("fields", {}), **dict(spec.get("fields") or {})}
    if parse:  # premise and hypothesis come out of one text column
        fields = {k: v for k, v in fields.items() if k not in ("premise", "hypothesis")}
    return {"fields": fields, "label_map": spec.get("label_map") or defaults.get("label_map"),
            "meta_fields": list(spec.get("meta_fields", defaults.get("meta_fields")) or []),
            "parse": dict(parse) if parse else None}


def columns_to_records(spec: Mapping[str, Any], where: str, columns: Mapping[str, Sequence[Any]],
                       column_names: Sequence[str], n: int, resolved: Mapping[str, Any],
                       meta: Mapping[str, Any], row_name: str, row_lines: Sequence[int] | None = None,
                       shown_path: str | None = None) -> list[Record]:
    """Map n rows of named columns into Records by the set's fields, label map and parse rule.

    Every row is checked as a JSONL record is (data/checks.py): a missing, null or over-long premise or
    hypothesis is refused at `path:line` (`row_lines`, for files) or `<row_name> i`. Rows with an empty
    text are dropped, with one warning saying how many and where the first is."""
    fields, label_map, parse = resolved["fields"], resolved["label_map"], resolved["parse"]
    needed = [f"{k}={v}" for k, v in fields.items() if k != "uid" and v not in column_names]
    if parse and parse.get("column") not in column_names:
        needed.append(f"parse.column={parse.get('column')}")
    if needed:
        raise NLIDataError(f"{where}.fields: columns {needed} not in {meta.get('hub') or shown_path or meta.get('file')} "
                           f"(has {list(column_names)})")
    if label_map is None:
        raise NLIDataError(f"{where}.label_map: no label map given and the source has none; "
                           f"name one of {', '.join(sorted(SOURCE_LABEL_MAPS))} or give raw -> name")
    pattern = None
    if parse:
        try:
            pattern = re.compile(str(parse["pattern"]), re.DOTALL)
        except (KeyError, re.error) as err:
            raise NLIDataError(f"{where}.parse.pattern: needs a regex with groups (?P<premise>..) and "
                               f"(?P<hypothesis>..): {err}") from None
    cols = {k: columns[v] for k, v in fields.items() if v in columns}
    meta_cols = {k: columns[k] for k in resolved["meta_fields"] if k in columns}
    table = _label_table(label_map, where)
    split, prefix = meta.get("split", ""), spec.get("uid_prefix") or spec["name"]
    limit_chars, empty, no_gold = max_field_chars(spec), [], []
    records = []
    for i in progress_bar(range(n), desc=f"load {spec['name']}", disable=n < 50_000, mininterval=2):
        at = f"{shown_path or meta.get('file')}:{row_lines[i]}" if row_lines is not None else f"{where} ({row_name} {i})"
        raw = cols["label"][i]
        if isinstance(raw, (list, tuple)):  # BIG-bench `targets`: the first target is the gold one
            raw = raw[0] if raw else None
        if raw not in table:
            _raise_unmapped(label_map, raw, at)
        label = table[raw]
        if label is None:  # no gold label (SNLI -1, MNLI's `-`): dropped, as every paper does, and counted
            no_gold.append((at, raw))
            continue
        if pattern is not None:
            text = columns[parse["column"]][i]
            found = pattern.search(text or "")
            if found is None:
                raise NLIDataError(f"{where}.parse.pattern: no match in {row_name} {i} "
                                   f"column {parse['column']!r}: {str(text)[:120]!r}")
            premise, hypothesis = found.group("premise").strip(), found.group("hypothesis").strip()
        else:
            premise, hypothesis = cols["premise"][i], cols["hypothesis"][i]
        if isinstance(premise, str) and isinstance(hypothesis, str) and not (premise.strip() and hypothesis.strip()):
            empty.append(at)
            continue
        check_text_field(premise, "premise", at, limit_chars)
        check_text_field(hypothesis, "hypothesis", at, limit_chars)
        uid = f"{prefix}-{split}-{cols['uid'][i] if 'uid' in cols else i}" if split else \
            f"{prefix}-{cols['uid'][i] if 'uid' in cols else i}"
        row_meta = {**meta, "row": i, **{k: v[i] for k, v in meta_cols.items()}}
        records.append(Record(uid, premise, hypothesis, label, spec["name"], row_meta))
    if empty:
        log.warning("%s: dropped %d row(s) with an empty premise or hypothesis (first at %s)", where, len(empty), empty[0])
    if no_gold:
        log.info("%s: dropped %d row(s) without a gold label (label %r, first at %s), as the papers do", where,
                 len(no_gold), no_gold[0][1], no_gold[0][0])
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
