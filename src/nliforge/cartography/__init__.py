"""Dataset cartography: record training dynamics, compute data-map metrics, select, plot.

``TrainingDynamicsCallback`` is imported lazily so that analysis-only users (metrics,
selection, plots on saved dynamics) do not pay for importing Lightning, and ``plot_data_map`` so that
users of the selection alone (a generation run) do not pay for matplotlib.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from nliforge.cartography.metrics import (
    METRIC_COLUMNS, NEVER_LEARNED, compute_metrics, confidence, correctness, estimated_max_variability,
    forgetfulness, gold_probs, threshold_closeness, variability,
)
from nliforge.cartography.select import REGIONS, region_size, select_by_quantile, select_region
from nliforge.cartography.store import EPOCH_COLUMNS, PROB_COLUMNS, Dynamics, frame_to_parquet_bytes, load_dynamics
from nliforge.utils.atomic import atomic_write_bytes

__all__ = [
    "Dynamics", "load_dynamics", "EPOCH_COLUMNS", "PROB_COLUMNS", "METRIC_COLUMNS", "NEVER_LEARNED",
    "compute_metrics", "confidence", "variability", "correctness", "forgetfulness",
    "threshold_closeness", "estimated_max_variability", "gold_probs",
    "REGIONS", "region_size", "select_region", "select_by_quantile", "plot_data_map",
    "TrainingDynamicsCallback", "MODES", "summarize",
]


def __getattr__(name: str):
    """Import the Lightning callback and the plot (matplotlib) on first use only."""
    if name in ("TrainingDynamicsCallback", "MODES"):
        from nliforge.cartography import recorder

        return getattr(recorder, name)
    if name == "plot_data_map":
        from nliforge.cartography.plot import plot_data_map

        return plot_data_map
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def summarize(out_dir: str | os.PathLike, plot_path: str | os.PathLike | None = None,
              allow_missing: bool = False, title: str = "Data map",
              never_learned: int = NEVER_LEARNED) -> pd.DataFrame:
    """Load a run's dynamics, write ``out_dir/metrics.parquet`` (and the data map if asked).

    Called by the train entry point at the end of a run. Returns the metrics frame
    (indexed by uid). ``metrics.parquet`` is rewritten on each call: it is derived data.
    `never_learned`: forgetfulness of an example never predicted correctly (1000, as cartography).
    """
    metrics = compute_metrics(load_dynamics(out_dir, allow_missing=allow_missing), never_learned)
    atomic_write_bytes(Path(out_dir) / "metrics.parquet", frame_to_parquet_bytes(metrics, index=True))
    if plot_path is not None:
        from nliforge.cartography.plot import plot_data_map

        plot_data_map(metrics, plot_path, title=title)
    return metrics
