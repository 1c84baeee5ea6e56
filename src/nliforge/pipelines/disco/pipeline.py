"""The DISCO stages (§3, §5.1): an ambiguous source subset from the data map, premise
spans, one prompt per (span, target label), generation, splicing by offsets, the heuristic filter,
the teacher filter on the probability shift Δ, and the augmentation sets. `disco_report`
(disco_report.py) adds the Table 1 metrics."""

from __future__ import annotations

import random
from pathlib import Path

from omegaconf import DictConfig, OmegaConf, open_dict

from nliforge.errors import NLIDataError
from nliforge.data.labels import FLIP_DIRECTIONS
from nliforge.data.records import Record
from nliforge.pipelines.disco.augment import augment_stage
from nliforge.pipelines.disco.report import disco_report_stage
from nliforge.engine.input_set import input_stage
from nliforge.engine.shared_stages import (GENERATED_FIELDS, classifier_run, classifier_stage, generate_stage_for,
                                             generator_lm_stage)
from nliforge.pipelines.disco.stand_in import stand_in_documents
from nliforge.engine.stages import RECORD_FIELDS, PipelineSpec, StageContext, StageOutput, stage

ALL_DIRECTIONS = FLIP_DIRECTIONS
SPAN_FIELDS = ("uid", "source_uid", "start", "end", "text")
PROMPT_ROW_FIELDS = ("uid", "source_uid", "span_uid", "start", "end", "span_text", "premise", "hypothesis",
                     "original_label", "target_label", "direction", "form", "prompt", "suffix", "messages",
                     "prompt_hash", "demo_fillers")   # a disco_prompts row (disco_prompting.build_prompt_rows)


def _train_sets_node(names) -> dict:
    """The `data.train_sets` mapping for named training sets (conf/data/train_sets/<name>.yaml)."""
    from nliforge.data.registry import config_folders, find_set_yaml

    node = {}
    for name in names:
        path = find_set_yaml(name, "train_sets")
        if path is None:
            where = ", ".join(str(f / "data" / "train_sets") for f in config_folders())
            raise NLIDataError(f"pipeline.disco_teacher.train_sets: no training set {name!r} (in {where})")
        node.update(OmegaConf.to_container(OmegaConf.load(path), resolve=False))
    return node


def train_teacher(cfg: DictConfig, settings: DictConfig, out: Path) -> Path:
    """Train a teacher like the task classifier but on `settings.train_sets` (and its own epochs/seed)."""
    from nliforge.engine.classifier import derived_config, train_classifier

    sub = derived_config(cfg)
    with open_dict(sub):
        sub.data.train_sets = _train_sets_node(list(settings.train_sets))
        sub.data.combine = "augment"
        if settings.get("max_epochs"):
            sub.model.max_epochs = int(settings.max_epochs)
        sub.seed = int(settings.get("seed", cfg.seed))
    return train_classifier(sub, out)


@stage("disco_teacher", writes=("uid", "model_dir"))
def teacher_stage(ctx: StageContext) -> StageOutput:
    """The teacher(s) of the Δ filter: given model folders, or one trained here on `train_sets`."""
    s = ctx.settings
    dirs = [str(d) for d in (s.get("run_dirs") or [])]
    if not dirs:
        out = Path(ctx.cfg.paths.output_dir) / "teacher"
        train_teacher(ctx.cfg, s, out)
        dirs = [str(out)]
    return StageOutput([{"uid": f"teacher{i}", "model_dir": d} for i, d in enumerate(dirs)], count_in=len(dirs))


def _named_set(ctx: StageContext, name: str) -> list:
    """The records of an eval set (conf/data/eval_sets/<name>.yaml), e.g. to build a held-out
    counterfactual test set from a test split rather than from the classifier's training data."""
    from nliforge.data.registry import eval_set_spec, load_set

    spec = eval_set_spec(name, "pipeline.disco_source.set", ctx.cfg.paths.cache_dir)
    world = OmegaConf.to_container(ctx.cfg.world, resolve=True) if "world" in ctx.cfg else None
    return load_set(spec, "pipeline.disco_source.set", world, ctx.cfg.paths.cache_dir)


def _pool(ctx: StageContext) -> list[Record]:
    """The pairs D^s is chosen from: `input=` (an earlier run's output, a file or a set), else the named
    eval set `set`, else the classifier's training set; only `select=all` for the first two (no data map)."""
    from nliforge.engine.input_set import INPUT_STAGE, input_records

    s = ctx.settings
    if INPUT_STAGE in ctx.cfg.pipeline.stages:
        where, records = f"input={ctx.cfg.input}", input_records(ctx)
    elif s.get("set"):
        where, records = f"pipeline.disco_source.set={s.set!r}", _named_set(ctx, str(s.set))
    else:
        return [r for r in classifier_run(ctx.cfg).train_records() if r.label is not None]
    if str(s.select) != "all":
        raise NLIDataError(f"{where} has no data map: use pipeline.disco_source.select=all")
    labeled = [r for r in records if r.label is not None]
    if records and not labeled:
        raise NLIDataError(f"{where}: no labeled pairs to flip (a WANLI run's dataset.jsonl is unlabeled until "
                           "reviewed: give its review/reviewed.jsonl)")
    return labeled


@stage("disco_source", inputs=("classifier", "input"), writes=RECORD_FIELDS)
def source_stage(ctx: StageContext) -> StageOutput:
    """D^s: the classifier's training pairs to perturb: the ambiguous part of the data map (variability
    strictly above the per-label `quantile`, as the cartography paper's top third), or all of them;
    or (`set`) all pairs of a named eval set, for a held-out counterfactual test set; or (`input=`) all
    labeled pairs of the input, e.g. a reviewed WANLI set."""
    from nliforge.cartography.seeds import select_seeds
    from nliforge.engine.rows import over_cap

    s = ctx.settings
    run = classifier_run(ctx.cfg)
    pool = _pool(ctx)
    by_uid = {r.uid: r for r in pool}
    if str(s.select) == "ambiguous":
        per_label = select_seeds(run.metrics().loc[lambda m: m.index.isin(list(by_uid))], q=float(s.quantile))
        chosen = {u for uids in per_label.values() for u in uids}
    elif str(s.select) == "all":
        chosen = set(by_uid)
    else:
        raise NLIDataError(f"pipeline.disco_source.select={s.select!r}; valid: ambiguous, all")
    capped = over_cap(chosen, by_uid, s.get("max_per_label"), int(ctx.cfg.seed))
    rows, drops = [], []
    for rec in pool:
        if rec.uid in chosen and rec.uid not in capped:
            rows.append(rec.to_dict())
        else:
            drops.append((rec.uid, "over_max_per_label" if rec.uid in capped else "not_selected"))
    return StageOutput(rows, drops, count_in=len(pool))


@stage("spans", inputs=("disco_source",), reads=("uid", "premise"), writes=SPAN_FIELDS)
def spans_stage(ctx: StageContext) -> StageOutput:
    """Phrase chunks of each premise (character offsets), at most `max_spans` per premise (seeded)."""
    from nliforge.pipelines.disco.chunker import build_chunker, select_spans

    s = ctx.settings
    chunker = build_chunker(str(s.chunker))
    rng = random.Random(int(ctx.cfg.seed))
    source = ctx.rows("disco_source")
    rows, drops = [], []
    for rec in source:
        spans = select_spans(chunker.chunks(rec["premise"]), s.get("max_spans"), rng)
        if not spans:
            drops.append((rec["uid"], "no_spans"))
        for i, sp in enumerate(spans):
            rows.append({"uid": f"{rec['uid']}:s{i}", "source_uid": rec["uid"], "start": sp.start, "end": sp.end,
                         "text": sp.text})
    return StageOutput(rows, drops, count_in=len(source))


def _directions(settings: DictConfig) -> list[str]:
    wanted = [str(d) for d in (settings.get("directions") or ALL_DIRECTIONS)]
    bad = [d for d in wanted if d not in ALL_DIRECTIONS]
    if bad:
        raise NLIDataError(f"pipeline.disco_prompts.directions: unknown {bad}; valid: {', '.join(ALL_DIRECTIONS)}")
    return wanted


@stage("disco_prompts", inputs=("disco_source", "spans"), reads=("premise", "hypothesis", "label", *SPAN_FIELDS),
       writes=PROMPT_ROW_FIELDS)
def prompts_stage(ctx: StageContext) -> StageOutput:
    """One prompt per (span, target label) for every configured flip direction."""
    from nliforge.generation.backends import supports_suffix
    from nliforge.pipelines.disco.prompt_rows import build_prompt_rows

    s = ctx.settings
    form = str(s.form)
    if form not in ("masked", "insertion"):
        raise NLIDataError(f"pipeline.disco_prompts.form={form!r}; valid: masked, insertion")
    generator = OmegaConf.to_container(ctx.cfg.generator, resolve=True)
    insertion = form == "insertion" and supports_suffix(generator) and not generator.get("chat", False)
    source = {r["uid"]: r for r in ctx.rows("disco_source")}
    spans = ctx.rows("spans")
    rows = build_prompt_rows(spans, source, _directions(s), insertion, s.get("demonstrations") or {},
                             chat=bool(generator.get("chat", False)))
    extra = {"form": "insertion" if insertion else "masked",
             "insertion_rendered_as_masked": form == "insertion" and not insertion}
    return StageOutput(rows, count_in=len(spans), extra=extra)


generate_stage = generate_stage_for("disco_prompts", name="disco_generate")   # phrases for every DISCO prompt


@stage("splice", inputs=("disco_prompts", "disco_generate"), writes=RECORD_FIELDS,
       reads=("source_uid", "start", "end", "span_text", "premise", "hypothesis", "original_label", "target_label",
              "direction", "form", "prompt_hash", *GENERATED_FIELDS))
def splice_stage(ctx: StageContext) -> StageOutput:
    """The generated phrase in place of the span, by offsets: a counterfactual Record with the target
    label and its provenance (original pair, span, phrase, direction, generator)."""
    from nliforge.pipelines.disco.chunker import Span
    from nliforge.pipelines.disco.splice import clean_filler, splice

    prompts = {p["uid"]: p for p in ctx.rows("disco_prompts")}
    gens = ctx.rows("disco_generate")
    generator = {"backend": str(ctx.cfg.generator.kind), "model": str(ctx.cfg.generator.model)}
    source = str(ctx.cfg.pipeline.get("source", ctx.cfg.pipeline.name))
    rows, drops = [], []
    for g in gens:
        p = prompts[g["prompt_uid"]]
        filler = clean_filler(g["text"])
        if not filler:
            drops.append((g["uid"], "empty_phrase"))
            continue
        span = Span(p["start"], p["end"], p["span_text"])
        meta = {"original_uid": p["source_uid"], "original_premise": p["premise"],
                "original_hypothesis": p["hypothesis"], "original_label": p["original_label"],
                "direction": p["direction"], "span": [p["start"], p["end"]], "span_text": p["span_text"],
                "filler": filler, "prompt_uid": p["uid"], "prompt_hash": p["prompt_hash"], "form": p["form"],
                "generator": generator, "sample": g["sample"]}
        rec = Record(f"disco-{g['uid']}", splice(p["premise"], span, filler), p["hypothesis"], p["target_label"],
                     source, meta)
        rows.append(rec.to_dict())
    return StageOutput(rows, drops, count_in=len(gens))


@stage("disco_heuristics", inputs=("disco_prompts", "splice"), reads=RECORD_FIELDS, writes=RECORD_FIELDS)
def heuristics_stage(ctx: StageContext) -> StageOutput:
    """The heuristic filter (PRIOR_ART.md, whole-word matching), each drop named by its rule."""
    from collections import Counter

    from nliforge.pipelines.disco.heuristics import DiscoHeuristicSettings, check

    settings = DiscoHeuristicSettings(**OmegaConf.to_container(ctx.settings, resolve=True))
    prompts = {p["uid"]: p for p in ctx.rows("disco_prompts")}
    items = ctx.rows("splice")
    rows, drops, counts = [], [], Counter()
    for r in items:
        m = r["meta"]
        rule = check(m["filler"], m["original_premise"], r["premise"], r["hypothesis"], r["label"],
                     demo_fillers=prompts[m["prompt_uid"]].get("demo_fillers", ()), settings=settings)
        if rule:
            counts[rule] += 1
            drops.append((r["uid"], f"heuristic:{rule}"))
        else:
            rows.append(r)
    return StageOutput(rows, drops, count_in=len(items), extra={"rule_counts": dict(counts)})


@stage("teacher_filter", inputs=("disco_teacher", "disco_heuristics"), reads=("model_dir", *RECORD_FIELDS),
       writes=RECORD_FIELDS)
def teacher_filter_stage(ctx: StageContext) -> StageOutput:
    """Keep a counterfactual when Δ = p(l′|P′,H) − p(l′|P,H), averaged over teachers, exceeds the threshold."""
    import numpy as np

    from nliforge.pipelines.disco.teacher_filter import ensemble_probs, probability_shift

    s = ctx.settings
    dirs = [r["model_dir"] for r in ctx.rows("disco_teacher")]
    items = ctx.rows("disco_heuristics")
    if not items:
        return StageOutput([], count_in=0)
    new = [Record(r["uid"], r["premise"], r["hypothesis"], None, "", {}) for r in items]
    originals = {r["meta"]["original_uid"]: (r["meta"]["original_premise"], r["hypothesis"]) for r in items}
    order = sorted(originals)
    kw = dict(batch_size=int(s.batch_size), max_length=int(s.max_length), device=str(s.device), progress=False)
    p_new = ensemble_probs(new, dirs, **kw)
    p_o = ensemble_probs([Record(u, *originals[u], None, "", {}) for u in order], dirs, **kw)
    at = {u: i for i, u in enumerate(order)}
    p_orig = p_o[np.array([at[r["meta"]["original_uid"]] for r in items])]
    delta = probability_shift(p_new, p_orig, [r["label"] for r in items])
    rows, drops = [], []
    for i, r in enumerate(items):
        scores = {"delta": float(delta[i]), "teacher_new": [float(x) for x in p_new[i]],
                  "teacher_original": [float(x) for x in p_orig[i]], "teachers": len(dirs)}
        row = {**r, "meta": {**r["meta"], "scores": {**r["meta"].get("scores", {}), **scores}}}
        (rows.append(row) if delta[i] > float(s.threshold) else drops.append((r["uid"], "below_delta")))
    return StageOutput(rows, drops, count_in=len(items), extra={"threshold": float(s.threshold)})


PIPELINE = PipelineSpec(   # DISCO §3, §5.1; `input` with input=, `generator_lm` for the offline demo
    "disco", (classifier_stage, teacher_stage, source_stage, spans_stage, prompts_stage, generate_stage, splice_stage,
              heuristics_stage, teacher_filter_stage, augment_stage, disco_report_stage),
    optional=(input_stage, generator_lm_stage), generator_slots=("generator",),
    stand_in_documents=stand_in_documents)
