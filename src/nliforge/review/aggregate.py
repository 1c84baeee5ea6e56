"""Two annotators per example -> one labeled Record, by the WANLI rules (§2.4, App. D).

Per example, in this order:
1. `discarded`: either annotator chose "discard" -> the example is dropped.
2. `both_revised`: both revised the text -> one of the two revisions, chosen at random (seeded);
   the label is the one its author gave (a label belongs to the text it was given for).
3. One annotator revised:
   - `trivial_single_revision` (option `keep_trivial_single_revision`, on by default): the revision
     only changes punctuation, case or whitespace, as the original WANLI code allows -> the
     revised text is kept; such an edit leaves the meaning alone, so both labels stand for it and
     a disagreement between them is settled at random, as in rule 5.
   - `single_revision_ignored`: otherwise -> the paper keeps a revision only when both annotators
     revised (App. D.3: single revisions often re-introduced artifacts), so the original text is
     kept, with the label of the annotator who did not revise: the only label given to that text.
4. `agreed`: neither revised, same label -> that label.
5. `disagreement`: neither revised, different labels -> one of them at random (seeded); both
   stay in `meta.review.labels`, and the example also goes into the disagreement set (App. D.4:
   such disagreements are mostly true ambiguity, worth keeping for study).

"Revised" is decided from the text, not the judgement's flag: a submitted premise or hypothesis
that differs from the original after whitespace normalisation.

Which judgements count: an example needs two distinct annotators (fewer: `incomplete`, left out).
An annotator who judged an example twice counts once, with their latest judgement. With more than
two annotators the first two (by their first `created_at`, ties in input order) are used and the
rest are counted in `judgements_ignored`.

Agreement: Cohen's kappa over the three NLI labels on the examples both annotators labeled
without revision (rules `agreed` and `disagreement`), as the paper reports it (0.60). Discards
are excluded: "discard" is not a label of the pair's relation, and the paper's "labeled" set
leaves them out.

Randomness is `random.Random` seeded with sha256(seed, uid), so an example's outcome does not
depend on which other examples are aggregated with it.
"""

from __future__ import annotations

import hashlib
import math
import random
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.data.records import Record, check_unique_uids
from nliforge.review.text import differs, normalize_whitespace, trivial_change
from nliforge.data.judgements import ANNOTATORS_PER_ITEM, Judgement

RULES = ("discarded", "both_revised", "trivial_single_revision", "single_revision_ignored", "agreed", "disagreement")
COUNT_KEYS = ("items", "judgements", "complete", "incomplete", "more_than_two", "judgements_ignored",
              "repeat_judgements_replaced", *RULES, "kept", "kappa_items")


@dataclass
class AggregateResult:
    """The reviewed records, the disagreement set, Cohen's kappa (None when undefined) and counts."""

    records: list[Record]
    disagreements: list[Record]
    kappa: float | None
    counts: dict[str, int] = field(default_factory=dict)


def item_rng(seed: int, uid: str) -> random.Random:
    """The random source of one example: depends on (seed, uid) only."""
    digest = hashlib.sha256(f"{seed}:{uid}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def reviewed_source(source: str) -> str:
    """`wanli` -> `wanli_reviewed`: the set a reviewed record belongs to."""
    return f"{source}_reviewed" if source else "reviewed"


def is_revised(rec: Record, j: Judgement) -> bool:
    return differs(rec.premise, j.premise) or differs(rec.hypothesis, j.hypothesis)


def is_trivial_revision(rec: Record, j: Judgement) -> bool:
    return trivial_change(rec.premise, j.premise) and trivial_change(rec.hypothesis, j.hypothesis)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa over the three NLI labels; None without pairs or when chance agreement is 1."""
    if not pairs:
        return None
    from sklearn.metrics import cohen_kappa_score

    first, second = zip(*pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(cohen_kappa_score(first, second, labels=list(LABELS)))
    return value if math.isfinite(value) else None


def select_pair(judgements: Iterable[Judgement], counts: Counter) -> list[Judgement]:
    """The judgements that count for one example: latest per annotator, first two annotators."""
    latest: dict[str, Judgement] = {}
    for j in sorted(judgements, key=lambda j: j.created_at):  # stable: ties keep input order
        if j.annotator in latest:
            counts["repeat_judgements_replaced"] += 1
        latest[j.annotator] = j  # a re-judgement replaces the value, keeps the annotator's place
    chosen = list(latest.values())
    if len(chosen) > ANNOTATORS_PER_ITEM:
        counts["more_than_two"] += 1
        counts["judgements_ignored"] += len(chosen) - ANNOTATORS_PER_ITEM
    return chosen[:ANNOTATORS_PER_ITEM]


def decide(rec: Record, pair: Sequence[Judgement], rng: random.Random,
           keep_trivial_single_revision: bool = True) -> tuple[str, Judgement | None, Judgement | None]:
    """(rule, judgement whose text is kept or None for the original, judgement whose label is kept)."""
    a, b = pair
    if "discard" in (a.label, b.label):
        return "discarded", None, None
    revised = [is_revised(rec, j) for j in pair]
    if all(revised):
        chosen = rng.choice(pair)
        return "both_revised", chosen, chosen
    if any(revised):
        reviser, other = (a, b) if revised[0] else (b, a)
        if keep_trivial_single_revision and is_trivial_revision(rec, reviser):
            return "trivial_single_revision", reviser, (a if a.label == b.label else rng.choice(pair))
        return "single_revision_ignored", None, other
    if a.label == b.label:
        return "agreed", None, a
    return "disagreement", None, rng.choice(pair)


def reviewed_record(rec: Record, pair: Sequence[Judgement], rule: str, text_from: Judgement | None,
                    label_from: Judgement) -> Record:
    """The labeled record with the reviewers' provenance in `meta.review`."""
    review = {"labels": [j.label for j in pair], "annotators": [j.annotator for j in pair],
              "sources": [j.source for j in pair], "revised": text_from is not None, "rule": rule,
              "label_from": label_from.annotator}
    premise, hypothesis = rec.premise, rec.hypothesis
    if text_from is not None:
        if differs(rec.premise, text_from.premise):
            premise = normalize_whitespace(text_from.premise)
        if differs(rec.hypothesis, text_from.hypothesis):
            hypothesis = normalize_whitespace(text_from.hypothesis)
        review["revision_by"] = text_from.annotator
        review["original"] = {"premise": rec.premise, "hypothesis": rec.hypothesis}
    meta = {**rec.meta, "review": review}
    return Record(rec.uid, premise, hypothesis, label_from.label, reviewed_source(rec.source), meta)


def group_by_uid(records: Sequence[Record], judgements: Iterable[Judgement]) -> dict[str, list[Judgement]]:
    """Judgements per record uid; a judgement of an unknown uid means mismatched inputs (an error)."""
    check_unique_uids(records, "review items")
    groups: dict[str, list[Judgement]] = {r.uid: [] for r in records}
    for j in judgements:
        if j.uid not in groups:
            raise NLIDataError(f"judgement by {j.annotator!r} ({j.source}) is for uid {j.uid!r}, which is not "
                               f"among the {len(records)} review items; expected judgements of these items only")
        groups[j.uid].append(j)
    return groups


def aggregate(records: Sequence[Record], judgements: Iterable[Judgement], seed: int,
              keep_trivial_single_revision: bool = True) -> AggregateResult:
    """Apply the WANLI rules (module docstring) to every record; records keep their input order."""
    judgements = list(judgements)
    groups = group_by_uid(records, judgements)
    counts: Counter = Counter({key: 0 for key in COUNT_KEYS})
    counts["items"], counts["judgements"] = len(records), len(judgements)
    out, disagreements, kappa_pairs = [], [], []
    for rec in records:
        pair = select_pair(groups[rec.uid], counts)
        if len(pair) < ANNOTATORS_PER_ITEM:
            counts["incomplete"] += 1
            continue
        counts["complete"] += 1
        rule, text_from, label_from = decide(rec, pair, item_rng(seed, rec.uid), keep_trivial_single_revision)
        counts[rule] += 1
        if rule in ("agreed", "disagreement"):
            kappa_pairs.append((pair[0].label, pair[1].label))
        if label_from is None:
            continue
        reviewed = reviewed_record(rec, pair, rule, text_from, label_from)
        out.append(reviewed)
        if rule == "disagreement":
            disagreements.append(reviewed)
    counts["kept"], counts["kappa_items"] = len(out), len(kappa_pairs)
    return AggregateResult(out, disagreements, cohen_kappa(kappa_pairs), dict(counts))


_WHY = {"incomplete": "with fewer than two annotators", "discarded": "discarded by an annotator"}


def nothing_kept_reason(counts: dict[str, int]) -> str:
    """Why an aggregation kept no example, from its counts: `100 items: 100 with fewer than two annotators
    (judgements: 57)`; each rule that dropped examples is named with how many it dropped."""
    dropped = [f"{counts[key]} {why}" for key, why in _WHY.items() if counts.get(key)]
    return (f"{counts.get('items', 0)} items, {counts.get('judgements', 0)} judgements: "
            + (", ".join(dropped) if dropped else "no item has judgements"))


def automatic_records(records: Sequence[Record], judgements: Iterable[Judgement]) -> list[Record]:
    """One automatic reviewer (teacher, LLM judge) -> labeled records: its label is taken as is,
    "discard" drops the example. Every record needs exactly one reviewer's judgement (a reviewer's
    repeated judgement of an example: the latest counts)."""
    groups = group_by_uid(records, judgements)
    out = []
    for rec in records:
        found = sorted(groups[rec.uid], key=lambda j: j.created_at)
        if not found:
            raise NLIDataError(f"uid {rec.uid!r}: no automatic judgement; expected one per review item")
        if len({j.annotator for j in found}) > 1:
            raise NLIDataError(f"uid {rec.uid!r}: judged by {sorted({j.annotator for j in found})}; expected one "
                               "automatic reviewer (use aggregate() for two annotators)")
        j = found[-1]
        if j.label == "discard":
            continue
        review = {"labels": [j.label], "annotators": [j.annotator], "sources": [j.source], "revised": False,
                  "rule": "automatic", "label_from": j.annotator}
        if j.confidence is not None:
            review["confidence"] = j.confidence
        out.append(Record(rec.uid, rec.premise, rec.hypothesis, j.label, reviewed_source(rec.source),
                          {**rec.meta, "review": review}))
    return out
