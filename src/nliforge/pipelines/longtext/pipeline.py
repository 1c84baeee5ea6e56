"""The long-text NLI stages (NLI-Set): context statements -> one prompt per statement and intended
label -> every prompt through every configured LLM -> instruction-following checks -> NLI records,
and optionally an LLM judge's rubric scores with the per-model summary table.

Several LLMs in one run: `pipeline.generators` is a list of generator nodes (as in conf/generator/),
each with a `name`; each has its own cache stage (`longtext_generate:<name>`) and ledger entry.

Records are unlabeled until reviewed (as WANLI's): `label` is None and `meta.intended_label` is the
relation the prompt asked for; the paper trusts the prompt, then validates by hand (nliforge-review).
`meta.model` is the generator's `name` (the table's row), `meta.model_id` the model it called.

The offline demo's generators and judge are stand-in nodes (`kind: stand_in` with the `longtext` or
`rubric` responder): the engine's local OpenAI-compatible server answers them in process
(generation/stand_in/served.py), so the demo's "LLMs" are template writers, not language models.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping

from omegaconf import DictConfig

from nliforge.errors import NLIDataError
from nliforge.data.records import Record, record_from_mapping
from nliforge.generation.answer import answer_requests, plain, sampling_from
from nliforge.pipelines.longtext.stand_in import use_generator
from nliforge.pipelines.longtext.prompts import (LABEL_TERMS, LABELS, longtext_messages, longtext_prompt,
                                                  read_statements)
from nliforge.generation.types import Failure, GenerationRequest
from nliforge.engine.shared_stages import CACHE_FILE, PROMPT_FIELDS, merge_ledger, request_seed
from nliforge.engine.rows import prompt_hash
from nliforge.engine.stages import RECORD_FIELDS, PipelineSpec, StageContext, StageOutput, stage
from nliforge.utils.atomic import atomic_write_text

log = logging.getLogger("nliforge.generate")

STAND_IN_NOTE = ("Generated and judged by the local stand-in server (nliforge.generation.stand_in.responders), "
                 "not by real LLMs: the numbers only show that the pipeline works.")
PROMPT_ROW = ("uid", "statement_uid", "statement", "label", "prompt", "messages", "prompt_hash")
ANSWER_ROW = ("uid", "prompt_uid", "generator", "model", "text", "finish_reason")   # one per prompt and LLM


def generator_nodes(cfg: DictConfig) -> list[dict]:
    """`pipeline.generators` as plain dicts, each with a unique `name` (a clear error otherwise)."""
    nodes = [plain(n) for n in (cfg.pipeline.get("generators") or [])]
    names = [n.get("name") for n in nodes]
    if not nodes or not all(isinstance(x, str) and x for x in names) or len(set(names)) != len(names):
        raise NLIDataError(f"pipeline.generators: expected a non-empty list of generator nodes, each with a "
                           f"unique `name` (and kind, model, ...), got names {names}")
    return nodes


@stage("statements", writes=("uid", "text"))
def statements_stage(ctx: StageContext) -> StageOutput:
    """Context statements from `path` (text or JSONL) or the shipped default set; `limit` keeps the first n."""
    texts = read_statements(ctx.settings.get("path"))
    limit = ctx.settings.get("limit")
    n = len(texts) if limit is None else min(int(limit), len(texts))
    rows = [{"uid": f"st{i:03d}", "text": t} for i, t in enumerate(texts[:n])]
    drops = [(f"st{i:03d}", "over_limit") for i in range(n, len(texts))]
    return StageOutput(rows, drops, count_in=len(texts))


@stage("longtext_prompts", inputs=("statements",), reads=("uid", "text"), writes=PROMPT_ROW)
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
    """One request per prompt; the sampling seed also depends on the generator's name. A generator node's
    own `sampling` keys (e.g. another temperature) override the stage's `sampling` for that generator."""
    sampling = sampling_from({**plain(ctx.settings.get("sampling")), **plain(gen.get("sampling"))})
    chat, name, seed = bool(gen.get("chat", False)), gen["name"], int(ctx.cfg.seed)
    return [GenerationRequest(uid=f"{p['uid']}:{name}", prompt=p["prompt"], sampling=sampling,
                              messages=tuple(p["messages"]) if chat else None,
                              seed=request_seed(seed, f"{p['prompt_hash']}:{name}", 0)) for p in prompts]


@stage("longtext_generate", inputs=("longtext_prompts",), reads=PROMPT_FIELDS, writes=ANSWER_ROW,
       generators=("pipeline.generators",))
def longtext_generate_stage(ctx: StageContext) -> StageOutput:
    """Every prompt through every generator; answers are cached as they arrive (resume = no resend)."""
    prompts, rows, drops, ledgers, models = ctx.rows("longtext_prompts"), [], [], {}, {}
    for gen in generator_nodes(ctx.cfg):
        name, requests = gen["name"], _requests(prompts, gen, ctx)
        results, ledgers[f"longtext_generate:{name}"], models[name] = answer_requests(
            gen, requests, ctx.folder.root / CACHE_FILE, f"longtext_generate:{name}")
        for req, p in zip(requests, prompts):
            res = results[req.uid]
            if isinstance(res, Failure):
                drops.append((req.uid, f"request_failed:{res.kind}"))
                continue
            rows.append({"uid": req.uid, "prompt_uid": p["uid"], "generator": name, "model": str(gen["model"]),
                         "text": res.texts[0], "finish_reason": res.finish_reasons[0]})
    merge_ledger(ctx, ledgers, generators=models)
    return StageOutput(rows, drops, count_in=len(prompts) * len(models))


@stage("longtext_validate", inputs=("longtext_prompts", "longtext_generate"), reads=(*PROMPT_ROW, *ANSWER_ROW),
       writes=RECORD_FIELDS)
def longtext_validate_stage(ctx: StageContext) -> StageOutput:
    """Instruction-following checks (pipelines/longtext/checks.py); passing answers become NLI records."""
    from nliforge.pipelines.longtext.checks import LongTextRules, check_longtext

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


@stage("rubric", inputs=("longtext_generate", "longtext_validate"), reads=("generator", *RECORD_FIELDS),
       writes=RECORD_FIELDS, generators=("pipeline.rubric.judge",))
def rubric_stage(ctx: StageContext) -> StageOutput:
    """The LLM judge's 1-10 rubric scores per record (in meta.rubric), rubric_judgements.jsonl, and the
    per-model summary (rubric.md, rubric.png) in the run folder."""
    from nliforge.pipelines.longtext.rubric import judge_ledger, judge_rubric, rubric_table, write_rubric_report
    from nliforge.generation.stand_in.served import is_served

    records = [record_from_mapping(r, f"stage longtext_validate row {i}")
               for i, r in enumerate(ctx.rows("longtext_validate"), 1)]
    judge = plain(ctx.settings.get("judge"))
    if not judge.get("kind"):
        raise NLIDataError("pipeline.rubric.judge: give a generator node (kind, model, base_url, ...) for the judge")
    judgements = judge_rubric(records, judge, ctx.folder.root / CACHE_FILE, seed=int(ctx.cfg.seed),
                              sampling=ctx.settings.get("sampling"),
                              per_criterion=bool(ctx.settings.get("per_criterion", False)))
    table = rubric_table(records, judgements, validated_counts(ctx.rows("longtext_generate"), records))
    stand_ins = is_served(judge) or any(is_served(g) for g in generator_nodes(ctx.cfg))
    write_rubric_report(table, ctx.folder.root, note=STAND_IN_NOTE if stand_ins else "")
    atomic_write_text(ctx.folder.root / "rubric_judgements.jsonl", (j.to_json() + "\n" for j in judgements))
    unscored_by = Counter(j.extra["rubric_error"] for j in judgements if j.extra.get("rubric_error"))
    merge_ledger(ctx, {"rubric": {**judge_ledger(ctx.folder.root / CACHE_FILE), "unscored": dict(unscored_by)}})
    scores = {j.uid: j.rubric for j in judgements}
    rows = [{**r.to_dict(), "meta": {**r.meta, "rubric": scores.get(r.uid)}} for r in records]
    unscored = sum(1 for r in records if not scores.get(r.uid))
    return StageOutput(rows, count_in=len(records), extra={"unscored": unscored, "judge": str(judge.get("model"))})


def explain_training_records(records: list[Record], train_path: str | None) -> tuple[list[Record], str]:
    """The explain stage's training set and where its labels come from. Without `train_path`: the
    validated records with their INTENDED label as the label, an unreviewed stand-in (the prompt's
    relation, not a checked one); with it: the labeled records of that JSONL (e.g. the reviewed set
    `nliforge-review aggregate` writes), unlabeled ones left out."""
    if train_path:
        from nliforge.data.jsonl import read_jsonl

        return [r for r in read_jsonl(train_path) if r.label in LABELS], str(train_path)
    return [Record(r.uid, r.premise, r.hypothesis, r.meta["intended_label"], r.source,
                   {**r.meta, "label_from": "intended_label (unreviewed)"}) for r in records], "intended_label"


def explain_examples(records: list[Record], n: int) -> list[Record]:
    """The first record of each intended label (in label order), then the next ones in order, n in all."""
    firsts = [next(r for r in records if r.meta.get("intended_label") == lab) for lab in LABELS
              if any(r.meta.get("intended_label") == lab for r in records)]
    rest = [r for r in records if r not in firsts]
    return (firsts + rest)[:max(n, 0)]


def explain_train_config(cfg: DictConfig, train_jsonl, out_dir, max_length: int, epochs: int) -> DictConfig:
    """The classifier's train config: the generate config's model/trainer groups (tiny by default), the
    explain JSONL as the only training set, no suite, inputs up to `max_length` tokens (a tiny RoBERTa
    gets max_length + 2 position embeddings), no checkpoints or training dynamics."""
    from omegaconf import OmegaConf, open_dict

    from nliforge.engine.classifier import derived_config

    sub = derived_config(cfg)
    with open_dict(sub):
        sub.paths.output_dir = str(out_dir)
        sub.data.train_sets = {"explain": {"name": "explain", "loader": "jsonl", "path": str(train_jsonl),
                                           "num_classes": 3, "limit": None}}
        sub.data.val_sets = []
        sub.data.save_train_set = False
        sub.suite = {"name": "none", "sets": {}, "collapse": "argmax", "skip_missing": True}
        sub.model.max_length = int(max_length)
        sub.model.max_epochs = int(epochs)
        if sub.model.backbone.get("kind") == "tiny":
            sub.model.backbone.max_position_embeddings = int(max_length) + 2
        sub.save_model = True
        sub.ckpt_path = None
        sub.overwrite_output = True   # the stage trains afresh: an earlier attempt's folder is emptied
        sub.callbacks = {}
        sub.logger = {k: v for k, v in (sub.get("logger") or {}).items() if k == "csv"}
        sub.trainer.enable_progress_bar = False
        sub.trainer.enable_checkpointing = False
    return OmegaConf.create(OmegaConf.to_container(sub, resolve=True))


def predicted_labels(model_dir, pairs, max_length: int) -> list[dict]:
    """p(label) in e/n/c order (and the argmax) for each pair, inputs truncated to the model's limit.
    One pair per batch: unpadded, as the attribution page computes the probabilities it shows."""
    from nliforge.models.predict import predict_probs

    return [{"predicted_label": LABELS[int(probs.argmax())],
             "probs": {lab: round(float(p), 4) for lab, p in zip(LABELS, probs)}}
            for probs in predict_probs(model_dir, pairs, batch_size=1, max_length=max_length, progress=False)]


@stage("explain", inputs=("longtext_validate",), side=True, reads=RECORD_FIELDS,
       writes=("uid", "intended_label", "model", "predicted_label", "probs", "html", "pngs"))
def explain_stage(ctx: StageContext) -> StageOutput:
    """A small classifier and token attributions (NLI-Set's last step). Writes <run>/explain/train.jsonl
    (see explain_training_records: the intended labels unless `train_path` names a reviewed JSONL),
    trains the generate config's `model` (tiny by default) on it for `epochs` into
    <run>/explain/classifier, and renders `method` attributions of `examples` records (the first of each
    intended label) into <run>/explain/attributions/ (attributions.html, one PNG per pair or window).
    Rows: one per rendered example (uid, labels, prediction, file paths relative to the run folder)."""
    from nliforge.analysis.attribution_render import render_attributions
    from nliforge.data.jsonl import write_jsonl
    from nliforge.train import train

    s = ctx.settings
    max_length, long_inputs = int(s.get("max_length", 512)), str(s.get("long_inputs", "truncate"))
    method = str(s.get("method", "ig"))
    root = ctx.folder.root
    records = [record_from_mapping(r, f"stage longtext_validate row {i}")
               for i, r in enumerate(ctx.rows("longtext_validate"), 1)]
    train_records, label_source = explain_training_records(records, s.get("train_path"))
    if len({r.label for r in train_records}) < 2:  # e.g. a small LM that broke every instruction
        why = (f"explain skipped: the training set ({label_source}) has {len(train_records)} labeled records and "
               f"fewer than 2 labels; a classifier needs more (raise pipeline.statements.limit)")
        log.warning(why)
        return StageOutput([], [(r.uid, "too_few_labels") for r in records], count_in=len(records),
                           extra={"skipped": why})
    train_jsonl = write_jsonl(train_records, root / "explain" / "train.jsonl")
    model_dir = root / "explain" / "classifier"
    train(explain_train_config(ctx.cfg, train_jsonl, model_dir, max_length, int(s.get("epochs", 3))))
    chosen = explain_examples(records, int(s.get("examples", 3)))
    pairs = [(r.premise, r.hypothesis) for r in chosen]
    out_dir = root / "explain" / "attributions"
    paths = render_attributions(model_dir / "model", pairs, out_dir, method=method, max_length=max_length,
                                long_inputs=long_inputs, n_steps=int(s.get("n_steps", 32)))
    html, pngs = paths[0], paths[1:]
    rows = []
    for i, (rec, pred) in enumerate(zip(chosen, predicted_labels(model_dir / "model", pairs, max_length)), 1):
        mine = [p for p in pngs if p.stem == f"attribution_{i}" or p.stem.startswith(f"attribution_{i}_w")]
        rows.append({"uid": rec.uid, "intended_label": rec.meta.get("intended_label"),
                     "model": rec.meta.get("model"), **pred, "html": str(html.relative_to(root)),
                     "pngs": [str(p.relative_to(root)) for p in mine]})
    return StageOutput(rows, count_in=len(chosen),
                       extra={"train_size": len(train_records), "labels_from": label_source, "method": method,
                              "long_inputs": long_inputs, "max_length": max_length,
                              "classifier": str((model_dir / "model").relative_to(root))})


PIPELINE = PipelineSpec("longtext", (statements_stage, longtext_prompts_stage, longtext_generate_stage,  # NLI-Set
                                     longtext_validate_stage, rubric_stage), optional=(explain_stage,),  # explain: last
                        generator_slots=("pipeline.generators", "pipeline.rubric.judge"), use_generator=use_generator)
