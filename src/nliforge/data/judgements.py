"""The data model of review: one judgement by one reviewer of one example, whatever its
source (the review page, an AMT batch, Label Studio, a teacher classifier, an LLM judge)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from nliforge.errors import NLIDataError

__all__ = ["ANNOTATORS_PER_ITEM", "REVIEW_LABELS", "RUBRIC_CRITERIA", "SOURCES", "Judgement"]

# NLI-Set's rubric: the 8 criteria a judge (a person or an LLM) scores 1-10 for each long text.
RUBRIC_CRITERIA = ("content_coverage", "accuracy", "conciseness", "coherence_structure", "readability",
                   "non_redundancy", "referential_clarity", "focus")
REVIEW_LABELS = ("entailment", "neutral", "contradiction", "discard")
SOURCES = ("page", "amt", "label_studio", "teacher", "llm_judge")
ANNOTATORS_PER_ITEM = 2   # WANLI §2.4: two distinct workers review each example


@dataclass(frozen=True)
class Judgement:
    """One reviewer's verdict on one example.

    `premise`/`hypothesis` are the texts as submitted: equal to the originals unless `revised`.
    `rubric` maps RUBRIC_CRITERIA to 1-10 scores (long texts); `confidence` is a teacher's p(label).
    """

    uid: str
    annotator: str
    label: str
    premise: str
    hypothesis: str
    revised: bool = False
    source: str = "page"
    rubric: dict[str, int] | None = None
    confidence: float | None = None
    created_at: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.label not in REVIEW_LABELS:
            raise NLIDataError(f"judgement of {self.uid!r} by {self.annotator!r}: label {self.label!r}; "
                               f"expected one of {', '.join(REVIEW_LABELS)}")
        if self.source not in SOURCES:
            raise NLIDataError(f"judgement of {self.uid!r}: source {self.source!r}; expected one of {', '.join(SOURCES)}")
        for key, score in (self.rubric or {}).items():
            if key not in RUBRIC_CRITERIA or not (isinstance(score, int) and 1 <= score <= 10):
                raise NLIDataError(f"judgement of {self.uid!r}: rubric {key}={score!r}; expected an integer 1-10 "
                                   f"for one of {', '.join(RUBRIC_CRITERIA)}")

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> Judgement:
        return cls(**obj)
