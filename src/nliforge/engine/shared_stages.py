"""Stages any generation pipeline can use: the task classifier, the demo's small generator LM,
and `generate` (every prompt row through the configured generator, via the exactly-once runner).

Importing this module loads no torch, pandas or model code (a pipeline that only generates starts as
fast as `nliforge-generate --help`): the classifier's modules load when its stage runs."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.generation.types import Failure, GenerationRequest, Sampling
from nliforge.engine.stages import Stage, StageContext, StageOutput, stage
from nliforge.utils.run_dir import finished_results

if TYPE_CHECKING:
    from nliforge.engine.classifier import ClassifierRun

log = logging.getLogger(__name__)
CACHE_FILE = "llm_cache.sqlite"
PROMPT_FIELDS = ("uid", "prompt", "prompt_hash")   # what `generate_from` reads of a prompt row
CHAT_FIELDS = ("messages",)                        # and, for a chat generator (`generator.chat: true`)
GENERATED_FIELDS = ("uid", "prompt_uid", "sample", "text", "finish_reason")   # and writes per sample


def classifier_dir(cfg: DictConfig) -> Path:
    """The classifier run folder: `pipeline.classifier.run_dir`, or the one this run trains."""
    given = cfg.pipeline.get("classifier", {}).get("run_dir")
    return Path(given) if given else Path(cfg.paths.output_dir) / "classifier"


def classifier_run(cfg: DictConfig) -> ClassifierRun:
    from nliforge.engine.classifier import ClassifierRun

    return ClassifierRun(classifier_dir(cfg))


@stage("classifier", writes=("uid", "run_dir", "train_examples", "epochs", "reused"))
def classifier_stage(ctx: StageContext) -> StageOutput:
    """Train the task model with the config's data/model/trainer groups, unless one is given; with
    `reuse` (a folder), copy one trained before with the same config, data, code and environment."""
    from nliforge.engine.classifier import classifier_training_config, train_classifier
    from nliforge.engine.classifier_reuse import OUT, copy_kept, expected_epochs, keep, reuse_key

    out = classifier_dir(ctx.cfg)
    settings = ctx.cfg.pipeline.get("classifier", {})
    reused = False
    if not settings.get("run_dir"):
        reuse_dir = settings.get("reuse")
        training = classifier_training_config(ctx.cfg, OUT) if reuse_dir else None
        key = reuse_key(training) if training is not None else None
        expect = expected_epochs(training) if key is not None else {}
        reused = key is not None and not out.exists() and copy_kept(reuse_dir, key, out, expect)
        if not reused and len(finished_results(out)) == 2:   # trained before the stage was recorded (a kill between)
            log.info("classifier: %s holds a finished run (metrics.csv, model/); kept as it is", out)
        elif not reused:
            train_classifier(ctx.cfg, out)
            if key is not None:
                keep(out, reuse_dir, key, expect)
    run = classifier_run(ctx.cfg)
    n = len(run.train_records())
    return StageOutput([{"uid": "classifier", "run_dir": str(out), "train_examples": n,
                         "epochs": len(run.epoch_files()), "reused": reused}], count_in=n)


@stage("generator_lm", writes=("uid", "path", "documents"))
def generator_lm_stage(ctx: StageContext) -> StageOutput:
    """The offline demo's generator: a tiny causal LM trained on world pairs in a pipeline's prompt format
    (`documents`: the name of the pipeline whose `stand_in_documents` write them, by default the running
    one's) from the world `split`; `labels: false` trains it on the split's pairs without their labels."""
    from nliforge.data.registry import load_set
    from nliforge.engine.registry import load_pipeline
    from nliforge.models.causal_lm import train_prompt_lm

    s = ctx.settings
    fmt = str(s.get("documents") or ctx.cfg.pipeline.name)
    make_documents = load_pipeline(fmt).stand_in_documents
    if make_documents is None:
        raise NLIDataError(f"pipeline.generator_lm.documents={fmt!r}: that pipeline declares no stand-in documents "
                           "(PipelineSpec.stand_in_documents); name one that does, e.g. wanli or disco")
    spec = {"name": "world", "loader": "world", "split": s.get("split", "train")}
    records = load_set(spec, "pipeline.generator_lm", OmegaConf.to_container(ctx.cfg.world, resolve=True),
                       ctx.cfg.paths.cache_dir)
    docs = make_documents(records, s, int(ctx.cfg.seed))
    path = train_prompt_lm(docs, Path(ctx.cfg.generator.model), **OmegaConf.to_container(s.train, resolve=True),
                           seed=int(ctx.cfg.seed))
    return StageOutput([{"uid": "generator_lm", "path": str(path), "documents": len(docs)}], count_in=len(records))


def request_seed(run_seed: int, prompt_hash: str, first_sample: int) -> int:
    """A per-request sampling seed: reproducible, and different for every prompt and sample."""
    digest = hashlib.sha256(f"{run_seed}:{prompt_hash}:{first_sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def build_requests(prompts: list[dict], settings: DictConfig, chat: bool, run_seed: int) -> list[GenerationRequest]:
    """n samples per prompt, `per_request` of them in one request (n=5 in one call is cheaper)."""
    sampling = Sampling.from_dict(OmegaConf.to_container(settings.sampling, resolve=True))
    n, per = int(settings.n), int(settings.get("per_request", settings.n))
    requests = []
    for row in prompts:
        messages = tuple(row["messages"]) if chat else None
        for first in range(0, n, per):
            requests.append(GenerationRequest(
                uid=f"{row['uid']}:{first}", prompt=row["prompt"], sampling=sampling, n=min(per, n - first),
                first_sample=first, messages=messages, seed=request_seed(run_seed, row["prompt_hash"], first),
                suffix=None if chat else row.get("suffix")))
    return requests


def generate_stage_for(source: str = "prompts", name: str = "generate") -> Stage:
    """The shared generation stage `name` over the prompt rows of the stage `source`: it reads `uid`,
    `prompt`, `prompt_hash` (and `messages` with a chat generator; `suffix` if present) and writes one row
    per sample (GENERATED_FIELDS), calling the run's `generator`; answers are cached as they arrive
    (resume = no resend). The fields and the slot are declared, so both are checked before the run."""
    def run(ctx: StageContext) -> StageOutput:
        return generate_from(ctx, source)

    run.__qualname__ = f"generate_stage_for({source!r})"
    return stage(name, inputs=(source,), reads=PROMPT_FIELDS, writes=GENERATED_FIELDS, chat_reads=CHAT_FIELDS,
                 generators=("generator",))(run)


generate_stage = generate_stage_for("prompts")   # `generate` over a stage named `prompts` (WANLI)


def merge_ledger(ctx: StageContext, entries: dict[str, dict], **fields) -> None:
    """Add ledger entries to the manifest without dropping those of other stages (the one way every
    stage records its ledger)."""
    ledger = {**ctx.folder.manifest().get("ledger", {}), **entries}
    ctx.folder.update_manifest(ledger=ledger, **fields)


def generate_from(ctx: StageContext, prompts_stage: str) -> StageOutput:
    """The `generate` work over the rows of `prompts_stage` (each: uid, prompt, prompt_hash, messages,
    optional suffix), so every pipeline's prompt stage can feed the one runner and cache."""
    from nliforge.generation.answer import answer_requests

    prompts = ctx.rows(prompts_stage)
    gen = ctx.cfg.generator
    requests = build_requests(prompts, ctx.settings, bool(gen.get("chat", False)), int(ctx.cfg.seed))
    results, ledger, generator = answer_requests(gen, requests, ctx.folder.root / CACHE_FILE, "generate")
    rows, drops = [], []
    for req in requests:
        res = results[req.uid]
        prompt_uid = req.uid.rsplit(":", 1)[0]
        for i in range(req.n):
            uid = f"{prompt_uid}:{req.first_sample + i}"
            if isinstance(res, Failure):
                drops.append((uid, f"request_failed:{res.kind}"))
                continue
            rows.append({"uid": uid, "prompt_uid": prompt_uid, "sample": req.first_sample + i,
                         "text": res.texts[i], "finish_reason": res.finish_reasons[i]})
    merge_ledger(ctx, {"generate": ledger}, generator=generator)
    return StageOutput(rows, drops, count_in=sum(r.n for r in requests), extra={"requests": len(requests)})
