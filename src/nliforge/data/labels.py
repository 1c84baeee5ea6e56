"""Label names, internal ids and the per-source label maps.

Inside nliforge a label is a *name*; ids are 0 entailment, 1 neutral, 2 contradiction.
Every source is mapped by name at its boundary because sources disagree on integer order
(see PRIOR_ART.md): WANLI's code sorts names alphabetically, GLUE WNLI puts
not_entailment first, SNLI uses -1 for "no gold label", roberta-large-mnli puts
contradiction first.
"""

from __future__ import annotations

from collections.abc import Mapping

from nliforge.errors import NLIDataError

LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
LABEL2ID: dict[str, int] = {name: i for i, name in enumerate(LABELS)}
ID2LABEL: dict[int, str] = dict(enumerate(LABELS))
# Counterfactual label flips, named as in DISCO's tables (E2C: entailment -> contradiction), in their column order.
FLIP_DIRECTIONS: tuple[str, ...] = ("E2C", "E2N", "N2C", "N2E", "C2N", "C2E")


def flip_direction(original: str, target: str) -> str:
    """The flip's name, e.g. E2C for entailment -> contradiction."""
    if original not in LABEL2ID or target not in LABEL2ID:
        raise NLIDataError(f"flip direction: labels must be in {LABELS}, got {original!r} -> {target!r}")
    return f"{original[0].upper()}2{target[0].upper()}"
# Gold labels of 2-class evaluation sets.
NON_ENTAILMENT = "non-entailment"
NON_CONTRADICTION = "non-contradiction"
TWO_CLASS_LABELS: dict[str, tuple[str, str]] = {
    "entailment": ("entailment", NON_ENTAILMENT),
    "contradiction": ("contradiction", NON_CONTRADICTION),
}
ALL_GOLD_LABELS: tuple[str, ...] = LABELS + (NON_ENTAILMENT, NON_CONTRADICTION)

# Raw label value in a source -> canonical name; None means "drop this example" (no gold).
SOURCE_LABEL_MAPS: dict[str, dict[object, str | None]] = {
    # Hub ClassLabel order e/n/c; SNLI marks pairs without gold as -1.
    "mnli": {0: "entailment", 1: "neutral", 2: "contradiction", -1: None},
    "snli": {0: "entailment", 1: "neutral", 2: "contradiction", -1: None},
    "anli": {0: "entailment", 1: "neutral", 2: "contradiction"},
    # pietrolesci/nli_fever uses e/n/c ids; the original files use FEVER verdict strings.
    "fever_nli": {
        0: "entailment", 1: "neutral", 2: "contradiction", -1: None,
        "SUPPORTS": "entailment", "NOT ENOUGH INFO": "neutral", "REFUTES": "contradiction",
    },
    # WANLI's Hub files hold strings in `gold`; its training code uses alphabetical ids.
    "wanli": {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"},
    "wanli_ids": {0: "contradiction", 1: "entailment", 2: "neutral"},
    # GLUE WNLI is reversed with respect to QNLI/RTE/HANS.
    "wnli": {0: NON_ENTAILMENT, 1: "entailment"},
    "qnli": {0: "entailment", 1: NON_ENTAILMENT},
    "hans": {0: "entailment", 1: NON_ENTAILMENT},
    "rte": {0: "entailment", 1: NON_ENTAILMENT},
    # Raw label strings of the authors' files (MNLI/SNLI jsonl `gold_label`, Naik, MNLI-hard
    # `labels.test`, GLUE `diagnostic-full.tsv` Label, BIG-bench targets, HANS tsv); "-" and ""
    # mean no gold label and are dropped.
    "nli_names": {
        "entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction",
        "non-entailment": NON_ENTAILMENT, "not_entailment": NON_ENTAILMENT, "not-entailment": NON_ENTAILMENT,
        "non-contradiction": NON_CONTRADICTION, "no-entailment": NON_ENTAILMENT, "-": None, "": None,
    },
    # Liu et al. (2020b) mirrors on the Hub: IS-SD (HANS) is reversed, LI-TS is contradiction-binary.
    "robust_nli_is_sd": {0: NON_ENTAILMENT, 1: "entailment"},
    "robust_nli_li_ts": {0: NON_CONTRADICTION, 1: "contradiction"},
    # NQ-NLI (Chen et al. 2021) jsonl: `is_correct`.
    "nq_nli": {True: "entailment", False: NON_ENTAILMENT},
    # Label names used by our own JSONL files and the synthetic world.
    "names": {name: name for name in ALL_GOLD_LABELS},
}


def normalize_label_name(name: str) -> str:
    """`NOT_ENTAILMENT`, `not-entailment`, `Non_Entailment` -> `non-entailment`."""
    canonical = str(name).strip().lower().replace("_", "-")
    return "non-" + canonical[4:] if canonical.startswith("not-") else canonical


def map_label(source: str, raw: object, where: str = "") -> str | None:
    """Map a source's raw label to a canonical name (None = no gold, drop the example)."""
    try:
        table = SOURCE_LABEL_MAPS[source]
    except KeyError:
        raise NLIDataError(
            f"{where or 'label map'}: unknown label source {source!r}; "
            f"valid: {', '.join(sorted(SOURCE_LABEL_MAPS))}"
        ) from None
    if raw not in table:
        valid = ", ".join(repr(k) for k in table)
        raise NLIDataError(f"{where}: label {raw!r} is not in the {source} label map; valid: {valid}")
    return table[raw]


def model_label_permutation(label2id: Mapping[str, int]) -> list[int]:
    """Column index in a model's output for each internal id, read from its config.label2id.

    `logits[:, perm]` puts a foreign model's columns in our e/n/c order.
    """
    normalised = {normalize_label_name(k): int(v) for k, v in label2id.items()}
    missing = [name for name in LABELS if name not in normalised]
    if missing:
        raise NLIDataError(
            f"model config label2id {dict(label2id)} lacks {missing}; expected names {list(LABELS)}"
        )
    return [normalised[name] for name in LABELS]
