"""p(entailment, neutral, contradiction) from a trained classifier, one way for every caller: the
teacher reviewer and DISCO's Δ filter, the generation pipelines' task classifier (final weights and
each epoch's), the long-text explain stage and suite evaluation.

`load_classifier` reads a classifier folder (a Hugging Face sequence-classifier folder, or an
nliforge-train run folder that holds one as `model/`); `predict_probs` scores records or
(premise, hypothesis) pairs in batches, columns mapped to e/n/c by name from the model's label2id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS, model_label_permutation
from nliforge.data.records import Record

Pair = tuple[str, str]
_EXPECTED = ("expected a Hugging Face sequence-classifier folder (config.json, weights, tokenizer), "
             "e.g. an nliforge-train run's model/")


class Classifier(NamedTuple):
    """A loaded classifier: the transformers model (eval mode), its tokenizer and the permutation
    that puts its output columns in e/n/c order."""

    model: Any
    tokenizer: Any
    permutation: list[int]


def classifier_folder(path: str | Path, key: str = "model_dir") -> Path:
    """The folder itself when it holds config.json, else its `model/`; errors name the config `key`."""
    root = Path(path)
    for folder in (root, root / "model"):
        if (folder / "config.json").is_file():
            return folder
    if not root.is_dir():
        raise NLIDataError(f"{key}={str(root)!r}: no such folder ({root.resolve()}); {_EXPECTED}")
    raise NLIDataError(f"{key}={str(root)!r}: no config.json there or in its model/; {_EXPECTED}")


def load_classifier(path: str | Path, key: str = "model_dir") -> Classifier:
    """The classifier in `path` (see `classifier_folder`), in eval mode on the CPU."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = classifier_folder(path, key)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    return Classifier(model, AutoTokenizer.from_pretrained(folder), model_label_permutation(model.config.label2id))


def token_limit(model, max_length: int) -> int:
    """`max_length`, capped by the model's position embeddings (RoBERTa-style models offset by pad id + 1)."""
    cfg = model.config
    positions = getattr(cfg, "max_position_embeddings", None)
    if positions is None:
        return max_length
    offset = (cfg.pad_token_id or 0) + 1 if "roberta" in str(cfg.model_type) else 0
    return min(max_length, positions - offset)


class _Pair(NamedTuple):
    """A (premise, hypothesis) pair with a Record's attribute names, so `input_texts` reads either."""

    premise: str
    hypothesis: str


def predict_probs(model, records: Sequence[Record | Pair], *, datamodule=None, batch_size: int = 64,
                  max_length: int = 128, device: str = "cpu", progress: bool | None = None,
                  desc: str = "predict", view: str | None = None) -> np.ndarray:
    """p(e, n, c) per record or (premise, hypothesis) pair: an (N, 3) float32 array.

    `model` is a classifier folder (see `classifier_folder`), a `Classifier`, or a LightningModule
    with `predict_probs(batch)` (an NLIClassifier) together with the `datamodule` whose encoding it
    was trained with (its input view, max length and padding; `records` are then Records, and
    batch_size/max_length/device come from the datamodule and the module). Inputs are truncated to
    `max_length` tokens, capped by the model's position embeddings. `progress`: a bar, or None for a
    bar only from 20 batches on. `view` (`model.input`: pair, hypothesis or premise; None: the pair)
    is what a folder or `Classifier` reads, encoded as NLIDataModule encodes that input (one side
    alone is a single sequence), so a partial-input model is scored on the view it was trained on;
    with a `datamodule` the view is the datamodule's, and a different `view` is refused."""
    from nliforge.data.datamodule import check_input, input_texts

    if datamodule is not None:
        if view is not None and view != datamodule.input:
            raise NLIDataError(f"predict_probs: view={view!r}, but the datamodule encodes input={datamodule.input!r}")
        return _module_probs(model, datamodule, records, progress, desc)
    import torch

    view = check_input(view or "pair")
    clf = model if isinstance(model, Classifier) else load_classifier(model)
    clf.model.to(device)
    limit = token_limit(clf.model, max_length)
    pairs = [_Pair(r.premise, r.hypothesis) if isinstance(r, Record) else _Pair(*r) for r in records]

    order = longest_first([len(p.premise) + len(p.hypothesis) for p in pairs])   # characters: close enough

    def batches():
        for start in range(0, len(pairs), batch_size):
            chunk = [pairs[i] for i in order[start:start + batch_size]]
            yield clf.tokenizer(*input_texts(chunk, view), truncation=True, max_length=limit,
                                padding=True, return_tensors="pt").to(device)

    def probs_of(enc):
        return clf.model(**enc).logits.float()[:, clf.permutation].softmax(-1)

    with torch.inference_mode():
        probs = _collect(probs_of, batches(), -(-len(pairs) // batch_size), progress, desc, pairs=len(pairs))
    return in_input_order(probs, order)


def longest_first(lengths: Sequence[int]) -> np.ndarray:
    """Indices from the longest input to the shortest (ties in input order): batches cut from this order
    hold inputs of similar length, so padding to a batch's longest wastes little (MultiNLI pairs in file
    order, batches of 128: 2.5x the tokens of length-ordered batches), and the largest batch comes first."""
    return np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")


def in_input_order(rows: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rows computed in `order` put back in the order of the inputs."""
    out = np.empty_like(rows)
    out[order] = rows
    return out


def _module_probs(module, datamodule, records: Sequence[Record], progress: bool | None, desc: str) -> np.ndarray:
    """predict_probs for a LightningModule: the datamodule's batches, on the module's device, in eval mode."""
    import torch

    from torch.utils.data import Subset

    encoded = datamodule.encode(records)
    lengths = getattr(encoded, "lengths", None)   # a dataset that knows no lengths is scored in its own order
    order = longest_first(lengths()) if lengths is not None else np.arange(len(encoded))
    loader = datamodule.loader(Subset(encoded, order.tolist()) if lengths is not None else encoded)
    batches = ({k: v.to(module.device) if torch.is_tensor(v) else v for k, v in batch.items()} for batch in loader)
    was_training = module.training
    module.eval()
    try:
        with torch.inference_mode():
            probs = _collect(module.predict_probs, batches, len(loader), progress, desc, pairs=len(records))
    finally:
        module.train(was_training)
    return in_input_order(probs, order)


def _collect(probs_of, batches: Iterable, total: int, progress: bool | None, desc: str,
             pairs: int | None = None) -> np.ndarray:
    """Each batch's probabilities, concatenated; the bar (None: from 20 batches on) counts `pairs` when
    given, so its rate and ETA are in pairs per second, else batches."""
    from nliforge.utils.progress import progress as progress_bar

    show = total >= 20 if progress is None else progress
    out = []
    with progress_bar(total=total if pairs is None else pairs, desc=desc, unit="batch" if pairs is None else "pair",
                      leave=False, disable=not show) as bar:
        for batch in batches:
            out.append(probs_of(batch).cpu())
            bar.update(1 if pairs is None else len(out[-1]))
    return np.concatenate([p.numpy() for p in out]) if out else np.zeros((0, len(LABELS)), dtype=np.float32)
