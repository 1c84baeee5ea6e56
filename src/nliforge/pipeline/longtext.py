"""The long-text NLI stages (seed 004): context statements -> one prompt per statement and intended
label -> every prompt through every configured LLM -> instruction-following checks -> NLI records,
and optionally an LLM judge's rubric scores with the per-model summary table.

Several LLMs in one run: `pipeline.generators` is a list of generator nodes (as in conf/generator/),
each with a `name`; each has its own cache stage (`longtext_generate:<name>`) and ledger entry.

Records are unlabeled until reviewed (as WANLI's): `label` is None and `meta.intended_label` is the
relation the prompt asked for; the paper trusts the prompt, then validates by hand (nliforge-review).
`meta.model` is the generator's `name` (the table's row), `meta.model_id` the model it called.

`pipeline.local_server: true` (the offline demo) starts the local OpenAI-compatible server inside
the generate and rubric stages, with a long-text and a rubric stand-in responder, and points every
generator and the judge at it: the demo's "LLMs" are template writers, not language models.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from omegaconf import DictConfig

from nliforge.data.errors import NLIDataError
from nliforge.data.jsonl import atomic_write_text
from nliforge.data.records import Record, record_from_mapping
from nliforge.generation.answer import answer_requests, plain, sampling_from
from nliforge.generation.longtext_prompts import (LABEL_TERMS, LABELS, longtext_messages, longtext_prompt,
                                                  read_statements)
from nliforge.generation.prompts import prompt_hash
from nliforge.generation.types import Failure, GenerationRequest
from nliforge.pipeline.engine import StageContext, StageOutput, stage
from nliforge.pipeline.shared_stages import CACHE_FILE, request_seed

STAND_IN_NOTE = ("Generated and judged by the local stand-in server (nliforge.testing.responders), "
                 "not by real LLMs: the numbers only show that the pipeline works.")


def generator_nodes(cfg: DictConfig) -> list[dict]:
    """`pipeline.generators` as plain dicts, each with a unique `name` (a clear error otherwise)."""
    nodes = [plain(n) for n in (cfg.pipeline.get("generators") or [])]
    names = [n.get("name") for n in nodes]
    if not nodes or not all(isinstance(x, str) and x for x in names) or len(set(names)) != len(names):
        raise NLIDataError(f"pipeline.generators: expected a non-empty list of generator nodes, each with a "
                           f"unique `name` (and kind, model, ...), got names {names}")
    return nodes


@contextlib.contextmanager
def served_by(cfg: DictConfig, responder) -> Iterator[str | None]:
    """The local server's base URL while the block runs (when `pipeline.local_server`), else None."""
    if not cfg.pipeline.get("local_server"):
        yield None
        return
    from nliforge.testing.openai_server import LocalOpenAIServer

    with LocalOpenAIServer(latency_s=0.0, responder=responder) as server:
        yield server.base_url


def pointed_at(node: Mapping, base_url: str | None) -> dict:
    """A generator node sent to `base_url` (no API key needed there); unchanged when None."""
    return dict(node) if base_url is None else {**node, "base_url": base_url, "api_key_env": None}


def merge_ledger(ctx: StageContext, entries: Mapping[str, dict], **fields) -> None:
    """Add ledger entries to the manifest without dropping those of other stages."""
    ledger = {**ctx.folder.manifest().get("ledger", {}), **entries}
    ctx.folder.update_manifest(ledger=ledger, **fields)


@stage("statements")
def statements_stage(ctx: StageContext) -> StageOutput:
    """Context statements from `path` (text or JSONL) or the shipped default set; `limit` keeps the first n."""
    texts = read_statements(ctx.settings.get("path"))
    limit = ctx.settings.get("limit")
    n = len(texts) if limit is None else min(int(limit), len(texts))
    rows = [{"uid": f"st{i:03d}", "text": t} for i, t in enumerate(texts[:n])]
    drops = [(f"st{i:03d}", "over_limit") for i in range(n, len(texts))]
    return StageOutput(rows, drops, count_in=len(texts))


@stage("longtext_prompts", inputs=("statements",))
def longtext_prompts_stage(ctx: StageContext) -> StageOutput:
    """One prompt (and its chat variant) per statement and intended label."""
    statements = ctx.rows("statements")
    rows = []
    for s in statements:
        for label in LABELS:
            text = longtext_prompt(s["text"], label)
            rows.append({"uid": f"{s['uid']}:{label}", "statement_uid": s["uid"], "statement": s["text"],
                         "label": label, "prompt": text, "messages": list(longtext_messages(s["text"], label)),
                         "prompt_hash": prompt_hash(text)})
    return StageOutput(rows, count_in=len(statements))


def _requests(prompts: list[dict], gen: Mapping, ctx: StageContext) -> list[GenerationRequest]:
    """One request per prompt; the sampling seed also depends on the generator's name."""
    sampling = sampling_from(ctx.settings.get("sampling"))
    chat, name, seed = bool(gen.get("chat", False)), gen["name"], int(ctx.cfg.seed)
    return [GenerationRequest(uid=f"{p['uid']}:{name}", prompt=p["prompt"], sampling=sampling,
                              messages=tuple(p["messages"]) if chat else None,
                              seed=request_seed(seed, f"{p['prompt_hash']}:{name}", 0)) for p in prompts]


@stage("longtext_generate", inputs=("longtext_prompts",))
def longtext_generate_stage(ctx: StageContext) -> StageOutput:
    """Every prompt through every generator; answers are cached as they arrive (resume = no resend)."""
    from nliforge.testing.responders import longtext_responder

    prompts, rows, drops, ledgers, models = ctx.rows("longtext_prompts"), [], [], {}, {}
    with served_by(ctx.cfg, longtext_responder) as url:
        for gen in generator_nodes(ctx.cfg):
            name, requests = gen["name"], _requests(prompts, gen, ctx)
            results, ledgers[f"longtext_generate:{name}"], models[name] = answer_requests(
                pointed_at(gen, url), requests, ctx.folder.root / CACHE_FILE, f"longtext_generate:{name}")
            for req, p in zip(requests, prompts):
                res = results[req.uid]
                if isinstance(res, Failure):
                    drops.append((req.uid, f"request_failed:{res.kind}"))
                    continue
                rows.append({"uid": req.uid, "prompt_uid": p["uid"], "generator": name, "model": str(gen["model"]),
                             "text": res.texts[0], "finish_reason": res.finish_reasons[0]})
    merge_ledger(ctx, ledgers, generators=models)
    return StageOutput(rows, drops, count_in=len(prompts) * len(models))


@stage("longtext_validate", inputs=("longtext_prompts", "longtext_generate"))
def longtext_validate_stage(ctx: StageContext) -> StageOutput:
    """Instruction-following checks (filtering/longtext.py); passing answers become NLI records."""
    from nliforge.filtering.longtext import LongTextRules, check_longtext

    rules = LongTextRules.from_dict(plain(ctx.settings), LABEL_TERMS)
    prompts = {p["uid"]: p for p in ctx.rows("longtext_prompts")}
    gens, rows, drops = ctx.rows("longtext_generate"), [], []
    source = str(ctx.cfg.pipeline.get("source", ctx.cfg.pipeline.name))
    for g in gens:
        p = prompts[g["prompt_uid"]]
        checked = check_longtext(g["text"], p["label"], rules)
        if checked.reason:
            drops.append((g["uid"], checked.reason))
            continue
        meta = {"intended_label": p["label"], "statement": p["statement"], "statement_uid": p["statement_uid"],
                "model": g["generator"], "model_id": g["model"], "prompt_uid": p["uid"],
                "prompt_hash": p["prompt_hash"], "sentence_counts": list(checked.sentence_counts),
                "instruction_following": checked.flags, "finish_reason": g["finish_reason"]}
        rec = Record(f"{ctx.cfg.pipeline.name}-{g['uid']}", checked.paragraphs[0], checked.paragraphs[1],
                     None, source, meta)
        rows.append(rec.to_dict())
    return StageOutput(rows, drops, count_in=len(gens))


def validated_counts(generated: list[dict], validated: list[Record]) -> dict[str, tuple[int, int]]:
    """{model: (answers that passed validation, answers received)} for the instruction-following rate."""
    out: dict[str, list[int]] = {}
    for g in generated:
        out.setdefault(g["generator"], [0, 0])[1] += 1
    for rec in validated:
        out.setdefault(rec.meta["model"], [0, 0])[0] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


@stage("rubric", inputs=("longtext_generate", "longtext_validate"))
def rubric_stage(ctx: StageContext) -> StageOutput:
    """The LLM judge's 1-10 rubric scores per record (in meta.rubric), rubric_judgements.jsonl, and the
    per-model summary (rubric.md, rubric.png) in the run folder."""
    from nliforge.review.rubric import judge_ledger, judge_rubric, rubric_table, write_rubric_report
    from nliforge.testing.responders import rubric_responder

    records = [record_from_mapping(r, f"stage longtext_validate row {i}")
               for i, r in enumerate(ctx.rows("longtext_validate"), 1)]
    judge = plain(ctx.settings.get("judge"))
    if not judge.get("kind"):
        raise NLIDataError("pipeline.rubric.judge: give a generator node (kind, model, base_url, ...) for the judge")
    with served_by(ctx.cfg, rubric_responder) as url:
        judgements = judge_rubric(records, pointed_at(judge, url), ctx.folder.root / CACHE_FILE,
                                  seed=int(ctx.cfg.seed), sampling=ctx.settings.get("sampling"))
    table = rubric_table(records, judgements, validated_counts(ctx.rows("longtext_generate"), records))
    write_rubric_report(table, ctx.folder.root, note=STAND_IN_NOTE if ctx.cfg.pipeline.get("local_server") else "")
    atomic_write_text(ctx.folder.root / "rubric_judgements.jsonl", (j.to_json() + "\n" for j in judgements))
    merge_ledger(ctx, {"rubric": judge_ledger(ctx.folder.root / CACHE_FILE)})
    scores = {j.uid: j.rubric for j in judgements}
    rows = [{**r.to_dict(), "meta": {**r.meta, "rubric": scores.get(r.uid)}} for r in records]
    unscored = sum(1 for r in records if not scores.get(r.uid))
    return StageOutput(rows, count_in=len(records), extra={"unscored": unscored, "judge": str(judge.get("model"))})

