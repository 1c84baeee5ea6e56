"""The steps of the label-following experiment (README), one world at a time, each resumable:

    python -m experiments.label_following.steps judge   --scratch R --world-seed WS
    python -m experiments.label_following.steps trained --scratch R --world-seed WS --name NAME
                                                [--epochs E --n-layer L --n-embd D --lam LAMBDA]
    python -m experiments.label_following.steps offline --scratch R --world-seed WS [--max-per-label 100]
    python -m experiments.label_following.steps guided  --scratch R --world-seed WS --from NAME --w W [--name N]
    python -m experiments.label_following.steps whole   --scratch R --world-seed WS --from NAME [--name N]

`judge`: the world's artifact-free test split as held-out pairs (R/world<WS>/heldout.jsonl) and, once for all
worlds, the measuring instrument: the tiny classifier on 8,000 artifact-free pairs of world 9 (nliforge-train).
`trained`: the tiny generator trained label-conditioned on D0 (train_biased, 4,000 pairs), then one hypothesis per
prompt (300 D0 premises x 3 labels) -> R/world<WS>/<NAME>/dataset.jsonl with meta.intended_label; the CPU seconds
of training and sampling in cost.json. `offline`: the WANLI pipeline of wanli_generated up to its parse stage
(R/world<WS>/offline/dataset.jsonl). `guided`: the generator trained by an earlier `trained` step (--from NAME),
sampled again on the same prompts with label guidance of weight W (README, attempt 2). `whole`: that generator as
the Z-Aug pipeline samples it (whole instances from an empty prompt; the intended label is the label token it
sampled), 900 samples. One thread (torch.set_num_threads(1), num_threads=1).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "src" / "nliforge" / "conf"
STRENGTHS = {"negation": 0.65, "overlap": 0.65, "length": 0.65}   # conf/world/snli_calibrated.yaml
N_D0, N_PREMISES, MAX_TOKENS = 4000, 300, 48
JUDGE_WORLD, N_JUDGE, JUDGE_EPOCHS = 9, 8000, 3


def world_split(ws: int, n_train: int, split: str, root: Path):
    from nliforge.data.jsonl import read_jsonl
    from nliforge.world import WorldConfig, ensure_world

    folder = ensure_world(WorldConfig(seed=ws, n_train=n_train, strengths=STRENGTHS), root)
    return read_jsonl(folder / f"{split}.jsonl")


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def step_judge(world: Path, ws: int) -> None:
    """The world's held-out pairs (its artifact-free test split) and, once, the judge: the tiny classifier on
    N_JUDGE artifact-free pairs of world JUDGE_WORLD (not a measured world; the same language and rules),
    R/judge, linked as R/world<ws>/judge."""
    from nliforge.data.jsonl import write_jsonl

    held = world / "heldout.jsonl"
    if not held.is_file():
        write_jsonl(world_split(ws, N_D0, "test", world.parent / "worlds"), held)
    judge = world.parent / "judge"
    if not (judge / "model" / "config.json").is_file():
        start = cpu_seconds()
        cmd = ["nliforge-train", "data/train_sets=[synthetic]", "world=snli_calibrated", f"world.seed={JUDGE_WORLD}",
               f"world.n_train={N_JUDGE}", "model=tiny", f"model.max_epochs={JUDGE_EPOCHS}", "seed=1",
               "suite=synthetic", "callbacks=none", "logger=csv", "trainer.enable_progress_bar=false", "num_threads=1",
               f"hydra.run.dir={judge}"]
        with open(world.parent / "judge.log", "w") as log:
            subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        (world.parent / "judge_cost.json").write_text(json.dumps({"cpu_seconds": cpu_seconds() - start}) + "\n")
    if not (world / "judge").exists():
        (world / "judge").symlink_to(judge)


def prompts(ws: int, d0) -> list[dict]:
    """300 D0 premises drawn by the world seed, each with each label; `counterfactual`: not its D0 label."""
    by_premise: dict[str, set[str]] = {}
    hyps: dict[str, set[str]] = {}
    for r in d0:
        by_premise.setdefault(r.premise, set()).add(r.label)
        hyps.setdefault(r.premise, set()).add(r.hypothesis)
    premises = random.Random(ws).sample(sorted(by_premise), N_PREMISES)
    from nliforge.data.labels import LABELS
    return [{"premise": p, "label": lab, "counterfactual": lab not in by_premise[p], "d0_hypotheses": sorted(hyps[p])}
            for p in premises for lab in LABELS]


def generator_cfg(args) -> dict:
    cfg = OmegaConf.to_container(OmegaConf.load(CONF / "model" / "tiny_generator.yaml"), resolve=True)
    cfg.update(max_epochs=args.epochs, lam=args.lam, seed=0)
    cfg["backbone"].update(n_layer=args.n_layer, n_embd=args.n_embd)
    return cfg


def sample(folder: Path, items: list[dict], ws: int, guidance: float = 0.0) -> list:
    from nliforge.data.records import Record
    from nliforge.generation.backends.nli_generator import NLIGeneratorBackend
    from nliforge.generation.types import GenerationRequest, Response, Sampling
    from nliforge.generation.zaug_format import format_prefix

    backend = NLIGeneratorBackend(str(folder), batch_size=64, label_guidance=guidance)
    sampling = Sampling(max_tokens=MAX_TOKENS, temperature=1.0, top_p=1.0, stop=())
    reqs = [GenerationRequest(f"w{ws}-{i}", format_prefix(it["premise"], it["label"]), sampling, n=1,
                              seed=ws * 10**6 + i) for i, it in enumerate(items)]
    out = []
    for req, it, ans in zip(reqs, items, backend.generate_batch(reqs)):
        text = ans.texts[0].strip() if isinstance(ans, Response) else ""
        if not text:
            continue
        meta = {"intended_label": it["label"], "counterfactual": it["counterfactual"],
                "copied": text in it["d0_hypotheses"]}
        out.append(Record(req.uid, it["premise"], text, None, "label_following", meta))
    return out


def step_trained(world: Path, ws: int, args) -> None:
    import torch

    from nliforge.data.jsonl import write_jsonl
    from nliforge.models.causal_lm import META_NAME
    from nliforge.models.generator_train import train_generator

    torch.set_num_threads(1)
    out = world / args.name
    if (out / "dataset.jsonl").is_file():
        return
    d0 = world_split(ws, N_D0, "train_biased", world.parent / "worlds")
    t0, c0 = time.time(), cpu_seconds()
    train_generator(d0, out / "generator", generator_cfg(args))
    t1, c1 = time.time(), cpu_seconds()
    records = sample(out / "generator", prompts(ws, d0), ws)
    cost = {"train_cpu_s": c1 - c0, "train_wall_s": t1 - t0, "sample_cpu_s": cpu_seconds() - c1,
            "sample_wall_s": time.time() - t1, "kept": len(records), "prompts": 3 * N_PREMISES,
            "settings": vars(args) | {"scratch": str(args.scratch)}}
    meta = json.loads((out / "generator" / META_NAME).read_text())
    cost.update({k: meta[k] for k in ("steps", "initial_loss", "final_loss") if k in meta})
    (out / "cost.json").write_text(json.dumps(cost, indent=1) + "\n")
    write_jsonl(records, out / "dataset.jsonl")


def from_trained(world: Path, args) -> tuple[Path, Path] | None:
    """(the trained generator of `args.source`, the output folder), or None when the output is already there."""
    import torch

    torch.set_num_threads(1)
    source, out = world / args.source / "generator", world / args.name
    if (out / "dataset.jsonl").is_file():
        return None
    if not (source / "config.json").is_file():
        raise SystemExit(f"{source}: no trained generator (run the `trained` step --name {args.source} first)")
    return source, out


def write_set(out: Path, records: list, cost: dict) -> None:
    from nliforge.data.jsonl import write_jsonl

    out.mkdir(parents=True, exist_ok=True)
    (out / "cost.json").write_text(json.dumps(cost, indent=1) + "\n")
    write_jsonl(records, out / "dataset.jsonl")


def step_guided(world: Path, ws: int, args) -> None:
    """Attempt 2: the generator of `args.source` (trained, not retrained), sampled with label guidance args.w."""
    paths = from_trained(world, args)
    if paths is None:
        return
    source, out = paths
    d0 = world_split(ws, N_D0, "train_biased", world.parent / "worlds")
    t0, c0 = time.time(), cpu_seconds()
    records = sample(source, prompts(ws, d0), ws, guidance=args.w)
    write_set(out, records, {"train_cpu_s": 0.0, "sample_cpu_s": cpu_seconds() - c0, "sample_wall_s": time.time() - t0,
                             "kept": len(records), "prompts": 3 * N_PREMISES, "generator": str(source),
                             "label_guidance": args.w})


def step_whole(world: Path, ws: int, args) -> None:
    """The generator of `args.source` sampled as Z-Aug's pipeline does: 900 whole instances, the label its own."""
    from nliforge.data.records import Record
    from nliforge.generation.backends.nli_generator import NLIGeneratorBackend
    from nliforge.generation.types import GenerationRequest, Response, Sampling
    from nliforge.generation.zaug_format import parse_generated

    paths = from_trained(world, args)
    if paths is None:
        return
    source, out = paths
    c0 = cpu_seconds()
    backend = NLIGeneratorBackend(str(source), batch_size=64)
    sampling = Sampling(max_tokens=96, temperature=1.0, top_p=1.0, stop=())
    reqs = [GenerationRequest(f"w{ws}-whole-{i}", "", sampling, n=1, seed=ws * 10**6 + i) for i in range(3 * N_PREMISES)]
    records = []
    for req, ans in zip(reqs, backend.generate_batch(reqs)):
        parsed = parse_generated(ans.texts[0]) if isinstance(ans, Response) else None
        if parsed is not None:
            records.append(Record(req.uid, parsed[0], parsed[2], None, "label_following",
                                  {"intended_label": parsed[1], "whole": True}))
    write_set(out, records, {"train_cpu_s": 0.0, "sample_cpu_s": cpu_seconds() - c0, "kept": len(records),
                             "prompts": len(reqs), "generator": str(source)})


def step_offline(world: Path, ws: int, max_per_label: int) -> None:
    """The WANLI pipeline of wanli_generated up to the parse stage (every parsed pair, before the filters)."""
    out = world / "offline"
    if (out / "dataset.jsonl").is_file():
        return
    start = time.time(), cpu_seconds()
    cmd = ["nliforge-generate", "pipeline=wanli", "experiment=wanli_generated", "world=snli_calibrated",
           f"world.seed={ws}", f"world.n_train={N_D0}",
           "pipeline.stages=[classifier,generator_lm,seeds,exemplars,prompts,generate,parse]",
           f"pipeline.seeds.max_per_label={max_per_label}", "num_threads=1", f"hydra.run.dir={out}"]
    with open(world / "offline.log", "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    (world / "offline_cost.json").write_text(json.dumps({"cpu_seconds": cpu_seconds() - start[1],
                                                         "wall_seconds": time.time() - start[0],
                                                         "max_per_label": max_per_label}) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("step", choices=("judge", "trained", "offline", "guided", "whole"))
    p.add_argument("--scratch", type=Path, required=True)
    p.add_argument("--world-seed", type=int, required=True)
    p.add_argument("--name", default="trained_mle")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--lam", type=float, default=0.0)
    p.add_argument("--from", dest="source", default="zaug_ul_e3", help="guided: the trained generator's name")
    p.add_argument("--w", type=float, default=1.0, help="guided: the label guidance weight")
    p.add_argument("--max-per-label", type=int, default=100, help="offline: seeds per label")
    args = p.parse_args(argv)
    world = args.scratch / f"world{args.world_seed}"
    world.mkdir(parents=True, exist_ok=True)
    if args.step == "judge":
        step_judge(world, args.world_seed)
    elif args.step == "whole":
        step_whole(world, args.world_seed, args)
    elif args.step == "guided":
        step_guided(world, args.world_seed, args)
    elif args.step == "offline":
        step_offline(world, args.world_seed, args.max_per_label)
    else:
        step_trained(world, args.world_seed, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
