"""The WANLI stages (§2.1–2.3): seeds from the data map, same-label exemplars, pattern
prompts, parsing, heuristic filters and the estimated-max-variability selection. `generate`
(shared) sits between prompts and parse."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.engine.shared_stages import (GENERATED_FIELDS, classifier_run, classifier_stage, generate_stage,
                                             generator_lm_stage)
from nliforge.pipelines.wanli.stand_in import stand_in_documents
from nliforge.engine.rows import over_cap, prompt_hash
from nliforge.engine.stages import RECORD_FIELDS, PipelineSpec, StageContext, StageOutput, stage

PAIR = ("uid", "premise", "hypothesis", "meta")   # what the filters read of a generated record


def _exclusions(settings: DictConfig) -> dict[str, list[str]]:
    node = settings.get("exclude") or {}
    return {k: list(v or []) for k, v in OmegaConf.to_container(node, resolve=True).items()}


def _excluded(rec: Record, exclude: Mapping[str, Sequence[str]]) -> str | None:
    if rec.source in exclude.get("source", ()):
        return f"excluded_source:{rec.source}"
    genre = (rec.meta or {}).get("genre")
    if genre is not None and genre in exclude.get("genre", ()):
        return f"excluded_genre:{genre}"
    return None


def exemplar_pool(ctx: StageContext) -> tuple[list[Record], list[tuple[str, str]]]:
    """The classifier's training records that may serve as seeds or exemplars, and the excluded ones."""
    exclude = _exclusions(ctx.cfg.pipeline.seeds)
    pool, drops = [], []
    for rec in classifier_run(ctx.cfg).train_records():
        why = _excluded(rec, exclude) if rec.label is not None else "unlabeled"
        (drops.append((rec.uid, why)) if why else pool.append(rec))
    return pool, drops


@stage("seeds", inputs=("classifier",), writes=RECORD_FIELDS)
def seeds_stage(ctx: StageContext) -> StageOutput:
    """Per gold label, the examples whose variability is strictly above the label's quantile."""
    from nliforge.cartography.seeds import select_seeds

    s = ctx.settings
    pool, drops = exemplar_pool(ctx)
    metrics = classifier_run(ctx.cfg).metrics()
    by_uid = {r.uid: r for r in pool}
    per_label = select_seeds(metrics.loc[metrics.index.isin(list(by_uid))], q=float(s.quantile))
    chosen = {uid for uids in per_label.values() for uid in uids}
    capped = over_cap(chosen, by_uid, s.get("max_per_label"), int(ctx.cfg.seed))
    n_in, rows = len(pool) + len(drops), []
    for rec in pool:
        if rec.uid in chosen and rec.uid not in capped:
            rows.append({**rec.to_dict(), "meta": {**rec.meta, "variability": float(metrics.loc[rec.uid, "variability"])}})
        else:
            drops.append((rec.uid, "over_max_per_label" if rec.uid in capped else "not_above_quantile"))
    return StageOutput(rows, drops, count_in=n_in)


@stage("exemplars", inputs=("classifier", "seeds"), reads=("uid",),
       writes=("uid", "label", "group_uids", "examples", "similarities"))
def exemplars_stage(ctx: StageContext) -> StageOutput:
    """For each seed, its k nearest same-label neighbours by [CLS] cosine; the seed comes last."""
    from nliforge.pipelines.wanli.exemplars import encode_cls, exemplar_groups, same_label_neighbours

    s = ctx.settings
    pool, _ = exemplar_pool(ctx)
    seeds = ctx.rows("seeds")
    index = {r.uid: i for i, r in enumerate(pool)}
    model, tokenizer, _ = classifier_run(ctx.cfg).final_model()
    emb = encode_cls(model, tokenizer, [(r.premise, r.hypothesis) for r in pool], batch_size=int(s.batch_size),
                     max_length=int(s.max_length), device=str(s.device))
    labels = np.array([("entailment", "neutral", "contradiction").index(r.label) for r in pool])
    queries = np.array([index[row["uid"]] for row in seeds], dtype=np.int64)
    neighbours = same_label_neighbours(emb, labels, queries, k=int(s.k))
    groups, skipped = exemplar_groups(neighbours)
    rows, drops = [], []
    by_seed = {g[-1]: g for g in groups}
    sims_by_seed = {int(q): row[::-1] for q, row in zip(neighbours.queries, neighbours.sims)}  # increasing, as groups
    for q in queries:
        group = by_seed.get(int(q))
        if group is None:
            drops.append((pool[q].uid, "too_few_neighbours"))
            continue
        sims = [float(x) for x in sims_by_seed[int(q)]]
        rows.append({"uid": pool[q].uid, "label": pool[q].label, "group_uids": [pool[i].uid for i in group],
                     "examples": [[pool[i].premise, pool[i].hypothesis] for i in group], "similarities": sims})
    return StageOutput(rows, drops, count_in=len(seeds), extra={"skipped": int(skipped)})


@stage("prompts", inputs=("exemplars",), reads=("uid", "label", "examples", "group_uids"),
       writes=("uid", "label", "prompt", "prompt_hash", "messages", "seed_uid", "neighbour_uids", "examples"))
def prompts_stage(ctx: StageContext) -> StageOutput:
    """The Fig. 2 prompt per group (and its chat variant, used when generator.chat is true)."""
    from nliforge.pipelines.wanli.prompts import wanli_chat_messages, wanli_prompt

    rows = []
    for g in ctx.rows("exemplars"):
        examples = [tuple(e) for e in g["examples"]]
        text = wanli_prompt(examples, g["label"])
        rows.append({"uid": g["uid"], "label": g["label"], "prompt": text, "prompt_hash": prompt_hash(text),
                     "messages": list(wanli_chat_messages(examples, g["label"])),
                     "seed_uid": g["uid"], "neighbour_uids": g["group_uids"][:-1], "examples": g["examples"]})
    return StageOutput(rows, count_in=len(rows))


@stage("parse", inputs=("prompts", "generate"), writes=RECORD_FIELDS,
       reads=("label", "seed_uid", "neighbour_uids", "prompt_hash", *GENERATED_FIELDS))
def parse_stage(ctx: StageContext) -> StageOutput:
    """Split each completion into premise and hypothesis; anything else is dropped with its reason."""
    from nliforge.pipelines.wanli.parse import parse_completion

    prompts = {p["uid"]: p for p in ctx.rows("prompts")}
    chat = bool(ctx.cfg.generator.get("chat", False))
    generator = {"backend": str(ctx.cfg.generator.kind), "model": str(ctx.cfg.generator.model)}
    gens = ctx.rows("generate")
    rows, drops = [], []
    for g in gens:
        p = prompts[g["prompt_uid"]]
        parsed = parse_completion(g["text"], p["label"], chat=chat)
        if not isinstance(parsed, tuple):
            drops.append((g["uid"], f"parse:{parsed.reason}"))
            continue
        meta = {"intended_label": p["label"], "seed_uid": p["seed_uid"], "neighbour_uids": p["neighbour_uids"],
                "prompt_uid": p["uid"], "prompt_hash": p["prompt_hash"], "generator": generator,
                "sample": g["sample"], "finish_reason": g["finish_reason"]}
        rec = Record(f"{ctx.cfg.pipeline.name}-{g['uid']}", parsed[0], parsed[1], None,
                     str(ctx.cfg.pipeline.get("source", ctx.cfg.pipeline.name)), meta)
        rows.append(rec.to_dict())
    return StageOutput(rows, drops, count_in=len(gens))


@stage("heuristics", inputs=("prompts", "parse"), reads=("examples", *PAIR), writes=RECORD_FIELDS)
def heuristics_stage(ctx: StageContext) -> StageOutput:
    """Quote/bracket clean-up, then the four §2.3 rules on the cleaned pair (each drop named by rule)."""
    from nliforge.pipelines.wanli.heuristics import filter_pairs

    prompts = {p["uid"]: p for p in ctx.rows("prompts")}
    parsed = ctx.rows("parse")
    examples = [[tuple(e) for e in prompts[row["meta"]["prompt_uid"]]["examples"]] for row in parsed]
    result = filter_pairs((row["premise"], row["hypothesis"], ex) for row, ex in zip(parsed, examples))
    rows = [{**parsed[i], "premise": p, "hypothesis": h} for i, (p, h) in zip(result.kept, result.pairs)]
    drops = [(parsed[i]["uid"], f"heuristic:{rule}") for i, rule in result.drops]
    return StageOutput(rows, drops, count_in=len(parsed))


@stage("variability", inputs=("classifier", "heuristics"), reads=PAIR, writes=RECORD_FIELDS)
def variability_stage(ctx: StageContext) -> StageOutput:
    """Estimated max variability over the classifier's epoch checkpoints; keep the top fraction,
    the same number per intended label (`select: random`: a random fraction instead, the ablation)."""
    from nliforge.filtering.variability import select_balanced_top, select_by_max_variability

    s = ctx.settings
    items = ctx.rows("heuristics")
    pairs = [(r["premise"], r["hypothesis"]) for r in items]
    probs = classifier_run(ctx.cfg).epoch_probs(pairs, int(s.batch_size), int(s.max_length), str(s.device))
    labels = [r["meta"]["intended_label"] for r in items]
    kept, scores = select_by_max_variability(probs, labels, float(s.fraction))
    if s.get("select", "top") == "random":   # the ablation: as many per label, chosen at random
        kept = select_balanced_top(np.random.default_rng(int(ctx.cfg.seed)).random(len(items)), labels, float(s.fraction))
    elif s.get("select", "top") != "top":
        raise NLIDataError(f"pipeline.variability.select={s.get('select')!r}; valid: top, random")
    keep = set(kept.tolist())
    rows, drops = [], []
    for i, r in enumerate(items):
        meta = {**r["meta"], "scores": {**r["meta"].get("scores", {}), "est_max_variability": float(scores[i])}}
        (rows.append({**r, "meta": meta}) if i in keep else drops.append((r["uid"], "below_variability_cut")))
    return StageOutput(rows, drops, count_in=len(items), extra={"epochs": int(probs.shape[0]) if items else 0})


PIPELINE = PipelineSpec(   # WANLI §2; `generator_lm` trains the offline demo's stand-in generator
    "wanli", (classifier_stage, seeds_stage, exemplars_stage, prompts_stage, generate_stage, parse_stage,
              heuristics_stage, variability_stage),
    optional=(generator_lm_stage,), generator_slots=("generator",),
    stand_in_documents=stand_in_documents)
