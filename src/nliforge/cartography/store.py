"""On-disk format of training dynamics: one parquet file per epoch plus ``meta.json``.

Kept free of torch/lightning imports so that analysis code (metrics, selection, plots) can
load dynamics without pulling in a training stack.

Layout of ``out_dir``::

    epoch_000.parquet   columns uid (str), gold (int64, -1 = unlabeled),
                        p_entailment, p_neutral, p_contradiction (float32), sorted by uid
    epoch_001.parquet   ...
    meta.json           mode, num_labels, labels, epochs written, examples per epoch
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nliforge.data.jsonl import atomic_write_text
from nliforge.data.labels import LABELS
from nliforge.utils.atomic import read_json_file

log = logging.getLogger(__name__)

PROB_COLUMNS: tuple[str, ...] = tuple(f"p_{name}" for name in LABELS)
EPOCH_COLUMNS: tuple[str, ...] = ("uid", "gold") + PROB_COLUMNS
META_NAME = "meta.json"
FORMAT_NAME = "nliforge.training_dynamics"
_EPOCH_RE = re.compile(r"^epoch_(\d{3,})\.parquet$")


@dataclass
class Dynamics:
    """Per-epoch label probabilities of N examples, aligned by uid.

    ``probs[e, i, c]`` is p(label c | example uids[i]) after epoch ``epochs[e]``;
    ``gold[i]`` is the gold id (0 e, 1 n, 2 c) or -1 when the example is unlabeled.
    """

    uids: list[str]
    gold: np.ndarray
    probs: np.ndarray
    epochs: list[int]
    mode: str | None = None


def epoch_path(out_dir: str | os.PathLike, epoch: int) -> Path:
    """Path of one epoch's file; zero-padded so that names sort by epoch."""
    return Path(out_dir) / f"epoch_{epoch:03d}.parquet"


def list_epoch_files(out_dir: str | os.PathLike) -> dict[int, Path]:
    """Epoch number -> file for every ``epoch_NNN.parquet`` in ``out_dir``."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return {}
    found = {}
    for child in out_dir.iterdir():
        match = _EPOCH_RE.match(child.name)
        if match:
            found[int(match.group(1))] = child
    return dict(sorted(found.items()))


def epoch_frame(uids: list[str], gold: np.ndarray, probs: np.ndarray) -> pd.DataFrame:
    """One epoch's table in the file format: last row wins for a repeated uid, sorted by uid."""
    frame = pd.DataFrame({"uid": pd.Series(uids, dtype=object).astype(str),
                          "gold": np.asarray(gold, dtype=np.int64)})
    probs = np.asarray(probs, dtype=np.float32)
    for j, col in enumerate(PROB_COLUMNS):
        frame[col] = probs[:, j]
    frame = frame.drop_duplicates("uid", keep="last")
    return frame.sort_values("uid", kind="mergesort").reset_index(drop=True)


def frame_to_parquet_bytes(frame: pd.DataFrame, index: bool = False) -> bytes:
    """Serialise a DataFrame to parquet bytes (pyarrow), for `nliforge.utils.atomic`'s writers."""
    import io

    buf = io.BytesIO()
    frame.to_parquet(buf, index=index, engine="pyarrow")
    return buf.getvalue()


def read_meta(out_dir: str | os.PathLike) -> dict:
    """Contents of ``meta.json``, or an empty dict when there is none yet."""
    path = Path(out_dir) / META_NAME
    if not path.exists():
        return {}
    return read_json_file(path)


def update_meta(out_dir: str | os.PathLike, mode: str, epoch: int, num_examples: int) -> dict:
    """Rewrite ``meta.json`` (atomically) so that it lists every epoch file present."""
    meta = read_meta(out_dir)
    counts = dict(meta.get("num_examples", {}))
    counts.setdefault(str(epoch), int(num_examples))
    meta.update({
        "format": FORMAT_NAME, "version": 1, "mode": mode, "num_labels": len(LABELS),
        "labels": list(LABELS), "epochs": list(list_epoch_files(out_dir)),
        "num_examples": dict(sorted(counts.items(), key=lambda kv: int(kv[0]))),
    })
    atomic_write_text(Path(out_dir) / META_NAME, [json.dumps(meta, indent=2) + "\n"])
    return meta


def _read_epoch(path: Path) -> pd.DataFrame:
    """Read and check one epoch file: required columns, no repeated uid."""
    frame = pd.read_parquet(path)
    missing = [c for c in EPOCH_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}; expected {list(EPOCH_COLUMNS)}")
    frame["uid"] = frame["uid"].astype(str)
    if frame["uid"].duplicated().any():
        dup = frame.loc[frame["uid"].duplicated(), "uid"].iloc[0]
        raise ValueError(f"{path}: uid {dup!r} appears more than once")
    frame["gold"] = frame["gold"].fillna(-1).astype(np.int64)
    return frame.set_index("uid")


def load_dynamics(out_dir: str | os.PathLike, allow_missing: bool = False) -> Dynamics:
    """Load every epoch file of ``out_dir`` into one aligned :class:`Dynamics`.

    Uids are sorted. An epoch lacking uids that another epoch has is an error naming the
    file, unless ``allow_missing``: then only uids present in every epoch are kept (warned).
    """
    files = list_epoch_files(out_dir)
    if not files:
        raise FileNotFoundError(f"no epoch_NNN.parquet files in {out_dir}")
    frames = {epoch: _read_epoch(path) for epoch, path in files.items()}
    union = sorted(set().union(*(f.index for f in frames.values())))
    union_set = set(union)
    common = set(union)
    problems = []
    for epoch, frame in frames.items():
        lacking = union_set.difference(frame.index)
        if lacking:
            problems.append(f"{files[epoch]} lacks {len(lacking)} uid(s) other epochs have, "
                            f"e.g. {sorted(lacking)[:3]}")
        common &= set(frame.index)
    if problems and not allow_missing:
        raise ValueError("; ".join(problems) + "; pass allow_missing=True to keep the intersection")
    uids = [u for u in union if u in common]
    if len(uids) < len(union):
        log.warning("%s: dropped %d uid(s) missing from some epoch", out_dir, len(union) - len(uids))
    return _align(frames, uids, files, read_meta(out_dir).get("mode"))


def _align(frames: dict[int, pd.DataFrame], uids: list[str], files: dict[int, Path],
           mode: str | None) -> Dynamics:
    """Stack the epochs' probabilities in ``uids`` order; gold must agree across epochs."""
    epochs = list(frames)
    gold = frames[epochs[0]].loc[uids, "gold"].to_numpy(np.int64)
    probs = np.empty((len(epochs), len(uids), len(PROB_COLUMNS)), dtype=np.float64)
    for e, epoch in enumerate(epochs):
        sub = frames[epoch].loc[uids]
        if not np.array_equal(sub["gold"].to_numpy(np.int64), gold):
            raise ValueError(f"{files[epoch]}: gold labels differ from {files[epochs[0]]}")
        probs[e] = sub[list(PROB_COLUMNS)].to_numpy(np.float64)
    return Dynamics(uids=list(uids), gold=gold, probs=probs, epochs=epochs, mode=mode)
