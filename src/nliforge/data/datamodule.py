"""Tokenised datasets and a LightningDataModule that pads each batch to its longest item."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

from nliforge.data.labels import LABEL2ID
from nliforge.data.records import Record
from nliforge.data.sampling import LengthGroupedBatchSampler

TOKEN_KEYS = ("input_ids", "attention_mask", "token_type_ids")


class EncodedNLI(Dataset):
    """Records tokenised once; items carry the uid so training dynamics are keyed stably."""

    def __init__(self, records: Sequence[Record], tokenizer, max_length: int, batch_size: int = 2048):
        self.uids = [r.uid for r in records]
        self.labels = [LABEL2ID.get(r.label, -1) if r.label is not None else -1 for r in records]
        self.encodings: dict[str, list[list[int]]] = {}
        for start in range(0, len(records), batch_size):
            chunk = records[start:start + batch_size]
            enc = tokenizer([r.premise for r in chunk], [r.hypothesis for r in chunk],
                            truncation=True, max_length=max_length)
            for key in TOKEN_KEYS:
                if key in enc:
                    self.encodings.setdefault(key, []).extend(enc[key])

    def __len__(self) -> int:
        return len(self.uids)

    def lengths(self) -> list[int]:
        return [len(ids) for ids in self.encodings["input_ids"]]

    def __getitem__(self, i: int) -> dict:
        item = {key: values[i] for key, values in self.encodings.items()}
        item["labels"] = self.labels[i]
        item["uid"] = self.uids[i]
        return item


class PadCollator:
    """Pad to the longest item of the batch (3x faster than fixed-length padding on short NLI pairs)."""

    def __init__(self, pad_token_id: int):
        self.pad_token_id = pad_token_id

    def __call__(self, items: list[dict]) -> dict:
        width = max(len(it["input_ids"]) for it in items)
        batch: dict = {}
        for key in TOKEN_KEYS:
            if key not in items[0]:
                continue
            fill = self.pad_token_id if key == "input_ids" else 0
            batch[key] = torch.tensor([it[key] + [fill] * (width - len(it[key])) for it in items], dtype=torch.long)
        batch["labels"] = torch.tensor([it["labels"] for it in items], dtype=torch.long)
        batch["uid"] = [it["uid"] for it in items]
        return batch


class NLIDataModule(L.LightningDataModule):
    """Training set, optional validation sets and the suite's eval sets, all already loaded as Records."""

    def __init__(self, train: Sequence[Record], tokenizer, batch_size: int = 32, eval_batch_size: int = 128,
                 max_length: int = 128, num_workers: int = 0, seed: int = 0,
                 val_sets: Mapping[str, Sequence[Record]] | None = None, group_by_length: bool = True):
        super().__init__()
        self.tokenizer = tokenizer
        self.batch_size, self.eval_batch_size = batch_size, eval_batch_size
        self.max_length, self.num_workers, self.seed = max_length, num_workers, seed
        self.group_by_length = group_by_length
        self.collate = PadCollator(tokenizer.pad_token_id)
        self.train_set = EncodedNLI(train, tokenizer, max_length)
        self.val_sets = {name: EncodedNLI(recs, tokenizer, max_length) for name, recs in (val_sets or {}).items()}

    def encode(self, records: Sequence[Record]) -> EncodedNLI:
        return EncodedNLI(records, self.tokenizer, self.max_length)

    def loader(self, dataset: Dataset, shuffle: bool = False, batch_size: int | None = None) -> DataLoader:
        generator = torch.Generator().manual_seed(self.seed) if shuffle else None
        return DataLoader(dataset, batch_size=batch_size or self.eval_batch_size, shuffle=shuffle,
                          collate_fn=self.collate, num_workers=self.num_workers, generator=generator,
                          persistent_workers=self.num_workers > 0)

    def train_dataloader(self) -> DataLoader:
        if not self.group_by_length:
            return self.loader(self.train_set, shuffle=True, batch_size=self.batch_size)
        sampler = LengthGroupedBatchSampler(self.train_set.lengths(), self.batch_size, self.seed)
        return DataLoader(self.train_set, batch_sampler=sampler, collate_fn=self.collate,
                          num_workers=self.num_workers, persistent_workers=self.num_workers > 0)

    def val_dataloader(self):
        return [self.loader(ds) for ds in self.val_sets.values()] if self.val_sets else []

    def dynamics_dataloader(self) -> DataLoader:
        """The training set, unshuffled, for scoring each epoch's weights (cartography 'checkpoint' mode)."""
        return self.loader(self.train_set)
