"""`nliforge-generate pipeline=zfilter input=<set>`: z-filtering (Z-Aug §3.2, Algorithm 1) of any
set in the data model, unconditional, Z(input), or conditional on a seed set, Z(input | seed), with
the recipes of §4.2 (`nliforge.filtering.zfilter.run_recipe`). This pipeline's `zfilter` stage filters the `input` stage's records
(the Z-Aug pipeline has a `zfilter` stage of its own, in pipelines/zaug); `zfilter_seed` loads the seed set.

Choices: candidates whose uid is in the seed are dropped ("in_seed": a seed record is not filtered
against itself); the candidates are shuffled (`shuffle`, seeded) because Algorithm 1 is order-dependent
and generated sets come ordered by prompt or label; the output is the accepted candidates
(`with_seed: true` gives Z = seed + accepted, as Algorithm 1 writes it; false suits `D0 + Z(new | D0)`
in a training-set combination, where D0 comes in by itself).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.engine.input_set import INPUT_STAGE, input_records, input_stage, load_refs, refs_of
from nliforge.engine.stages import RECORD_FIELDS, PipelineSpec, StageContext, StageOutput, stage

SEED_STAGE = "zfilter_seed"


@stage(SEED_STAGE, rerun=True, writes=RECORD_FIELDS)
def seed_stage(ctx: StageContext) -> StageOutput:
    """The seed set of conditional z-filtering (`pipeline.zfilter_seed.set`: any `input` reference or a
    list; null: none, and z-filtering is unconditional); its provenance goes to manifest.json `zfilter_seed`."""
    refs = refs_of(ctx.settings.get("set"))
    records, drops, provenance = load_refs(refs, ctx.cfg, f"pipeline.{SEED_STAGE}.set")
    ctx.folder.update_manifest(zfilter_seed=provenance)
    return StageOutput([r.to_dict() for r in records], drops, count_in=len(records) + len(drops))


def _candidates(ctx: StageContext, seed: list[Record]) -> tuple[list[Record], list[tuple[str, str]]]:
    """The input without the seed's uids, shuffled when `shuffle` is on; unlabeled input is an error."""
    seed_uids = {r.uid for r in seed}
    cands, drops = [], []
    for rec in input_records(ctx):
        if rec.uid in seed_uids:
            drops.append((rec.uid, "in_seed"))
        elif rec.label is None:
            raise NLIDataError(f"input: record {rec.uid!r} is unlabeled; z-filtering needs labels (a WANLI run's "
                               "dataset.jsonl is unlabeled until reviewed: give input=<run>/review/reviewed.jsonl)")
        else:
            cands.append(rec)
    if bool(ctx.settings.get("shuffle", True)):
        random.Random(int(ctx.settings.get("order_seed", ctx.cfg.seed))).shuffle(cands)
    return cands, drops


def _summary(seed, cands, accepted, rejected) -> dict:
    return {"seed": len(seed), "candidates": len(cands), "accepted": len(accepted), "rejected": len(rejected),
            "accepted_by_source": dict(Counter(r.source for r in accepted)),
            "candidates_by_source": dict(Counter(r.source for r in cands)),
            "accepted_by_label": dict(Counter(r.label for r in accepted)),
            "rejected_by_feature_top": Counter(r.meta["zfilter"]["feature"] for r in rejected).most_common(15)}


def zfilter_input(ctx: StageContext, ties: str) -> StageOutput:
    """z-filter the `input` stage's records, conditional on `zfilter_seed`'s when the pipeline has that
    stage and it holds records; report the biased features before and after (zfilter_report.md)."""
    from nliforge.filtering.zfilter import run_recipe
    from nliforge.filtering.zreport import biased_report

    s, stages = ctx.settings, list(ctx.cfg.pipeline.stages)
    seed = input_records(ctx, SEED_STAGE) if SEED_STAGE in stages else []
    cands, drops = _candidates(ctx, seed)
    recipe, k = str(s.recipe), int(s.k)
    kept, rejected = run_recipe(recipe, seed, cands, k=k, batch_size=int(s.batch_size), ties=ties)
    condition = f"{recipe}: Z(input | seed, {len(seed)} records)" if seed else f"{recipe}: Z(input)"
    condition += f", k={k}, batch={int(s.batch_size)}, ties={ties}"
    tag = {r.uid for r in cands}

    def tagged(recs):
        return [replace(r, meta={**r.meta, "zfilter": {**r.meta["zfilter"], "condition": condition}})
                if r.uid in tag else r for r in recs]

    kept, rejected = tagged(kept), tagged(rejected)
    with_seed = bool(s.get("with_seed", False))
    out = kept if with_seed else [r for r in kept if r.uid in tag]
    drops += [(r.uid, f"zfilter:{r.meta['zfilter']['feature']}") for r in rejected if with_seed or r.uid in tag]
    report = biased_report(seed or cands, cands if seed else [], kept, top=int(s.get("report_top", 5)), k=k,
                           out=Path(ctx.cfg.paths.output_dir) / "zfilter_report.md", recipe=recipe)
    accepted = [r for r in kept if r.uid in tag]
    extra = {"condition": condition, **_summary(seed, cands, accepted, [r for r in rejected if r.uid in tag]),
             "report": report}
    count_in = len(cands) + sum(why == "in_seed" for _, why in drops) + (len(seed) if with_seed else 0)
    return StageOutput([r.to_dict() for r in out], drops, count_in=count_in, extra=extra)


@stage("zfilter", inputs=(INPUT_STAGE, SEED_STAGE), reads=RECORD_FIELDS, writes=RECORD_FIELDS)
def zfilter_stage(ctx: StageContext) -> StageOutput:
    """z-filter the input with the configured recipe, conditional on the seed set when there is one."""
    from nliforge.filtering.zstats import check_ties

    return zfilter_input(ctx, check_ties(str(ctx.settings.get("ties", "name")), "pipeline.zfilter.ties"))


PIPELINE = PipelineSpec("zfilter", (input_stage, seed_stage, zfilter_stage))   # Z-Aug §3.2, Algorithm 1

__all__ = ["INPUT_STAGE", "PIPELINE", "SEED_STAGE", "seed_stage", "zfilter_input", "zfilter_stage"]
