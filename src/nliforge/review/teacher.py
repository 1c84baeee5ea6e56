"""Automatic review: a trained NLI classifier as teacher (DISCO §3.2: a strong NLI model keeps only
the examples it is confident about) or an LLM asked for a one-word label.

Each yields one Judgement per record; `automatic_records` turns one reviewer's judgements into
labeled records (discards dropped). Neither reviewer revises text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.data.records import Record, check_unique_uids
from nliforge.generation.types import Failure, GenerationRequest, Sampling
from nliforge.models.predict import load_classifier, predict_probs
from nliforge.review.aggregate import automatic_records
from nliforge.data.judgements import Judgement

__all__ = ["JUDGE_INSTRUCTION", "JUDGE_SAMPLING", "automatic_records", "judge_messages", "judge_prompt",
           "llm_judge_review", "parse_judge_answer", "teacher_review"]


def teacher_review(records: Sequence[Record], model_dir: str | Path, threshold: float = 0.9, batch_size: int = 64,
                   max_length: int = 128, device: str = "cpu", progress: bool = True) -> list[Judgement]:
    """The teacher's argmax label when p(argmax) >= threshold, else "discard"; `confidence` = p(argmax).

    Annotator `teacher:<folder name>` (the folder given: a run folder or its model/)."""
    check_unique_uids(records, "review items")
    probs = predict_probs(load_classifier(model_dir, key="teacher.model_dir"), records, batch_size=batch_size,
                          max_length=max_length, device=device, progress=progress, desc="teacher")
    annotator, now = f"teacher:{Path(model_dir).resolve().name}", time.time()
    out = []
    for rec, p in zip(records, probs):
        best = int(np.argmax(p))
        conf = float(p[best])
        label = LABELS[best] if conf >= threshold else "discard"
        extra = {"predicted": LABELS[best], "probs": {name: float(v) for name, v in zip(LABELS, p)},
                 "threshold": float(threshold)}
        out.append(Judgement(rec.uid, annotator, label, rec.premise, rec.hypothesis, source="teacher",
                             confidence=conf, created_at=now, extra=extra))
    return out


# ------------------------------------------------------------------------------------ LLM judge
JUDGE_INSTRUCTION = ("Decide how the hypothesis relates to the premise. Answer with one word: entailment (the "
                     "hypothesis must be true if the premise is true), contradiction (it cannot be true), or "
                     "neutral (it may or may not be true).")
# Greedy, a few tokens, one line: the answer is a single word.
JUDGE_SAMPLING = Sampling(max_tokens=5, temperature=0.0, top_p=1.0, stop=("\n",))
_ANSWERS = (("entail", "entailment"), ("neutral", "neutral"), ("contradict", "contradiction"))
_WORD = re.compile(r"[a-z]+")


def judge_prompt(premise: str, hypothesis: str) -> str:
    """Completion style: the instruction, the pair, and `Answer:` for the model to continue."""
    return f"{JUDGE_INSTRUCTION}\n\nPremise: {premise}\nHypothesis: {hypothesis}\nAnswer:"


def judge_messages(premise: str, hypothesis: str) -> tuple[dict[str, str], ...]:
    """Chat style: the instruction as the system turn, the pair as the user turn."""
    return ({"role": "system", "content": JUDGE_INSTRUCTION + " Reply with the word only."},
            {"role": "user", "content": f"Premise: {premise}\nHypothesis: {hypothesis}"})


def parse_judge_answer(text: str) -> str | None:
    """The label named by the answer's first word (entails/contradicts accepted), or None."""
    match = _WORD.search((text or "").lower())
    if match is None:
        return None
    for stem, label in _ANSWERS:
        if match.group(0).startswith(stem):
            return label
    return None


def _plain(cfg: Any) -> dict:
    """A generator config as plain containers (a Hydra node is resolved first)."""
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cfg, DictConfig):
        return OmegaConf.to_container(cfg, resolve=True)
    if not isinstance(cfg, Mapping):
        raise NLIDataError(f"generator config: expected a mapping (kind, model, ...), got {type(cfg).__name__}")
    return dict(cfg)


def llm_judge_review(records: Sequence[Record], generator_cfg: Mapping[str, Any], cache_path: str | Path,
                     sampling: Sampling | None = None, stage: str = "llm_judge") -> list[Judgement]:
    """One LLM label per record through `build_backend` + `run_requests` (answers cached at
    `cache_path`, so a rerun sends nothing twice). Chat endpoints (`kind: openai_chat` or
    `chat: true`) get `judge_messages`, others `judge_prompt`. An unparseable answer or a rejected
    request gives "discard" with the reason in `extra`. Annotator `llm:<model>`."""
    from nliforge.generation.answer import answer_requests

    check_unique_uids(records, "review items")
    cfg = _plain(generator_cfg)
    chat = bool(cfg.get("chat", False)) or cfg.get("kind") == "openai_chat"
    sampling = sampling or JUDGE_SAMPLING
    requests = [GenerationRequest(uid=r.uid, prompt=judge_prompt(r.premise, r.hypothesis), sampling=sampling,
                                  messages=judge_messages(r.premise, r.hypothesis) if chat else None, seed=0)
                for r in records]
    answers, _, generator = answer_requests(cfg, requests, cache_path, stage)
    annotator, now = f"llm:{generator['model']}", time.time()
    out = []
    for rec in records:
        answer = answers[rec.uid]
        if isinstance(answer, Failure):
            label, extra = "discard", {"reason": f"request_failed:{answer.kind}", "message": answer.message}
        else:
            text = answer.texts[0] if answer.texts else ""
            label, extra = parse_judge_answer(text), {"answer": text}
            if label is None:
                label, extra["reason"] = "discard", "unparseable"
        out.append(Judgement(rec.uid, annotator, label, rec.premise, rec.hypothesis, source="llm_judge",
                             created_at=now, extra=extra))
    return out
