# templates/pipeline/my_pipeline/__init__.py
"""A generating pipeline to copy: one prompt per labeled input pair asks an LLM for a sentence that
contradicts the premise; the shared `generate` stage sends every prompt; `my_parse` makes the records."""

from pathlib import Path

from nliforge.engine.input_set import input_stage
from nliforge.engine.rows import clean_text, prompt_hash
from nliforge.engine.shared_stages import GENERATED_FIELDS, generate_stage_for
from nliforge.engine.stages import RECORD_FIELDS, PipelineSpec, StageContext, StageOutput, stage
from nliforge.generation.stand_in.responders import input_text

PROMPT_ROW = ("uid", "prompt", "prompt_hash", "messages", "premise")   # the row `generate` reads, + premise


@stage("my_prompts", inputs=("input",), reads=("uid", "premise", "label"), writes=PROMPT_ROW)
def prompts_stage(ctx: StageContext) -> StageOutput:
    """One prompt per labeled input pair: `template` with the premise filled in."""
    rows, drops = [], []
    for r in ctx.rows("input"):
        if r["label"] is None:
            drops.append((r["uid"], "unlabeled"))
            continue
        text = str(ctx.settings.template).format(premise=r["premise"])
        rows.append({"uid": f"my-{r['uid']}", "prompt": text, "prompt_hash": prompt_hash(text),
                     "messages": [{"role": "user", "content": text}], "premise": r["premise"]})
    return StageOutput(rows, drops, count_in=len(rows) + len(drops))


generate_stage = generate_stage_for("my_prompts")   # the stage `generate`, over my_prompts' rows


@stage("my_parse", inputs=("my_prompts", "generate"), reads=("premise", *GENERATED_FIELDS), writes=RECORD_FIELDS)
def parse_stage(ctx: StageContext) -> StageOutput:
    """Each sample's first line, cleaned, as the hypothesis of a contradiction; an empty one is dropped."""
    premise = {p["uid"]: p["premise"] for p in ctx.rows("my_prompts")}
    rows, drops = [], []
    for g in ctx.rows("generate"):
        text = clean_text(g["text"].strip().split("\n")[0])
        if not text:
            drops.append((g["uid"], "empty"))
            continue
        rows.append({"uid": g["uid"], "premise": premise[g["prompt_uid"]], "hypothesis": text,
                     "label": "contradiction", "source": str(ctx.cfg.pipeline.source),
                     "meta": {"prompt_uid": g["prompt_uid"], "sample": g["sample"]}})
    return StageOutput(rows, drops, count_in=len(rows) + len(drops))


def stand_in_responder(prompt_or_messages, choice_index: int, seed, sampling) -> str:
    """The offline stand-in LLM (a pure function): 'It is not true that' + the prompt's premise."""
    premise = input_text(prompt_or_messages).split("Premise: ", 1)[-1].split("\n")[0].rstrip(".")
    return f" It is not true that {premise[:1].lower()}{premise[1:]}.\n"


PIPELINE = PipelineSpec("my_pipeline", (input_stage, prompts_stage, generate_stage, parse_stage),
                        conf_dir=str(Path(__file__).parent / "conf"))
