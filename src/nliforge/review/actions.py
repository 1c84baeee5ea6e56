"""What each `nliforge-review` action does, as plain functions of the composed config. All state
lives in the run folder: `<run>/review/review.sqlite` (judgements) and the files written here."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.data.records import Record
from nliforge.utils.atomic import atomic_write_text

log = logging.getLogger("nliforge.review")
JUDGE_STAGE = "llm_judge"   # the judge's stage name in its cache (judge_cache.sqlite) and so in its ledger


def review_dir(cfg: DictConfig) -> Path:
    return Path(cfg.run) / "review"


def load_items(cfg: DictConfig) -> list[Record]:
    """The examples under review: `items`, or the run's final dataset."""
    path = Path(cfg["items"]) if cfg.get("items") else Path(cfg.run) / "dataset.jsonl"
    if not path.is_file():
        raise NLIDataError(f"{path}: no dataset to review (run nliforge-generate first, or give items=<file.jsonl>)")
    return read_jsonl(path)


def open_store(cfg: DictConfig, records: list[Record]):
    from nliforge.review.store import ReviewStore

    review_dir(cfg).mkdir(parents=True, exist_ok=True)
    store = ReviewStore(review_dir(cfg) / "review.sqlite")
    store.add_items(records)
    return store


def serve_action(cfg: DictConfig) -> dict:
    """Serve the review page over the run's store; an unsafe binding is refused before anything is written."""
    from nliforge.review.server import check_bind, serve

    token = os.environ.get(cfg.serve.token_env) if cfg.serve.get("token_env") else None
    try:
        check_bind(str(cfg.serve.host), token)
    except NLIDataError as err:
        raise NLIDataError(f"serve.host={cfg.serve.host}: {err}") from None
    records = load_items(cfg)
    open_store(cfg, records).close()
    serve(review_dir(cfg) / "review.sqlite", host=str(cfg.serve.host), port=int(cfg.serve.port), token=token,
          rubric=bool(cfg.serve.get("rubric", False)))
    return {}


def export_action(cfg: DictConfig) -> dict:
    from nliforge.review import crowd

    records, fmt = load_items(cfg), str(cfg.export.format)
    default = {"amt": "amt_batch.csv", "label_studio": "label_studio_tasks.json"}
    if fmt not in default:
        raise NLIDataError(f"export.format={fmt!r}; valid: {', '.join(default)}")
    out = Path(cfg.export.out) if cfg.export.get("out") else review_dir(cfg) / default[fmt]
    if fmt == "amt":
        crowd.export_amt(records, out, per_hit=int(cfg.export.per_hit))
    else:
        crowd.export_label_studio(records, out)
        atomic_write_text(out.with_name("label_studio_config.xml"), [crowd.label_studio_config()])
    log.info("exported %d examples to %s", len(records), out)
    return {"path": str(out), "examples": len(records)}


def import_action(cfg: DictConfig) -> dict:
    from nliforge.review import crowd
    from nliforge.review.wanli_annotations import import_wanli

    records, fmt = load_items(cfg), str(cfg["import"].format)
    readers = {"amt": crowd.import_amt, "label_studio": crowd.import_label_studio, "wanli": import_wanli}
    if fmt not in readers:
        raise NLIDataError(f"import.format={fmt!r}; valid: {', '.join(readers)}")
    judgements = readers[fmt](Path(cfg["import"].file), records)
    return _save_all(cfg, records, judgements)


def teacher_action(cfg: DictConfig) -> dict:
    from nliforge.review.teacher import teacher_review

    t, records = cfg.teacher, load_items(cfg)
    judgements = teacher_review(records, Path(t.model_dir), float(t.threshold), int(t.batch_size),
                                int(t.max_length), str(t.device))
    return _save_all(cfg, records, judgements)


def judge_action(cfg: DictConfig) -> dict:
    from nliforge.review.teacher import llm_judge_review

    records = load_items(cfg)
    review_dir(cfg).mkdir(parents=True, exist_ok=True)
    judgements = llm_judge_review(records, OmegaConf.to_container(cfg.generator, resolve=True),
                                  review_dir(cfg) / "judge_cache.sqlite", stage=JUDGE_STAGE)
    out = _save_all(cfg, records, judgements)
    record_judge_ledger(cfg)
    return out


def record_judge_ledger(cfg: DictConfig) -> dict:
    """The judge's ledger (requests sent and cached, tokens, cost, faults) into the run's manifest.json
    under `ledger.review_judge`, next to the generation stages' entries, which are kept."""
    from nliforge.generation.cache import ResponseCache
    from nliforge.engine.run_folder import RunFolder

    with ResponseCache(review_dir(cfg) / "judge_cache.sqlite") as cache:
        entry = cache.ledger(JUDGE_STAGE)
    folder = RunFolder(cfg.run)
    folder.update_manifest(ledger={**folder.manifest().get("ledger", {}), "review_judge": entry})
    return entry


def _save_all(cfg: DictConfig, records: list[Record], judgements) -> dict:
    store = open_store(cfg, records)
    try:
        for j in judgements:
            store.save(j)
    finally:
        store.close()
    log.info("saved %d judgements to %s", len(judgements), review_dir(cfg) / "review.sqlite")
    return {"judgements": len(judgements)}
