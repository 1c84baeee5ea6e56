"""Task-independent features of NLI pairs (Z-Aug, App. B) as a sparse example x feature matrix.

These are the features z-statistics measure (`zstats.py`) and z-filtering removes (`zfilter.py`):
cues that give a label away without solving the task. Every feature is binary (present or not).

Tokenizer: lowercase, then the regex words of `nliforge.world.artifacts` (`[a-z0-9]+('[a-z]+)?%?`,
punctuation dropped), so the world's planted artifacts are exactly expressible as features.

Feature names (`n` = number of tokens):
- `w@premise`, `w@hypothesis`: unigrams; `w1 w2@premise`, `w1 w2@hypothesis`: bigrams (within a
  side, never across); premise and hypothesis n-grams are different features.
- `hypo-len<5`, `hypo-len:5-7`, `hypo-len:8-9`, `hypo-len:10-14`, `hypo-len:15-19`,
  `hypo-len>=20`: hypothesis length bins (HYPO_LEN_EDGES).
- `len-ratio<0.25`, `len-ratio:0.25-0.5`, ... `len-ratio>=1.5`: n(hypothesis) / n(premise), bins
  half-open [a, b) (LEN_RATIO_EDGES); a premise without tokens counts as the top bin.
- lexical overlap r = share of hypothesis tokens (positions) whose word occurs in the premise
  (0 for an empty hypothesis): `lex-overlap<0.2`, `lex-overlap:0.2-0.5`, then the cumulative
  thresholds `lex-overlap>0.5` ... `lex-overlap>0.9` (an example with r = 0.95 has all five, as
  in the paper's Table 12) and `full-lex-overlap` (r = 1, i.e. every hypothesis word is in the
  premise: the world's `overlap` artifact).
- `hypo-only-pred=<label name>`: a hypothesis-only model's prediction, when the caller gives one
  (names, not ids: sources disagree on id order).
- `null`: on every example, so a skewed label distribution shows up as a biased feature.

`FeatureSpace` keeps names <-> ids; featurising a new batch gives new features new ids, so
matrices from earlier batches stay valid (pad them to the current width with `pad`).
`example_features` is a plain-Python per-example version used as the reference in tests.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.world.artifacts import WORD_RE, words

HYPO_LEN_EDGES = (5, 8, 10, 15, 20)
HYPO_LEN_NAMES = ("hypo-len<5", "hypo-len:5-7", "hypo-len:8-9", "hypo-len:10-14",
                  "hypo-len:15-19", "hypo-len>=20")
LEN_RATIO_EDGES = (0.25, 0.5, 0.75, 1.0, 1.5)
LEN_RATIO_NAMES = ("len-ratio<0.25", "len-ratio:0.25-0.5", "len-ratio:0.5-0.75",
                   "len-ratio:0.75-1", "len-ratio:1-1.5", "len-ratio>=1.5")
OVERLAP_LOW = ((0.2, "lex-overlap<0.2"), (0.5, "lex-overlap:0.2-0.5"))
OVERLAP_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
NULL = "null"
FULL_OVERLAP = "full-lex-overlap"
_CHUNK = 100_000
_SPLIT_RE = re.compile(WORD_RE.pattern + r"|\n")


def _overlap_names(ratio: float) -> list[str]:
    out = [name for bound, name in OVERLAP_LOW if ratio < bound][:1]
    out += [f"lex-overlap>{t}" for t in OVERLAP_THRESHOLDS if ratio > t]
    return out + [FULL_OVERLAP] if ratio == 1.0 else out


def example_features(premise: str, hypothesis: str, hypo_pred: str | None = None) -> set[str]:
    """All feature names of one pair, in plain Python (the definition `FeatureSpace` vectorises)."""
    p, h = words(premise), words(hypothesis)
    out = {NULL, HYPO_LEN_NAMES[bisect.bisect_right(HYPO_LEN_EDGES, len(h))]}
    ratio = len(h) / len(p) if p else float("inf")
    out.add(LEN_RATIO_NAMES[bisect.bisect_right(LEN_RATIO_EDGES, ratio)])
    pset = set(p)
    out.update(_overlap_names(sum(w in pset for w in h) / len(h) if h else 0.0))
    for side, toks in (("premise", p), ("hypothesis", h)):
        out.update(f"{w}@{side}" for w in toks)
        out.update(f"{a} {b}@{side}" for a, b in zip(toks, toks[1:]))
    if hypo_pred is not None:
        out.add(f"hypo-only-pred={hypo_pred}")
    return out


class FeatureSpace:
    """Feature names <-> ids, grown batch by batch; `featurise` gives a binary CSR matrix."""

    def __init__(self, labels: Sequence[str] = LABELS):
        self.labels = tuple(labels)
        self.names: list[str] = []
        self.ids: dict[str, int] = {}
        self._words: defaultdict[str, int] = defaultdict()
        self._words.default_factory = self._words.__len__  # new word -> next word id
        self._words["\n"]  # word id 0: the text boundary marker of `_tokens`
        self._word_list: list[str] = ["\n"]
        self._uni = {"premise": np.zeros(0, np.int64), "hypothesis": np.zeros(0, np.int64)}
        self._bigrams: dict[str, defaultdict] = {}
        self._bi_global = {}
        for side in ("premise", "hypothesis"):
            self._bigrams[side] = defaultdict()
            self._bigrams[side].default_factory = self._bigrams[side].__len__
            self._bi_global[side] = np.zeros(0, np.int64)
        fixed = (NULL,) + HYPO_LEN_NAMES + LEN_RATIO_NAMES + tuple(n for _, n in OVERLAP_LOW)
        fixed += tuple(f"lex-overlap>{t}" for t in OVERLAP_THRESHOLDS) + (FULL_OVERLAP,)
        fixed += tuple(f"hypo-only-pred={lab}" for lab in self.labels)
        for name in fixed:
            self.add(name)

    def __len__(self) -> int:
        return len(self.names)

    def add(self, name: str) -> int:
        """The id of `name`, registering it if new."""
        fid = self.ids.get(name)
        if fid is None:
            fid = self.ids[name] = len(self.names)
            self.names.append(name)
        return fid

    def _add_many(self, names: list[str]) -> np.ndarray:
        """Register names known to be new; returns their ids."""
        start = len(self.names)
        self.names.extend(names)
        self.ids.update(zip(names, range(start, start + len(names))))
        return np.arange(start, start + len(names), dtype=np.int64)

    def pad(self, matrix: sp.csr_matrix) -> sp.csr_matrix:
        """`matrix` widened to the current number of features (features added since are absent)."""
        out = matrix.copy()
        out.resize((matrix.shape[0], len(self)))
        return out

    def featurise_records(self, records, hypo_preds=None) -> sp.csr_matrix:
        """`featurise` over Records' premises and hypotheses."""
        return self.featurise([r.premise for r in records], [r.hypothesis for r in records], hypo_preds)

    def featurise(self, premises: Sequence[str], hypotheses: Sequence[str],
                  hypo_preds: Sequence[str | int | None] | None = None) -> sp.csr_matrix:
        """Binary CSR matrix (examples x current features); unseen features get new ids.

        `hypo_preds` (optional, aligned with the pairs) holds a hypothesis-only model's predicted
        label per pair: a name from the space's labels, its id in that order, or None (no feature).
        """
        n = len(premises)
        if len(hypotheses) != n or (hypo_preds is not None and len(hypo_preds) != n):
            raise NLIDataError(f"featurise: premises ({n}), hypotheses ({len(hypotheses)}) and "
                               f"hypo_preds ({'-' if hypo_preds is None else len(hypo_preds)}) differ in length")
        if n > _CHUNK:  # bounded temporaries, and faster than one huge pass
            parts = [self.featurise(premises[i:i + _CHUNK], hypotheses[i:i + _CHUNK],
                                    None if hypo_preds is None else hypo_preds[i:i + _CHUNK])
                     for i in range(0, n, _CHUNK)]
            return sp.vstack([self.pad(m) for m in parts], format="csr")
        p_ids, p_len = self._tokens(premises)
        h_ids, h_len = self._tokens(hypotheses)
        p_doc, h_doc = np.repeat(np.arange(n), p_len), np.repeat(np.arange(n), h_len)
        rows, cols = [], []
        for side, ids, doc in (("premise", p_ids, p_doc), ("hypothesis", h_ids, h_doc)):
            for r, c in (self._unigrams(side, ids, doc), self._bigram_cols(side, ids, doc)):
                rows.append(r)
                cols.append(c)
        r, c = self._dense_features(p_ids, p_len, h_ids, h_len, p_doc, h_doc, hypo_preds)
        rows.append(r)
        cols.append(c)
        return self._to_csr(np.concatenate(rows), np.concatenate(cols), n)

    def _tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat word ids of all texts and the token count of each text.

        Fast path: one `lower` and one regex scan over all texts joined by newlines, the newline
        being a token of its own (word id 0) that marks the boundaries; a text that itself holds
        a newline (rare) has it replaced by a space first, which changes no token.
        """
        if any("\n" in t for t in texts):
            texts = [t.replace("\n", " ") for t in texts]
        toks = _SPLIT_RE.findall("\n".join(texts).lower())
        ids = np.fromiter(map(self._words.__getitem__, toks), dtype=np.int64, count=len(toks))
        if len(self._words) > len(self._word_list):
            self._word_list.extend(list(self._words)[len(self._word_list):])
        marker = ids == 0
        doc = np.cumsum(marker)[~marker]
        lens = np.bincount(doc, minlength=len(texts)) if len(texts) else np.zeros(0, np.int64)
        return ids[~marker], lens

    def _unigrams(self, side: str, ids: np.ndarray, doc: np.ndarray):
        table = self._uni[side]
        if len(table) < len(self._word_list):
            table = self._uni[side] = np.concatenate(
                [table, np.full(len(self._word_list) - len(table), -1, np.int64)])
        seen = np.zeros(len(table), bool)
        seen[ids] = True
        new = np.flatnonzero(seen & (table < 0))
        if len(new):
            table[new] = self._add_many([f"{self._word_list[w]}@{side}" for w in new.tolist()])
        return doc, table[ids]

    def _bigram_cols(self, side: str, ids: np.ndarray, doc: np.ndarray):
        same = doc[1:] == doc[:-1]
        keys = (ids[:-1][same] << 32) | ids[1:][same]
        d = self._bigrams[side]
        before = len(d)
        local = np.fromiter(map(d.__getitem__, keys.tolist()), dtype=np.int64, count=len(keys))
        if len(d) > before:
            new_keys = list(d)[before:]
            wl = self._word_list
            names = [f"{wl[k >> 32]} {wl[k & 0xFFFFFFFF]}@{side}" for k in new_keys]
            self._bi_global[side] = np.concatenate([self._bi_global[side], self._add_many(names)])
        return doc[:-1][same], self._bi_global[side][local]

    def _dense_features(self, p_ids, p_len, h_ids, h_len, p_doc, h_doc, hypo_preds):
        """Null, length, ratio, overlap and hypothesis-only features: (rows, cols)."""
        n = len(p_len)
        ids = self.ids
        rows = [np.arange(n)] * 3
        cols = [np.full(n, ids[NULL]),
                np.array([ids[x] for x in HYPO_LEN_NAMES])[np.digitize(h_len, HYPO_LEN_EDGES)]]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(p_len > 0, h_len / np.maximum(p_len, 1), np.inf)
        cols.append(np.array([ids[x] for x in LEN_RATIO_NAMES])[np.digitize(ratio, LEN_RATIO_EDGES)])
        overlap = _overlap_ratio(p_ids, p_doc, h_ids, h_doc, h_len)
        for keep, name in _overlap_masks(overlap):
            rows.append(np.flatnonzero(keep))
            cols.append(np.full(len(rows[-1]), ids[name]))
        if hypo_preds is not None:
            r, c = self._pred_cols(hypo_preds)
            rows.append(r)
            cols.append(c)
        return np.concatenate(rows), np.concatenate(cols)

    def _pred_cols(self, hypo_preds):
        rows, cols = [], []
        for i, pred in enumerate(hypo_preds):
            if pred is None:
                continue
            if isinstance(pred, (int, np.integer)) and not isinstance(pred, bool):
                if not 0 <= pred < len(self.labels):
                    raise NLIDataError(f"hypo_preds[{i}]: label id {pred} out of range for labels {self.labels}")
                pred = self.labels[pred]
            if pred not in self.labels:
                raise NLIDataError(f"hypo_preds[{i}]: unknown label {pred!r}; valid: {', '.join(self.labels)}")
            rows.append(i)
            cols.append(self.ids[f"hypo-only-pred={pred}"])
        return np.array(rows, np.int64), np.array(cols, np.int64)

    def _to_csr(self, rows: np.ndarray, cols: np.ndarray, n: int) -> sp.csr_matrix:
        m = sp.csr_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, len(self)))
        m.sum_duplicates()  # the same n-gram twice in a text is one (binary) feature
        m.data[:] = 1
        return m


def _overlap_ratio(p_ids, p_doc, h_ids, h_doc, h_len) -> np.ndarray:
    """Per example: share of hypothesis tokens whose word occurs in the same example's premise."""
    shift = np.int64(1) << 32
    p_keys = np.sort(p_doc * shift + p_ids)
    h_keys = h_doc * shift + h_ids
    pos = np.minimum(np.searchsorted(p_keys, h_keys), max(len(p_keys) - 1, 0))
    hit = p_keys[pos] == h_keys if len(p_keys) else np.zeros(len(h_keys), bool)
    hits = np.bincount(h_doc, weights=hit, minlength=len(h_len))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(h_len > 0, hits / np.maximum(h_len, 1), 0.0)


def _overlap_masks(ratio: np.ndarray):
    """(mask, feature name) for each overlap feature (same rules as `_overlap_names`)."""
    yield ratio < OVERLAP_LOW[0][0], OVERLAP_LOW[0][1]
    yield (ratio >= OVERLAP_LOW[0][0]) & (ratio < OVERLAP_LOW[1][0]), OVERLAP_LOW[1][1]
    for t in OVERLAP_THRESHOLDS:
        yield ratio > t, f"lex-overlap>{t}"
    yield ratio == 1.0, FULL_OVERLAP
