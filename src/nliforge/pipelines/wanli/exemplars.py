"""WANLI Stage 1 (§2.1): [CLS] vectors of the task model and same-label neighbours.

A seed's in-context group is its k = 4 nearest neighbours by cosine similarity of the task
model's last-layer first-token vector, among training examples with the seed's **gold label**,
ordered by increasing similarity with the seed itself last (Fig. 2). The search is exact and
batched: per label, query chunks are multiplied against that label's candidates with one
matrix product into a preallocated score buffer, then `torch.topk`; memory is bounded by the
buffer (`score_budget` floats), not by the number of queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from nliforge.errors import NLIDataError
from nliforge.utils.progress import progress as progress_bar

# Default score buffer: 2**26 float32 = 256 MiB, whatever the number of queries.
SCORE_BUDGET = 1 << 26
# Column block of the two-stage top-k (block maxima, then the best blocks only).
BLOCK = 64


@torch.no_grad()
def encode_cls(model, tokenizer, pairs: Sequence[tuple[str, str]], batch_size: int = 64,
               max_length: int = 128, device: str = "cpu", progress: bool = True) -> np.ndarray:
    """(N, d) float32 unit vectors: the last hidden layer at the first token (<s>/[CLS]).

    Pairs are encoded longest first (less padding, same result: padding is masked out) and
    returned in input order. The model runs in eval mode (no dropout) and is put back in its
    previous mode afterwards.
    """
    if batch_size < 1:
        raise NLIDataError(f"batch_size must be >= 1; got {batch_size}")
    order = sorted(range(len(pairs)), key=lambda i: -(len(pairs[i][0]) + len(pairs[i][1])))
    was_training = model.training
    model.to(device).eval()
    out: np.ndarray | None = None
    try:
        with progress_bar(total=len(pairs), desc="encode [CLS]", unit="pair", disable=not progress) as bar:
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                batch = tokenizer([pairs[i][0] for i in idx], [pairs[i][1] for i in idx], truncation=True,
                                  max_length=max_length, padding=True, return_tensors="pt").to(device)
                hidden = model(**batch, output_hidden_states=True).hidden_states[-1][:, 0]
                vec = torch.nn.functional.normalize(hidden.float(), dim=-1).cpu().numpy()
                if out is None:
                    out = np.empty((len(pairs), vec.shape[1]), dtype=np.float32)
                out[idx] = vec
                bar.update(len(idx))
    finally:
        model.train(was_training)
    if out is None:
        dim = int(getattr(model.config, "hidden_size", 0))
        return np.empty((0, dim), dtype=np.float32)
    return out


@dataclass(frozen=True)
class Neighbours:
    """Same-label nearest neighbours of each query, most similar first.

    `indices` (Q, k) int64 rows of `emb`, -1 for skipped queries; `sims` (Q, k) float32 cosine
    similarities, NaN for skipped; `skipped` (Q,) True where the query's label has fewer than k
    other examples.
    """

    queries: np.ndarray
    indices: np.ndarray
    sims: np.ndarray
    skipped: np.ndarray

    @property
    def n_skipped(self) -> int:
        return int(self.skipped.sum())


def _check_inputs(emb, labels, queries, k) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated float32 embeddings, label array and int64 query rows (NLIDataError otherwise)."""
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    if emb.ndim != 2:
        raise NLIDataError(f"embeddings must be 2-D (examples, dim); got shape {emb.shape}")
    labels = np.asarray(labels)
    if labels.shape != (emb.shape[0],):
        raise NLIDataError(f"expected one label per embedding ({emb.shape[0]}); got shape {labels.shape}")
    queries = np.asarray(queries, dtype=np.int64).reshape(-1)
    if queries.size and (queries.min() < 0 or queries.max() >= emb.shape[0]):
        raise NLIDataError(f"query indices must lie in 0..{emb.shape[0] - 1}")
    if k < 1:
        raise NLIDataError(f"k must be >= 1; got {k}")
    sq_norm = np.einsum("ij,ij->i", emb, emb)               # one pass, no (N, d) temporary
    bad = ~(np.abs(sq_norm - 1.0) <= 1e-3)                   # NaN/inf rows are bad too
    if bad.any():
        raise NLIDataError(f"embeddings must be finite L2-normalised rows (cosine = inner product); "
                           f"{int(bad.sum())} row(s) are not, e.g. row {int(np.argmax(bad))}")
    return emb, labels, queries


def same_label_neighbours(emb: np.ndarray, labels: Sequence, queries: Sequence[int], k: int = 4,
                          score_budget: int = SCORE_BUDGET, progress: bool = False) -> Neighbours:
    """Exact top-k cosine neighbours of each query among the other examples with its label.

    `emb` must hold L2-normalised rows (as from :func:`encode_cls`), so the inner product is the
    cosine. A query is never its own neighbour (excluded by index; an exact duplicate at another
    index is a neighbour). Ties go to the lower index. A query whose label has fewer than k other
    examples is skipped. The score buffer holds at most `score_budget` floats per label (query
    chunk = score_budget // candidates, at least 1).
    """
    emb, labels, queries = _check_inputs(emb, labels, queries, k)
    n_q = queries.shape[0]
    out_idx = np.full((n_q, k), -1, dtype=np.int64)
    out_sim = np.full((n_q, k), np.nan, dtype=np.float32)
    skipped = np.zeros(n_q, dtype=bool)
    q_labels = labels[queries]
    with progress_bar(total=n_q, desc="neighbours", unit="query", disable=not progress) as bar:
        for label in np.unique(q_labels):
            rows = np.flatnonzero(q_labels == label)
            cand = np.flatnonzero(labels == label)
            if cand.shape[0] - 1 < k:
                skipped[rows] = True
                bar.update(rows.shape[0])
                continue
            out_idx[rows], out_sim[rows] = _search_label(emb, cand, queries[rows], k, score_budget, bar)
    return Neighbours(queries, out_idx, out_sim, skipped)


def _search_label(emb: np.ndarray, cand: np.ndarray, queries: np.ndarray, k: int,
                  score_budget: int, bar) -> tuple[np.ndarray, np.ndarray]:
    """Top-k among `cand` (sorted rows of one label) for `queries` (rows with that label).

    Candidates are padded with zero rows to whole blocks of BLOCK columns; padding and each
    query's own column score -inf.
    """
    n_cand, width = cand.shape[0], -(-cand.shape[0] // BLOCK) * BLOCK
    base_np = np.zeros((width, emb.shape[1]), dtype=np.float32)
    np.take(emb, cand, axis=0, out=base_np[:n_cand])
    base = torch.from_numpy(base_np)
    self_pos = torch.from_numpy(np.searchsorted(cand, queries))
    chunk = max(1, min(queries.shape[0], score_budget // width))
    buf = torch.empty((chunk, width), dtype=torch.float32)
    idx_out = np.empty((queries.shape[0], k), dtype=np.int64)
    sim_out = np.empty((queries.shape[0], k), dtype=np.float32)
    for start in range(0, queries.shape[0], chunk):
        stop = min(start + chunk, queries.shape[0])
        scores = buf[:stop - start]
        torch.mm(torch.from_numpy(emb[queries[start:stop]]), base.T, out=scores)
        scores[:, n_cand:] = -torch.inf
        scores[torch.arange(stop - start), self_pos[start:stop]] = -torch.inf
        vals, pos = _block_topk(scores, k + 1)
        pos, vals = _break_ties(scores, vals, pos, k)
        idx_out[start:stop], sim_out[start:stop] = cand[pos], vals
        bar.update(stop - start)
    return idx_out, sim_out


def _block_topk(scores: torch.Tensor, kk: int) -> tuple[np.ndarray, np.ndarray]:
    """The kk best (values, columns) per row, sorted by value, via block maxima.

    A full `torch.topk` over the row costs ~15% of the matrix product at d = 1024; the maxima
    of BLOCK-wide blocks are one streaming pass, then only the kk best blocks are searched. Exact
    in values: any element outside those blocks is <= kk elements inside them.
    """
    rows, width = scores.shape
    block_max = scores.view(rows, width // BLOCK, BLOCK).amax(dim=2)
    _, blocks = torch.topk(block_max, min(kk, block_max.shape[1]), dim=1)
    cols = (blocks.unsqueeze(2) * BLOCK + torch.arange(BLOCK)).reshape(rows, -1)
    vals, where = torch.topk(torch.gather(scores, 1, cols), kk, dim=1)
    return vals.numpy(), torch.gather(cols, 1, where).numpy()


def _break_ties(scores: torch.Tensor, vals: np.ndarray, pos: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Order each row's top k by (decreasing score, increasing position), exactly.

    The top-k search may return any of several tied candidates. When the k-th and (k+1)-th best
    scores differ, the top-k set is unique and only its order needs fixing; when they tie, the
    row is recomputed from every candidate scoring at least the k-th value.
    """
    order = np.lexsort((pos[:, :k], -vals[:, :k]), axis=1)
    top_pos = np.take_along_axis(pos[:, :k], order, axis=1)
    top_val = np.take_along_axis(vals[:, :k], order, axis=1)
    for r in np.flatnonzero(vals[:, k - 1] == vals[:, k]):
        row = scores[r].numpy()
        tied = np.flatnonzero(row >= vals[r, k - 1])
        best = tied[np.lexsort((tied, -row[tied]))][:k]
        top_pos[r], top_val[r] = best, row[best]
    return top_pos, top_val


def exemplar_groups(neighbours: Neighbours) -> tuple[list[list[int]], int]:
    """In-context groups (rows of `emb`) for the non-skipped queries, plus the skip count.

    Each group is the k neighbours by increasing similarity (the reverse of the search order,
    so among equal similarities the higher index comes first) followed by the seed itself, last,
    as in the paper's prompt. Groups follow the order of `neighbours.queries`.
    """
    groups = [[int(i) for i in row[::-1]] + [int(q)]
              for q, row, skip in zip(neighbours.queries, neighbours.indices, neighbours.skipped) if not skip]
    return groups, neighbours.n_skipped
