"""Which LLM a generation run uses: the generator the user chose, or the demo's stand-in.

`generator=stand_in` (nliforge-generate's default) means "no generator chosen". A demo
(conf/generate_experiment/*_demo.yaml) describes its stand-in in a top-level `stand_in:` block: the
small LM it trains (`generator_lm` stage) or the local stand-in server (a generator node `{kind: stand_in,
responder: <name>}`, started in process for the run: generation/stand_in/served.py). That block is applied only
while no generator is chosen, so `experiment=demo generator=smollm2` runs the same demo on the real
model: the stand-in's training stage is left out and a pipeline with its own list of LLMs
(long-text: `pipeline.generators` and the rubric judge) uses the chosen generator for all of them, and
Z-Aug with `generator=causal_unlikelihood` (or gpt2_unlikelihood with `init_from`) trains its generator
from that pretrained LM.

Resolution happens once, before anything is written, so the run's config.yaml records what ran.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Sequence

from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

from nliforge.errors import NLIDataError

log = logging.getLogger("nliforge.generate")

STAND_IN = "stand_in"
STAND_IN_STAGES = ("generator_lm",)  # stages that only build a stand-in generator


def generator_chosen(cfg: DictConfig) -> bool:
    """Whether a real generator was chosen (anything but the `stand_in` placeholder)."""
    return str(cfg.generator.get("kind")) != STAND_IN


STAND_IN_FIGURE_NOTE = ("Made with the demo's stand-in generator, not a real LLM: it shows that the pipeline "
                        "works, not what a real model does.")


def stand_in_note(cfg: DictConfig) -> str:
    """The note a figure of this run carries when its data came from the stand-in (else '')."""
    return "" if generator_chosen(cfg) else STAND_IN_FIGURE_NOTE


def resolve_generator(cfg: DictConfig) -> DictConfig:
    """A new config with the stand-in applied (no generator chosen) or replaced by the chosen one; `cfg`
    itself is left as it was."""
    cfg = copy.deepcopy(cfg)
    stand_in = cfg.get(STAND_IN)
    with open_dict(cfg):
        if not generator_chosen(cfg):
            for key in stand_in or {}:
                cfg[key] = OmegaConf.merge(cfg[key], stand_in[key]) if key in cfg else stand_in[key]
            return cfg
        dropped = [s for s in cfg.pipeline.stages if s in STAND_IN_STAGES]
        if dropped:
            cfg.pipeline.stages = [s for s in cfg.pipeline.stages if s not in STAND_IN_STAGES]
            log.info("generator %s chosen: the stand-in stage(s) %s are left out", cfg.generator.get("model"), dropped)
        _replace_pipeline_llms(cfg)
    return cfg


def _replace_pipeline_llms(cfg: DictConfig) -> None:
    """The pipeline's own LLM nodes become the chosen generator, as its `use_generator` hook says."""
    from nliforge.engine.registry import load_pipeline

    hook = load_pipeline(str(cfg.pipeline.name)).use_generator
    if hook is not None:
        hook(cfg)


def check_generator_slots(cfg: DictConfig, slots: Sequence[str]) -> None:
    """Every generator slot a run's stages call holds a node, and none the `stand_in` placeholder (no
    generator chosen and no demo's stand-in), then every API key they need is set: checked on the resolved
    config, before the run folder exists, so a run does not stop at its first LLM call after the earlier
    stages have written their outputs."""
    from nliforge.generation.backends import no_generator_chosen
    from nliforge.generation.stand_in.served import check_responder, is_served

    needs_key = []
    for slot in slots:
        node = OmegaConf.select(cfg, slot)
        if node is None:
            raise NLIDataError(f"{slot}: not set; pipeline {cfg.pipeline.name!r} calls a generator there "
                               "(give a generator node, or generator=<name>)")
        nodes = list(node) if isinstance(node, ListConfig) else [node]
        for i, one in enumerate(nodes):
            where = f"{slot}[{i}]" if isinstance(node, ListConfig) else slot
            if isinstance(one, DictConfig) and is_served(one):
                check_responder(str(one.responder), where)
            elif isinstance(one, DictConfig) and str(one.get("kind")) == STAND_IN:
                raise NLIDataError(no_generator_chosen(where))
            elif isinstance(one, DictConfig):
                check_no_guidance(one, where)
                needs_key.append((one, where))
    if not cfg.get("merge"):   # a merge sends no request
        for one, where in needs_key:
            check_api_key(one, where)


def check_no_guidance(node: DictConfig, where: str) -> None:
    """`label_guidance` guides prompts that end with a label token (`{premise}<|label|>`); no pipeline's prompts
    do (Z-Aug samples whole instances), so a pipeline run refuses it rather than failing at its first request."""
    w = node.get("label_guidance")
    if w:
        raise NLIDataError(f"{where}.label_guidance={w}: no pipeline sends the prompts it guides ({{premise}}<|label|>, "
                           "e.g. experiments/label_following); set it to 0 for a pipeline run")


def check_api_key(node: DictConfig, where: str) -> None:
    """An OpenAI-compatible generator whose key variable is unset is refused here, before the run folder
    exists, not at its first call after the earlier stages have run (`api_key_env: null`: a local server)."""
    if not str(node.get("kind", "")).startswith("openai"):
        return
    key_env = node.get("api_key_env", "OPENAI_API_KEY")
    if key_env is not None and not os.environ.get(str(key_env)):
        raise NLIDataError(f"{where}.api_key_env: the environment variable {key_env} is not set; {where} "
                           f"({node.get('model')}) needs an API key there (or {where}.api_key_env=null for a "
                           "server that needs no key)")
