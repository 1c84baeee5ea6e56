"""Tokenised datasets and a LightningDataModule that pads each batch to its longest item."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABEL2ID
from nliforge.data.records import Record
from nliforge.data.sampling import GlobalBatchSampler, LengthGroupedBatchSampler
from nliforge.data.widths import static_widths as static_widths_of

TOKEN_KEYS = ("input_ids", "attention_mask", "token_type_ids")
INPUTS = ("pair", "hypothesis", "premise")
HYP_PREFIX = "hyp_"  # batch keys of the hypothesis-only view: hyp_input_ids, hyp_attention_mask, ...


def check_input(value: str) -> str:
    """Validate a `model.input` setting; the error names the key and the valid choices."""
    if value not in INPUTS:
        raise NLIDataError(f"model.input={value!r}; valid: {', '.join(INPUTS)}")
    return value


def input_texts(records: Sequence[Record], input: str) -> tuple[list[str], ...]:
    """Tokenizer arguments for `model.input`: (premises, hypotheses) for a pair, else one side alone."""
    if input == "pair":
        return [r.premise for r in records], [r.hypothesis for r in records]
    return ([r.hypothesis if input == "hypothesis" else r.premise for r in records],)


class EncodedNLI(Dataset):
    """Records tokenised once; items carry the uid so training dynamics are keyed stably.

    `input` picks what the model sees (`model.input`): the (premise, hypothesis) pair, or one side
    alone for partial-input baselines. `hypothesis_view` also stores the hypothesis alone under
    `hyp_*` keys, for a product-of-experts bias head that reads it next to the pair.
    """

    def __init__(self, records: Sequence[Record], tokenizer, max_length: int, batch_size: int = 2048,
                 input: str = "pair", hypothesis_view: bool = False):
        check_input(input)
        self.uids = [r.uid for r in records]
        self.labels = [LABEL2ID.get(r.label, -1) if r.label is not None else -1 for r in records]
        self.encodings: dict[str, list[list[int]]] = {}
        for start in range(0, len(records), batch_size):
            chunk = records[start:start + batch_size]
            self._add(tokenizer(*input_texts(chunk, input), truncation=True, max_length=max_length), "")
            if hypothesis_view:
                enc = tokenizer([r.hypothesis for r in chunk], truncation=True, max_length=max_length)
                self._add(enc, HYP_PREFIX)

    def _add(self, enc, prefix: str) -> None:
        for key in TOKEN_KEYS:
            if key in enc:
                self.encodings.setdefault(prefix + key, []).extend(enc[key])

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
    """Pad to the longest item of the batch (3x faster than fixed-length padding on short NLI pairs).

    `pad_to_multiple_of` rounds the width up (8 suits GPU tensor cores and leaves a compiled model
    with a handful of distinct shapes, so CUDA graphs can be recorded once per width). `buckets`
    (e.g. [32, 64, 128]) pads each batch to the smallest listed width >= its (rounded) longest row,
    so a whole run sees only those few widths; a batch longer than every bucket keeps its own
    rounded width. The attention mask makes the extra padding inert: the loss and gradients equal
    the pad-to-longest path's (tests/models/test_backbone.py).
    """

    def __init__(self, pad_token_id: int, pad_to_multiple_of: int | None = None,
                 buckets: Sequence[int] | None = None):
        if pad_to_multiple_of is not None and int(pad_to_multiple_of) < 1:
            raise NLIDataError(f"data.pad_to_multiple_of={pad_to_multiple_of}: expected a positive integer or null")
        if buckets is not None and (not len(buckets) or any(int(b) < 1 for b in buckets)):
            raise NLIDataError(f"data.pad_buckets={list(buckets)}: expected a non-empty list of positive integers or null")
        self.pad_token_id = pad_token_id
        self.multiple = int(pad_to_multiple_of) if pad_to_multiple_of else 1
        self.buckets = sorted({int(b) for b in buckets}) if buckets is not None else []

    def width(self, longest: int) -> int:
        rounded = -(-longest // self.multiple) * self.multiple
        return next((b for b in self.buckets if b >= rounded), rounded)

    def __call__(self, items: list[dict]) -> dict:
        batch: dict = {}
        for prefix in ("", HYP_PREFIX):  # the pair (or one side), then the hypothesis-only view if carried
            if prefix + "input_ids" not in items[0]:
                continue
            width = self.width(max(len(it[prefix + "input_ids"]) for it in items))
            for key in TOKEN_KEYS:
                name = prefix + key
                if name not in items[0]:
                    continue
                fill = self.pad_token_id if key == "input_ids" else 0
                batch[name] = torch.tensor([it[name] + [fill] * (width - len(it[name])) for it in items],
                                           dtype=torch.long)
        batch["labels"] = torch.tensor([it["labels"] for it in items], dtype=torch.long)
        batch["uid"] = [it["uid"] for it in items]
        return batch


class ResumableDataLoader(DataLoader):
    """The training DataLoader, with the position in its epoch as state.

    `load_state_dict` makes the epoch it names start after the batches the checkpoint had trained, so
    a run resumed mid-epoch goes on with the rest of the same plan. Batches are counted as they are
    handed to the training loop, not as workers prefetch them. Lightning also stores this state with
    the fit loop (a `_Stateful` loader), but restores it only when the loader is built after the loops
    are (`estimated_stepping_batches` in `configure_optimizers` builds it before), so `NLIDataModule`
    carries it through the checkpoint itself.
    """

    _position: tuple[int, int] = (0, 0)   # (epoch, batches handed out in it)

    def __iter__(self):
        return self._batches()   # a generator: the sampler's epoch is read at the first next()

    def _batches(self):
        sampler = self.batch_sampler
        epoch, done = sampler.epoch, sampler.start_batch()
        self._position = (epoch, done)
        for batch in DataLoader.__iter__(self):
            done += 1
            self._position = (epoch, done)
            yield batch

    def state_dict(self) -> dict:
        epoch, batches = self._position
        return {"epoch": epoch, "batches": batches}

    def load_state_dict(self, state: dict) -> None:
        self._position = (int(state["epoch"]), int(state["batches"]))
        self.batch_sampler.resume_at(*self._position)


class NLIDataModule(L.LightningDataModule):
    """Training set, optional validation sets and the suite's eval sets, all already loaded as Records.

    `input` (`model.input`) applies to every set, so training, validation, the dynamics pass and
    the suite all see the same view; `hypothesis_view` adds the hypothesis-only keys to the
    training set only (a PoE bias head is a training-time device). `static_widths=N` pads every batch
    to one of at most N widths chosen from the training set's lengths (`nliforge.models.graphs`), as
    `pad_buckets` would with those widths: the same examples in the same order, a few batch shapes.
    """

    def __init__(self, train: Sequence[Record], tokenizer, batch_size: int = 32, eval_batch_size: int = 128,
                 max_length: int = 128, num_workers: int = 0, seed: int = 0,
                 val_sets: Mapping[str, Sequence[Record]] | None = None, group_by_length: bool = True,
                 input: str = "pair", hypothesis_view: bool = False, pad_to_multiple_of: int | None = None,
                 pad_buckets: Sequence[int] | None = None, static_widths: int | None = None):
        super().__init__()
        self.tokenizer = tokenizer
        self.batch_size, self.eval_batch_size = batch_size, eval_batch_size
        self.max_length, self.num_workers, self.seed = max_length, num_workers, seed
        self.group_by_length = group_by_length
        self.input = check_input(input)
        self.train_set = EncodedNLI(train, tokenizer, max_length, input=input, hypothesis_view=hypothesis_view)
        if static_widths is not None:   # a few fixed widths for compiled graphs, from the training lengths
            if pad_buckets is not None:
                raise NLIDataError(f"data.static_widths={static_widths} chooses the widths itself: leave "
                                   f"data.pad_buckets={list(pad_buckets)} unset (null)")
            pad_buckets = self.plan_widths(static_widths, pad_to_multiple_of or 8)
        self.pad_buckets = list(pad_buckets) if pad_buckets is not None else None
        self.collate = PadCollator(tokenizer.pad_token_id, pad_to_multiple_of, pad_buckets)
        self.val_sets = {name: self.encode(recs) for name, recs in (val_sets or {}).items()}
        self._train_loader: ResumableDataLoader | None = None
        self._resume: dict | None = None   # the training loader's position from a checkpoint

    def plan_widths(self, n: int, multiple: int) -> list[int]:
        """`data.static_widths`: the widths with the fewest padded tokens over the batches of epoch 0's
        plan (each batch's longest row, weighted by its rows). The plan is the same for any number of
        processes, so every process gets the same widths; the largest covers the longest example."""
        lengths = self.train_set.lengths()
        plan = self.train_sampler_for(1, 0).global_batches()
        longest = [max(lengths[i] for i in batch) for batch in plan]
        return static_widths_of(longest, n, multiple, weights=[len(batch) for batch in plan])

    def state_dict(self) -> dict:
        """Saved by Lightning in every checkpoint: how far the current epoch's batch plan had got."""
        return {"train_position": self._train_loader.state_dict()} if self._train_loader is not None else {}

    def load_state_dict(self, state: dict) -> None:
        """On resume (before or after the training loader exists): go on where the checkpoint was."""
        self._resume = state.get("train_position")
        if self._resume is not None and self._train_loader is not None:
            self._train_loader.load_state_dict(self._resume)

    def encode(self, records: Sequence[Record]) -> EncodedNLI:
        return EncodedNLI(records, self.tokenizer, self.max_length, input=self.input)

    def loader(self, dataset: Dataset, shuffle: bool = False, batch_size: int | None = None) -> DataLoader:
        # every loader draws from its own generator: iterating one must not move the global torch
        # RNG (dropout's), or a run resumed from a checkpoint would draw different masks
        generator = torch.Generator().manual_seed(self.seed)
        return DataLoader(dataset, batch_size=batch_size or self.eval_batch_size, shuffle=shuffle,
                          collate_fn=self.collate, num_workers=self.num_workers, generator=generator,
                          persistent_workers=self.num_workers > 0, pin_memory=self.pin_memory())

    def pin_memory(self) -> bool:
        """Pinned batches when the trainer runs on a CUDA device, as the HF Trainer does: a copy from
        pinned memory is a plain asynchronous DMA, while one from pageable memory is first staged
        through a pinned buffer by the driver and can hold the host up."""
        trainer = getattr(self, "trainer", None)
        return trainer is not None and trainer.strategy.root_device.type == "cuda"

    def processes(self) -> tuple[int, int]:
        """(world size, global rank) of the attached trainer; (1, 0) outside one."""
        trainer = getattr(self, "trainer", None)
        if trainer is None:
            return 1, 0
        return int(trainer.world_size), int(trainer.global_rank)

    def train_sampler(self) -> GlobalBatchSampler:
        """This process's batches: `data.batch_size` is the global batch, split over the processes,
        so a DDP run trains on the same batches as a single process (see `data.sampling`)."""
        return self.train_sampler_for(*self.processes())

    def train_sampler_for(self, world: int, rank: int) -> GlobalBatchSampler:
        if self.group_by_length:
            return LengthGroupedBatchSampler(self.train_set.lengths(), self.batch_size, self.seed,
                                             num_replicas=world, rank=rank)
        return GlobalBatchSampler(len(self.train_set), self.batch_size, self.seed, num_replicas=world, rank=rank)

    def train_dataloader(self) -> DataLoader:
        """Resumable mid-epoch (`ResumableDataLoader`); its own generator keeps the global RNG untouched."""
        loader = ResumableDataLoader(self.train_set, batch_sampler=self.train_sampler(), collate_fn=self.collate,
                                     num_workers=self.num_workers, persistent_workers=self.num_workers > 0,
                                     pin_memory=self.pin_memory(), generator=torch.Generator().manual_seed(self.seed))
        if self._resume is not None:
            loader.load_state_dict(self._resume)
        self._train_loader = loader
        return loader

    def val_dataloader(self):
        return [self.loader(ds) for ds in self.val_sets.values()] if self.val_sets else []

    def dynamics_dataloader(self) -> DataLoader:
        """The training set, unshuffled, for scoring each epoch's weights (cartography 'checkpoint' mode)."""
        return self.loader(self.train_set)
