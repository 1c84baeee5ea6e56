"""The values each numeric (or choice) setting may take, checked with the types in nliforge.utils.schema.

A right-typed value can still be meaningless: `data.batch_size=0` or `-4`, `model.optimizer.lr=-1`,
`trainer.max_epochs=0` (Lightning trains nothing and the run writes a chance-level model and its
metrics as if it had trained). `RANGES` gives every such setting of nliforge-train (conf/train.yaml
and its groups; the same keys in nliforge-evaluate and nliforge-review) its allowed values, so the
typed check (`schema.check_config`) refuses it by name, with the range, before any run folder exists.

Keys are dotted patterns as in `schema.KNOWN` (`*` matches one key). Null is always allowed (it means
"off" or "the default" throughout nliforge's configs); a value of the wrong type is left to the typed
check, which names the type instead.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

MAX_SEED = 2**32 - 1   # numpy's and Lightning's seed_everything's bound (a larger seed is silently replaced)


@dataclass(frozen=True)
class Range:
    """`low <= value <= high` (`<` on an open end), or one of the `also` values with their meaning."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    also: tuple[tuple[Any, str], ...] = ()   # (special value, what it means), e.g. (-1, "no limit")
    integer: bool = False                    # said in the message: "an integer >= 1"

    def allows_special(self, value: Any) -> bool:
        return any(value == special for special, _ in self.also)

    def allows(self, value: Any) -> bool:
        if self.allows_special(value):
            return True
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return not (self.high is not None and (value >= self.high if self.high_open else value > self.high))

    def describe(self) -> str:
        return ("an integer " if self.integer else "a number ") + self._bounds()

    def _bounds(self) -> str:
        if self.low is not None and self.high is not None:
            text = (f"in {'(' if self.low_open else '['}{_num(self.low)}, {_num(self.high)}"
                    f"{')' if self.high_open else ']'}")
        elif self.low is not None:
            text = f"{'>' if self.low_open else '>='} {_num(self.low)}"
        else:
            text = f"{'<' if self.high_open else '<='} {_num(self.high)}"
        return text + "".join(f" or {v} ({meaning})" for v, meaning in self.also)


@dataclass(frozen=True)
class Choice:
    """One of a few named values."""

    values: tuple[str, ...]

    def allows(self, value: Any) -> bool:
        return value in self.values

    def describe(self) -> str:
        return "one of " + ", ".join(self.values)


def _num(x: float) -> str:
    return "1/3" if x == 1 / 3 else (str(int(x)) if float(x).is_integer() else str(x))


POSITIVE_INT = Range(1, integer=True)
COUNT = Range(0, integer=True)
NON_NEGATIVE = Range(0)
POSITIVE = Range(0, low_open=True)
FRACTION = Range(0, 1)
SEED = Range(0, MAX_SEED, integer=True)

RANGES: dict[str, Range | Choice] = {
    # data (conf/data/default.yaml) and the model's own batch and length
    "data.batch_size": POSITIVE_INT, "model.batch_size": POSITIVE_INT,
    "data.eval_batch_size": POSITIVE_INT,
    "data.max_length": POSITIVE_INT, "model.max_length": POSITIVE_INT,
    "data.num_workers": COUNT,
    "data.pad_to_multiple_of": POSITIVE_INT,
    "data.static_widths": Range(1, 8, integer=True),                # nliforge.models.graphs.MAX_STATIC_WIDTHS
    "data.combine": Choice(("augment", "replace")),               # nliforge.data.combine.COMBINE_MODES
    # model (conf/model/*.yaml)
    "model.max_epochs": POSITIVE_INT,
    "model.optimizer.lr": POSITIVE,
    "model.optimizer.eps": NON_NEGATIVE,
    "model.optimizer.weight_decay": NON_NEGATIVE,
    "model.weight_decay": NON_NEGATIVE,
    "model.warmup_ratio": FRACTION,                                 # share of the optimizer steps
    "model.input": Choice(("pair", "hypothesis", "premise")),
    "model.poe.beta": NON_NEGATIVE, "model.poe.gamma": NON_NEGATIVE,
    "model.backbone.hidden_size": POSITIVE_INT, "model.backbone.num_layers": POSITIVE_INT,
    "model.backbone.num_heads": POSITIVE_INT, "model.backbone.intermediate_size": POSITIVE_INT,
    "model.backbone.vocab_size": POSITIVE_INT, "model.backbone.max_position_embeddings": POSITIVE_INT,
    "model.backbone.dropout": Range(0, 1, high_open=True),
    # trainer (Lightning's Trainer arguments users set: conf/trainer/*.yaml, conf/debug/*.yaml)
    "trainer.max_epochs": POSITIVE_INT,
    "trainer.min_epochs": COUNT,
    "trainer.max_steps": Range(1, integer=True, also=((-1, "no limit"),)),
    "trainer.accumulate_grad_batches": POSITIVE_INT,
    "trainer.gradient_clip_val": NON_NEGATIVE,
    "trainer.devices": Range(1, integer=True, also=((-1, "all"),)),
    "trainer.num_nodes": POSITIVE_INT,
    "trainer.log_every_n_steps": POSITIVE_INT,
    "trainer.num_sanity_val_steps": Range(0, integer=True, also=((-1, "all"),)),
    "trainer.limit_train_batches": POSITIVE,
    "trainer.limit_val_batches": NON_NEGATIVE, "trainer.limit_test_batches": NON_NEGATIVE,
    "trainer.limit_predict_batches": NON_NEGATIVE,
    "trainer.overfit_batches": NON_NEGATIVE,
    "trainer.val_check_interval": POSITIVE,
    "trainer.check_val_every_n_epoch": POSITIVE_INT,
    # callbacks (conf/callbacks/default.yaml)
    "callbacks.checkpoint.save_top_k": Range(0, integer=True, also=((-1, "every checkpoint"),)),
    "callbacks.checkpoint.every_n_epochs": COUNT,
    "callbacks.checkpoint.every_n_train_steps": COUNT,
    "callbacks.dynamics.mode": Choice(("in_training", "checkpoint")),   # cartography.recorder.MODES
    "callbacks.dynamics.never_learned_forgetfulness": COUNT,
    # the synthetic world (conf/world/*.yaml; nliforge.world.config.WorldConfig checks the same)
    "world.seed": SEED,
    "world.n_train": COUNT, "world.n_dev": COUNT, "world.n_test": COUNT, "world.n_challenge": COUNT,
    "world.n_extra": COUNT,
    "world.feature_rate": Range(0, 1 / 3, low_open=True),
    "world.strengths.*": FRACTION,
    # the run
    "seed": SEED,
    "num_threads": POSITIVE_INT,
    "progress_every_s": POSITIVE,
    "compile.recompile_limit": POSITIVE_INT,
    "compile.mode": Choice(("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")),
    # nliforge-review (conf/review.yaml)
    "teacher.threshold": FRACTION, "teacher.batch_size": POSITIVE_INT, "teacher.max_length": POSITIVE_INT,
    "export.per_hit": POSITIVE_INT,
    "export.format": Choice(("amt", "label_studio")),
    "import.format": Choice(("amt", "label_studio", "wanli")),
    "serve.port": Range(0, 65535, integer=True),
}


def range_of(key: str) -> Range | Choice | None:
    """The allowed values of a dotted key, or None when any value of its type is allowed."""
    for pattern, allowed in RANGES.items():
        if fnmatch.fnmatchcase(key, pattern) and key.count(".") == pattern.count("."):
            return allowed
    return None


def range_problem(key: str, value: Any) -> str | None:
    """`key=value: expected ...` when a number (or choice) is outside what `key` allows, else None.
    Values of another type (a string where a number belongs, a boolean) are left to the typed check."""
    allowed = range_of(key)
    if allowed is None or value is None:
        return None
    if isinstance(allowed, Range):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if value != value:   # NaN compares false with everything
            return f"{key}={value!r}: expected {allowed.describe()}"
        if value in (float("inf"), float("-inf")) and not allowed.allows_special(value):   # inf trains on NaN
            return f"{key}={value!r}: expected a finite number ({allowed.describe()})"
    elif not isinstance(value, str):
        return None
    return None if allowed.allows(value) else f"{key}={value!r}: expected {allowed.describe()}"
