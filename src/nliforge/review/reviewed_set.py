"""`nliforge-review aggregate`: judgements -> a labeled training set in the data model, written
into the run's review folder and registered as `data/train_sets=<name>`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from omegaconf import DictConfig

from nliforge.errors import NLIDataError
from nliforge.data.jsonl import write_jsonl
from nliforge.data.register import check_can_register, check_train_set_name, register_train_set  # noqa: F401 - re-exported
from nliforge.review.actions import load_items, open_store, review_dir
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.home import user_conf_dir

log = logging.getLogger("nliforge.review")
def _automatic(cfg: DictConfig, records, judgements):
    from nliforge.review.teacher import automatic_records

    reviewers = sorted({j.annotator for j in judgements})
    wanted = cfg.aggregate.get("reviewer")
    if wanted is None and len(reviewers) != 1:
        raise NLIDataError(f"aggregate.reviewer: {len(reviewers)} reviewers in the store ({', '.join(reviewers) or 'none'}); "
                           "name the one whose judgements make the set")
    wanted = wanted or reviewers[0]
    chosen = [j for j in judgements if j.annotator == wanted]
    if not chosen:
        raise NLIDataError(f"aggregate.reviewer={wanted!r}: no judgements; reviewers: {', '.join(reviewers)}")
    return automatic_records(records, chosen), [], {"reviewer": wanted, "judgements": len(chosen)}


def _why_nothing(mode: str, records, judgements, report: dict) -> str:
    if mode == "annotators":
        from nliforge.review.aggregate import nothing_kept_reason

        return nothing_kept_reason(report["counts"])
    return f"{len(records)} items: reviewer {report['reviewer']!r} discarded all {len(records)}"


def aggregate_action(cfg: DictConfig) -> dict:
    """Aggregate the store's judgements, write reviewed.jsonl (+ disagreements), register the set."""
    from nliforge.review.aggregate import aggregate

    records = load_items(cfg)
    store = open_store(cfg, records)
    try:
        judgements = store.judgements()
    finally:
        store.close()
    mode = str(cfg.aggregate.mode)
    if mode == "annotators":
        res = aggregate(records, judgements, int(cfg.seed),
                        keep_trivial_single_revision=bool(cfg.aggregate.keep_trivial_single_revision))
        out, disagreements, report = res.records, res.disagreements, {"kappa": res.kappa, "counts": dict(res.counts)}
    elif mode == "automatic":
        out, disagreements, report = _automatic(cfg, records, judgements)
    else:
        raise NLIDataError(f"aggregate.mode={mode!r}; valid: annotators, automatic")
    if not out:
        raise NLIDataError(f"{review_dir(cfg) / 'review.sqlite'}: aggregate.mode={mode} kept no example "
                           f"({_why_nothing(mode, records, judgements, report)}); nothing written or registered: "
                           "add judgements (nliforge-review serve / import) and aggregate again")
    folder = review_dir(cfg)
    name = cfg.aggregate.get("name") or f"{Path(cfg.run).resolve().name}_reviewed"
    conf = Path(cfg.aggregate.register_dir) if cfg.aggregate.get("register_dir") else user_conf_dir()
    check_can_register(str(name), conf, str(Path(cfg.run).resolve()))   # a taken name: refused, nothing written
    write_jsonl(out, folder / "reviewed.jsonl")
    write_jsonl(disagreements, folder / "disagreements.jsonl")
    registered = register_train_set(str(name), folder / "reviewed.jsonl", conf, str(Path(cfg.run).resolve()))
    report.update({"mode": mode, "examples": len(records), "kept": len(out), "train_set": str(name),
                   "registered": str(registered)})
    atomic_write_text(folder / "review_report.json", [json.dumps(report, indent=2) + "\n"])
    log.info("reviewed set %s: %d of %d examples kept; data/train_sets=[%s]", name, len(out), len(records), name)
    return report
