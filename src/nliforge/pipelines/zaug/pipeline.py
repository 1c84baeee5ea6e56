"""The Z-Aug stages (Z-Aug): train the generator on D0 (with and without the label-consistency
unlikelihood), sample, keep what the teacher confidently agrees with (τ), then z-filter with a
recipe (Z-Aug, Par-Z, Seq-Z) and report the biased features before and after (Table 12 form)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from omegaconf import OmegaConf

from nliforge.data.records import Record
from nliforge.generation.types import Failure, GenerationRequest, Sampling
from nliforge.engine.shared_stages import CACHE_FILE, classifier_run, classifier_stage, merge_ledger, request_seed
from nliforge.engine.stages import RECORD_FIELDS, PipelineSpec, StageContext, StageOutput, stage
from nliforge.engine.stand_in import stand_in_note
from nliforge.errors import NLIDataError

log = logging.getLogger("nliforge.generate")


SAMPLE_FIELDS = ("uid", "premise", "label", "hypothesis", "variant", "sample")   # a zaug_sample row


def zfilter_ties(settings, key: str) -> str:
    """`<key>.ties`: how features tied at the k-th z enter B(l) (name | include, default name;
    `nliforge.filtering.zstats`). A wrong value is an error naming the key."""
    from nliforge.filtering.zstats import check_ties

    return check_ties(str(settings.get("ties", "name")), f"{key}.ties")


@stage("zaug_generator", inputs=("classifier",), writes=("uid", "path", "lam"))
def generator_stage(ctx: StageContext) -> StageOutput:
    """One generator per variant (name -> λ), trained on the classifier's training set D0."""
    from nliforge.models.generator_train import train_generator

    d0 = [r for r in classifier_run(ctx.cfg).train_records() if r.label is not None]
    base = OmegaConf.to_container(ctx.cfg.pipeline.generator_model, resolve=True)
    rows = []
    for variant, lam in OmegaConf.to_container(ctx.settings.variants, resolve=True).items():
        folder = Path(ctx.cfg.paths.output_dir) / "zaug" / f"generator_{variant}"
        path = train_generator(d0, folder, {**base, "lam": float(lam)}, progress=bool(ctx.settings.get("progress")))
        rows.append({"uid": str(variant), "path": str(path), "lam": float(lam)})
    return StageOutput(rows, count_in=len(d0))


@stage("zaug_debias", inputs=("classifier", "zaug_generator"), reads=("uid", "path"),
       writes=("uid", "path", "lam", "debiased", "n_z", "n_z_minus"))
def debias_stage(ctx: StageContext) -> StageOutput:
    """§4.1: G -> G*. z-filter D0 into Z(D0) and Z⁻(D0), then fine-tune each listed generator with
    L_debias = L_MLE(Z(D0)) + α·L_UL(Z⁻(D0)), the unlikelihood only on the tokens of every feature of
    B(l) each Z⁻ instance holds (the whole hypothesis for a non-n-gram feature). Other variants pass
    through unchanged; `zaug_sample` then samples from these rows instead of `zaug_generator`'s."""
    from nliforge.filtering.zfilter import z_filter
    from nliforge.models.generator_train import BIASED_META_KEY, train_generator

    s = ctx.settings
    d0 = [r for r in classifier_run(ctx.cfg).train_records() if r.label is not None]
    res = z_filter(d0, k=int(s.k), batch_size=int(s.batch_size), ties=zfilter_ties(s, "pipeline.zaug_debias"))
    rejected = [replace(r, meta={**r.meta, BIASED_META_KEY: r.meta["zfilter"]["features"]}) for r in res.rejected]
    base = OmegaConf.to_container(ctx.cfg.pipeline.generator_model, resolve=True)
    chosen = [str(v) for v in (s.get("variants") or [])]
    rows = []
    for gen in ctx.rows("zaug_generator"):
        if chosen and gen["uid"] not in chosen:
            rows.append({**gen, "debiased": False})
            continue
        folder = Path(ctx.cfg.paths.output_dir) / "zaug" / f"generator_{gen['uid']}_debiased"
        settings = {**base, "init": gen["path"], "lam": float(s.lam), "alpha": float(s.alpha),
                    "max_epochs": int(s.max_epochs)}
        path = train_generator(res.accepted, folder, settings, rejected=rejected, progress=bool(s.get("progress")))
        rows.append({**gen, "path": str(path), "debiased": True, "n_z": len(res.accepted), "n_z_minus": len(rejected)})
    return StageOutput(rows, count_in=len(d0))


def generator_rows(ctx: StageContext) -> list[dict]:
    """The generators to sample from: G* when the pipeline debiases (§4.1), else G."""
    return ctx.rows("zaug_debias" if "zaug_debias" in ctx.cfg.pipeline.stages else "zaug_generator")


@stage("zaug_sample", inputs=("zaug_generator", "zaug_debias"), reads=("uid", "path"), writes=SAMPLE_FIELDS)
def sample_stage(ctx: StageContext) -> StageOutput:
    """`n_samples` whole (premise, label, hypothesis) instances per generator, through the runner."""
    from nliforge.generation.backends.nli_generator import NLIGeneratorBackend
    from nliforge.generation.cache import ResponseCache
    from nliforge.generation.runner import RunnerSettings, run_requests
    from nliforge.generation.zaug_format import parse_generated

    s = ctx.settings
    sampling = Sampling.from_dict(OmegaConf.to_container(s.sampling, resolve=True))
    rows, drops, total, ledger = [], [], 0, {}
    cache = ResponseCache(ctx.folder.root / CACHE_FILE)
    try:
        for gen in generator_rows(ctx):
            backend = NLIGeneratorBackend(gen["path"], batch_size=int(s.batch_size), device=str(s.device),
                                       dtype=str(s.get("dtype", "float32")))
            reqs = [GenerationRequest(uid=f"{gen['uid']}:{i}", prompt="", sampling=sampling, first_sample=i,
                                      seed=request_seed(int(ctx.cfg.seed), gen["uid"], i))
                    for i in range(int(s.n_samples))]
            total += len(reqs)
            key = f"zaug_sample:{gen['uid']}"
            results = run_requests(backend, reqs, cache, key, RunnerSettings(progress=bool(s.get("progress", True))))
            ledger[key] = cache.ledger(key)
            for req in reqs:
                res = results[req.uid]
                parsed = None if isinstance(res, Failure) else parse_generated(res.texts[0])
                if parsed is None:
                    drops.append((req.uid, f"request_failed:{res.kind}" if isinstance(res, Failure) else "unparseable"))
                    continue
                rows.append({"uid": f"zaug-{req.uid}", "premise": parsed[0], "label": parsed[1],
                             "hypothesis": parsed[2], "variant": gen["uid"], "sample": req.first_sample})
    finally:
        cache.close()
    merge_ledger(ctx, ledger)   # one entry per generator: sampled, cached, tokens (a local model costs 0)
    return StageOutput(rows, drops, count_in=total)


@stage("confidence", inputs=("classifier", "zaug_sample"), reads=SAMPLE_FIELDS, writes=RECORD_FIELDS)
def confidence_stage(ctx: StageContext) -> StageOutput:
    """Keep samples whose teacher probability of their own label exceeds τ; report, per variant,
    label consistency (how often the teacher's argmax is the generated label)."""
    from nliforge.filtering.confidence import confidence_filter

    s = ctx.settings
    samples = ctx.rows("zaug_sample")
    probs = classifier_run(ctx.cfg).final_probs([(r["premise"], r["hypothesis"]) for r in samples],
                                                int(s.batch_size), int(s.max_length), str(s.device))
    res = confidence_filter([r["label"] for r in samples], probs, float(s.tau))
    rows, drops, consistency = [], [], {}
    for variant in sorted({r["variant"] for r in samples}):
        idx = [i for i, r in enumerate(samples) if r["variant"] == variant]
        consistency[variant] = {"samples": len(idx), "teacher_agrees": float(res.agree[idx].mean()),
                                "above_tau": int(res.keep[idx].sum())}
    for i, r in enumerate(samples):
        if not res.keep[i]:
            drops.append((r["uid"], "below_tau"))
            continue
        meta = {"variant": r["variant"], "sample": r["sample"], "teacher_p": float(res.p_own[i])}
        rows.append(Record(r["uid"], r["premise"], r["hypothesis"], r["label"],
                           str(ctx.cfg.pipeline.source), meta).to_dict())
    return StageOutput(rows, drops, count_in=len(samples), extra={"label_consistency": consistency})


@stage("zfilter", inputs=("classifier", "zaug_sample", "confidence"), reads=("variant", *RECORD_FIELDS),
       writes=RECORD_FIELDS)
def zfilter_stage(ctx: StageContext) -> StageOutput:
    """z-filter with the configured recipe; the biased features before/after go to zaug_report.md
    (with D0's biases in the samples before and after the confidence filter), and a before/after
    plot per label to zaug_plots/bias_<label>.png. (`pipeline=zfilter` has a `zfilter` stage of its own
    that filters its `input`: nliforge.pipelines.zfilter.pipeline.)"""
    from nliforge.filtering.zfilter import run_recipe
    from nliforge.filtering.zreport import biased_report

    s = ctx.settings
    d0 = [r for r in classifier_run(ctx.cfg).train_records() if r.label is not None]
    gen = [Record(**r) for r in ctx.rows("confidence") if r["meta"]["variant"] == str(s.variant)]
    samples = [Record(r["uid"], r["premise"], r["hypothesis"], r["label"])
               for r in ctx.rows("zaug_sample") if r["variant"] == str(s.variant)]
    kept, rejected = run_recipe(str(s.recipe), d0, gen, k=int(s.k), batch_size=int(s.batch_size),
                                ties=zfilter_ties(s, "pipeline.zfilter"))
    report = biased_report(d0, gen, kept, top=int(s.report_top), k=int(s.k),
                           out=Path(ctx.cfg.paths.output_dir) / "zaug_report.md", recipe=str(s.recipe),
                           plots_dir=Path(ctx.cfg.paths.output_dir) / "zaug_plots", samples=samples,
                           plot_note=stand_in_note(ctx.cfg))
    drops = [(r.uid, f"zfilter:{r.meta['zfilter']['feature']}") for r in rejected]
    return StageOutput([r.to_dict() for r in kept], drops, count_in=len(d0) + len(gen), extra=report)


def use_generator(cfg) -> None:
    """A chosen pretrained causal LM (`generator=causal_unlikelihood`, or gpt2_unlikelihood with
    `init_from`) is what the generator Z-Aug trains starts from: `generator.init_from` and
    `generator.train` (its training settings) go into `pipeline.generator_model`."""
    gen = cfg.generator
    if "generator_model" not in cfg.pipeline or str(gen.kind) != "gpt2_unlikelihood":
        return
    if gen.get("label_guidance"):
        raise NLIDataError(f"generator.label_guidance={gen.label_guidance}: Z-Aug samples whole instances (an empty "
                           "prompt), which end with no label token to guide; set it to 0")
    if gen.get("train"):
        cfg.pipeline.generator_model = OmegaConf.merge(cfg.pipeline.generator_model, gen.train)
    if gen.get("init_from"):
        cfg.pipeline.generator_model.init_from = gen.init_from
        log.info("the Z-Aug generator is fine-tuned from %s", gen.init_from)


PIPELINE = PipelineSpec(   # Z-Aug §3-4; `zaug_debias` (§4.1, G -> G*) goes after zaug_generator when wanted
    "zaug", (classifier_stage, generator_stage, sample_stage, confidence_stage, zfilter_stage),
    optional=(debias_stage,), generator_slots=("pipeline.generator_model",), use_generator=use_generator)
