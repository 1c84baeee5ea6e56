"""Deterministic derivations: challenge sets rebuilt offline from any list of Records.

An eval-set YAML names one with `loader: derived`, `base: <eval set name | world split>` and
`derivation: <name>`; `registry.load_set` loads the base and applies it. Each derivation is a
pure function of the records (and, for `stress_spelling`, of `seed`), so the same base gives the
same bytes on every machine.

Naik et al. (2018) stress tests (procedures in shared/EVAL_SETS.md §3, §4.2):

- `stress_word_overlap`  hypothesis gets the tautology " and true is true";
- `stress_negation`      hypothesis gets " and false is not true";
- `stress_length_mismatch` premise gets " and true is true" five times;

  all three with the authors' insertion rule (`insert_at_sentence_end`): the addition goes just
  before the FIRST sentence-final punctuation ([.!?] and the whitespace after it), any text
  after that first sentence is dropped, and a sentence with no [.!?] gets the addition at its
  end. Gold labels are unchanged. Over MNLI dev these reproduce the released files' sentences
  (the released files are also sorted by premise; we keep the base order, which does not change
  accuracy).
- `stress_spelling`      one content word of the hypothesis gets two adjacent characters swapped,
  chosen by a random generator seeded with (`seed`, record uid), so a record's perturbation does
  not depend on the order or the size of the set. A *content word* here is a whitespace token
  which, with its leading/trailing punctuation stripped, is letters only, at least 2 letters
  long, not in `FUNCTION_WORDS` (articles, pronouns, prepositions, conjunctions, auxiliaries
  and modals, negation, quantifiers) and has two adjacent differing letters (so the swap
  changes it). Pairs whose hypothesis has no content word are dropped. Naik's own script is
  unseeded and also mixes in keyboard-adjacent substitutions, so this set is Naik-*like*, not
  byte-identical to the released one. Gold labels are unchanged.

Liu et al. (2020b) LI-TS (text swap, EVAL_SETS.md §4.3):

- `li_ts` premise and hypothesis swapped; contradiction stays contradiction, entailment and
  neutral become non-contradiction (a 2-class set with `positive: contradiction`).

Kaushik et al. (2020) counterfactually-augmented data (CAD):

- `revision_pairs` (needs `originals:` in the YAML) pairs a file of revisions with the originals it
  revises by position: rows k*i .. k*i+k-1 of the revised file (k = `revisions_per_original`, 2 in
  CAD: one toward each other label) revise row i of the originals. Each revision becomes a pair
  (original, revision) as in `counterfactual_pairs`. The layout is checked: most revisions must keep
  one side of their original word for word (CAD test: 400/400 hypothesis revisions keep the premise,
  399/400 premise revisions keep the hypothesis), else the files do not line up and the load fails.

DISCO counterfactual evaluation (Chen et al., 2023, §5.2):

- `counterfactual_pairs` each counterfactual record of the DISCO pipeline (meta `original_*`)
  becomes two records, its original then itself, tagged with meta `pair_id` and `role`; the
  suite then also reports δs and counterfactual accuracy (evaluation/counterfactual.py).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from nliforge.errors import NLIDataError
from nliforge.data.labels import NON_CONTRADICTION
from nliforge.data.records import Record

TAUTOLOGY = " and true is true"
NEGATED_FALSEHOOD = " and false is not true"
LENGTH_MISMATCH_REPEATS = 5

FUNCTION_WORDS: frozenset[str] = frozenset("""
a an the this that these those
i me my mine myself you your yours yourself yourselves he him his himself she her hers herself
it its itself we us our ours ourselves they them their theirs themselves one ones
who whom whose which what whatever whoever
about above across after against along among around as at before behind below beneath beside
besides between beyond by down during except for from in inside into like near of off on onto
out outside over past per since through throughout till to toward towards under underneath
until up upon via with within without
and or but nor so yet if then than because although though while whereas unless whether
am is are was were be been being have has had having do does did doing done
will would shall should can could may might must ought
not no nor never none nothing nobody
all any both each either every few many more most much neither other several some such
there here where when why how also just only too very
""".split())

Derivation = Callable[[Sequence[Record], int], list[Record]]
DERIVATIONS: dict[str, Derivation] = {}
# Label space each derivation yields when it is not the base's: the YAML must agree.
DERIVED_CLASSES: dict[str, tuple[int, str | None]] = {"li_ts": (2, "contradiction")}

_SENTENCE_END = re.compile(r"[.!?]\s*")


def register_derivation(name: str) -> Callable[[Derivation], Derivation]:
    def deco(fn: Derivation) -> Derivation:
        if name in DERIVATIONS:
            raise ValueError(f"derivation {name!r} registered twice")
        DERIVATIONS[name] = fn
        return fn
    return deco


def derive(records: Sequence[Record], derivation: str, seed: int = 0, where: str = "derivation",
           source: str | None = None) -> list[Record]:
    """Apply the named derivation; uids get a `~<derivation>` suffix and meta the base uid."""
    if derivation not in DERIVATIONS:
        raise NLIDataError(f"{where}={derivation!r}: unknown derivation; valid: {', '.join(sorted(DERIVATIONS))}")
    out = DERIVATIONS[derivation](records, int(seed))
    return [Record(f"{r.uid}~{derivation}", r.premise, r.hypothesis, r.label,
                   source if source is not None else r.source,
                   {**r.meta, "derivation": derivation, "base_uid": r.uid})
            for r in out]


def insert_at_sentence_end(text: str, addition: str) -> str:
    """Naik's insertion rule: `addition` before the first [.!?] (text after that sentence dropped)."""
    match = _SENTENCE_END.search(text)
    if match is None:
        return text + addition
    return text[: match.start()] + addition + match.group(0)


def _replace(r: Record, premise: str | None = None, hypothesis: str | None = None,
             label: str | None = None) -> Record:
    return Record(r.uid, r.premise if premise is None else premise, r.hypothesis if hypothesis is None else hypothesis,
                  r.label if label is None else label, r.source, dict(r.meta))


@register_derivation("stress_word_overlap")
def stress_word_overlap(records: Sequence[Record], seed: int = 0) -> list[Record]:
    return [_replace(r, hypothesis=insert_at_sentence_end(r.hypothesis, TAUTOLOGY)) for r in records]


@register_derivation("stress_negation")
def stress_negation(records: Sequence[Record], seed: int = 0) -> list[Record]:
    return [_replace(r, hypothesis=insert_at_sentence_end(r.hypothesis, NEGATED_FALSEHOOD)) for r in records]


@register_derivation("stress_length_mismatch")
def stress_length_mismatch(records: Sequence[Record], seed: int = 0) -> list[Record]:
    addition = TAUTOLOGY * LENGTH_MISMATCH_REPEATS
    return [_replace(r, premise=insert_at_sentence_end(r.premise, addition)) for r in records]


def _swappable_positions(word: str) -> list[int]:
    return [i for i in range(len(word) - 1) if word[i] != word[i + 1]]


def content_word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each content word of `text` (see the module docstring for the definition)."""
    spans = []
    for tok in re.finditer(r"\S+", text):
        core = re.search(r"^\W*(.*?)\W*$", tok.group(0))
        word = core.group(1)
        start = tok.start() + core.start(1)
        if (len(word) >= 2 and word.isalpha() and word.isascii() and word.lower() not in FUNCTION_WORDS
                and _swappable_positions(word)):
            spans.append((start, start + len(word)))
    return spans


def swap_in_content_word(text: str, rng: random.Random) -> str | None:
    """Swap two adjacent (differing) characters of one random content word; None if there is none."""
    spans = content_word_spans(text)
    if not spans:
        return None
    start, end = rng.choice(spans)
    word = text[start:end]
    i = rng.choice(_swappable_positions(word))
    return text[:start] + word[:i] + word[i + 1] + word[i] + word[i + 2:] + text[end:]


@register_derivation("stress_spelling")
def stress_spelling(records: Sequence[Record], seed: int = 0) -> list[Record]:
    out = []
    for r in records:
        # str seeds are hashed with SHA-512 by `random`: stable across processes and platforms
        perturbed = swap_in_content_word(r.hypothesis, random.Random(f"{seed}|{r.uid}"))
        if perturbed is not None:
            out.append(_replace(r, hypothesis=perturbed))
    return out


@register_derivation("li_ts")
def li_ts(records: Sequence[Record], seed: int = 0) -> list[Record]:
    out = []
    for r in records:
        if r.label == "contradiction":
            label = "contradiction"
        elif r.label in ("entailment", "neutral", NON_CONTRADICTION):
            label = NON_CONTRADICTION
        else:
            raise NLIDataError(f"li_ts: record {r.uid!r} has label {r.label!r}; the text swap needs "
                               f"entailment, neutral or contradiction gold labels")
        out.append(_replace(r, premise=r.hypothesis, hypothesis=r.premise, label=label))
    return out


@register_derivation("counterfactual_pairs")
def counterfactual_pairs(records: Sequence[Record], seed: int = 0) -> list[Record]:
    from nliforge.data.pairs import paired_eval_records

    return paired_eval_records(records)


MIN_SHARED_SIDE = 0.9   # share of revisions that keep their original's premise or hypothesis verbatim


@register_derivation("revision_pairs")
def _revision_pairs_needs_originals(records: Sequence[Record], seed: int = 0) -> list[Record]:
    raise NLIDataError("revision_pairs: the set's YAML must name `originals:` (loaded by the registry)")


def revision_pairs(originals: Sequence[Record], revised: Sequence[Record], per: int, where: str,
                   source: str) -> list[Record]:
    """(original, revision) pairs for revisions laid out by position (see the module docstring)."""
    from nliforge.data.pairs import paired_eval_records

    if per < 1 or len(revised) != per * len(originals):
        raise NLIDataError(f"{where}: {len(revised)} revisions for {len(originals)} originals; revision_pairs "
                           f"needs exactly revisions_per_original={per} revisions per original, in order")
    counterfactuals = []
    for k, rev in enumerate(revised):
        orig = originals[k // per]
        counterfactuals.append(Record(rev.uid, rev.premise, rev.hypothesis, rev.label, source, {
            **rev.meta, "original_uid": orig.uid, "original_premise": orig.premise,
            "original_hypothesis": orig.hypothesis, "original_label": orig.label}))
    kept = sum(c.premise == c.meta["original_premise"] or c.hypothesis == c.meta["original_hypothesis"]
               for c in counterfactuals)
    if kept < MIN_SHARED_SIDE * len(counterfactuals):
        raise NLIDataError(f"{where}: only {kept} of {len(counterfactuals)} revisions keep their original's premise "
                           f"or hypothesis; the revised file and the originals do not line up by position")
    return paired_eval_records(counterfactuals)


# HANS's stratified subset and McCoy et al.'s MNLI-hard pairs (their functions in data/hans.py).
from nliforge.data import hans as _hans  # noqa: E402

register_derivation("hans_subcase_200")(_hans.hans_subcase_200)
register_derivation("mccoy_hard")(_hans.mccoy_hard)
