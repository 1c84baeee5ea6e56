"""Check that an experiment's run.sh composes the same configs after its fixed overrides moved into
conf/experiment/<name>.yaml (and conf/generate_experiment/<pipeline>_<name>.yaml): each command of the
script, as it was (the override list) and as it is (`experiment=<name>` plus what varies), is composed
with Hydra's `--cfg job` and the two printed configs must be identical.

    python scripts/check_experiment_deltas.py                  # every experiment below
    python scripts/check_experiment_deltas.py wanli_generated  # one

By hand, after editing an experiment's delta; not part of CI (each composition starts an entry point,
~10 s). Loop variables take placeholder values: world seed 0, sizes 100, folders under /tmp/x; `-m`
commands are composed without `-m`, with one value of each swept key. Exit 1 on any difference.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
import subprocess
import sys

X = "/tmp/x"
WORLD = "world=snli_calibrated world.seed=0"

# experiment -> [(command label, entry point, the old overrides, the new overrides)]
CASES: dict[str, list[tuple[str, str, str, str]]] = {}

_WG_GEN_OLD = (f"pipeline=wanli experiment=demo {WORLD} world.n_train=100 model.max_epochs=5 "
               "pipeline.seeds.max_per_label=null pipeline.generator_lm.split=train_biased "
               "pipeline.generator_lm.labels=false trainer.enable_progress_bar=false generator.runner.progress=false")
_WG_GEN_NEW = f"pipeline=wanli experiment=wanli_generated {WORLD} world.n_train=100"
_WG_SHARED = f"pipeline.classifier.run_dir={X}/gen_full/classifier stand_in.generator.model={X}/gen_full/generator_lm"
_WG_REST = "classifier,seeds,exemplars,prompts,generate,parse"
_WG_VARIANTS = {
    "gen_full": f"hydra.run.dir={X}/gen_full",
    "gen_randseeds": f"{_WG_SHARED} pipeline.seeds.quantile=0.0 pipeline.seeds.max_per_label=100 "
                     f"pipeline.stages=[{_WG_REST},heuristics,variability] hydra.run.dir={X}/gen_randseeds",
    "gen_randkeep": f"{_WG_SHARED} pipeline.variability.select=random "
                    f"pipeline.stages=[{_WG_REST},heuristics,variability] hydra.run.dir={X}/gen_randkeep",
    "gen_nofilter": f"{_WG_SHARED} pipeline.stages=[{_WG_REST}] hydra.run.dir={X}/gen_nofilter",
}
CASES["wanli_generated"] = [
    ("annotator", "nliforge-train",
     f"data/train_sets=[synthetic] {WORLD} world.n_train=100 model=tiny seed=0 suite=synthetic callbacks=none "
     f"logger=none trainer.enable_progress_bar=false hydra.run.dir={X}/annotator",
     f"experiment=wanli_generated_annotator {WORLD} world.n_train=100 hydra.run.dir={X}/annotator"),
    *[(label, "nliforge-generate", f"{_WG_GEN_OLD} {rest}", f"{_WG_GEN_NEW} {rest}")
      for label, rest in _WG_VARIANTS.items()],
]

_CB_WA = f"{WORLD} world.n_train=100"
_CB_DISCO = (f"input={X}/reviewed.jsonl pipeline.classifier.run_dir={X}/classifier "
             f"pipeline.disco_teacher.run_dirs=[{X}/teacher] stand_in.generator.model={X}/generator_lm "
             f"pipeline.augment.name=exp_comb_disco_w_w0 hydra.run.dir={X}/disco_w")
_CB_Z = f"input=[{X}/a.jsonl,{X}/b.jsonl,{X}/c.jsonl] register.name=exp_comb_zall_w0 hydra.run.dir={X}/z_all"
CASES["combined"] = [
    ("disco_w", "nliforge-generate",
     f"pipeline=disco experiment=demo {_CB_WA} trainer.enable_progress_bar=false generator.runner.progress=false "
     f"{_CB_DISCO} pipeline.stages=[classifier,disco_teacher,disco_source,spans,disco_prompts,disco_generate,"
     "splice,disco_heuristics,teacher_filter,augment] pipeline.disco_source.select=all",
     f"pipeline=disco experiment=combined {_CB_WA} {_CB_DISCO}"),
    ("z_all", "nliforge-generate",
     f"pipeline=zfilter {_CB_WA} {_CB_Z} pipeline.zfilter_seed.set=synthetic_biased",
     f"pipeline=zfilter experiment=combined_zall {_CB_WA} {_CB_Z}"),
]


def _dt_gen(old: bool, epochs: str = "8", per_label: str = "null") -> str:
    """disco_table3's GEN array (TEACHER_EPOCHS, PER_LABEL), before or after."""
    if old:
        return (f"pipeline=disco experiment=demo {WORLD} world.n_train=100 pipeline.disco_teacher.train_sets=[synthetic_biased] "
                f"pipeline.disco_teacher.max_epochs={epochs} pipeline.generator_lm.split=train_biased "
                f"pipeline.generator_lm.labels=false pipeline.disco_source.max_per_label={per_label} "
                "trainer.enable_progress_bar=false generator.runner.progress=false")
    return (f"pipeline=disco experiment=disco_table3 {WORLD} world.n_train=100 pipeline.disco_teacher.max_epochs={epochs} "
            f"pipeline.disco_source.max_per_label={per_label}")


_DT_NOFILTER = (f"pipeline.augment.name=exp_dc_nofilter_w0 pipeline.classifier.run_dir={X}/gen_filter/classifier "
                f"pipeline.disco_teacher.run_dirs=[{X}/gen_filter/teacher] stand_in.generator.model={X}/gen_filter/generator_lm "
                "pipeline.teacher_filter.threshold=-1.0 pipeline.stages=[classifier,disco_teacher,disco_source,spans,"
                f"disco_prompts,disco_generate,splice,disco_heuristics,teacher_filter,augment] hydra.run.dir={X}/gen_nofilter")
_DT_FILTER = f"pipeline.teacher_filter.threshold=0.25 pipeline.augment.name=exp_dc_filter_w0 hydra.run.dir={X}/gen_filter"
CASES["disco_table3"] = [
    ("gen_filter", "nliforge-generate", f"{_dt_gen(True)} {_DT_FILTER}", f"{_dt_gen(False)} {_DT_FILTER}"),
    ("gen_nofilter", "nliforge-generate", f"{_dt_gen(True)} {_DT_NOFILTER}", f"{_dt_gen(False)} {_DT_NOFILTER}"),
    # the knobs' other values still reach the config (TEACHER_EPOCHS=3 PER_LABEL=50 DELTA=0.5)
    ("gen_filter, knobs", "nliforge-generate",
     f"{_dt_gen(True, '3', '50')} {_DT_FILTER.replace('=0.25', '=0.5')}",
     f"{_dt_gen(False, '3', '50')} {_DT_FILTER.replace('=0.25', '=0.5')}"),
]

_ZT_GEN = (f"pipeline.zaug_sample.n_samples=100 pipeline.confidence.tau=0.8 pipeline.zfilter.batch_size=1000 "
           f"hydra.run.dir={X}/zaug")
CASES["zfilter_training"] = [
    ("oracle", "nliforge-train",
     f"data/train_sets=[synthetic] {WORLD} world.n_train=100 model=tiny seed=0 suite=synthetic callbacks=none "
     f"logger=none trainer.enable_progress_bar=false hydra.run.dir={X}/oracle",
     f"experiment=zfilter_training_oracle {WORLD} world.n_train=100 hydra.run.dir={X}/oracle"),
    ("zaug", "nliforge-generate",
     f"pipeline=zaug experiment=demo {WORLD} world.n_train=100 {_ZT_GEN} pipeline.zaug_sample.progress=false "
     "pipeline.zaug_generator.progress=false",
     f"pipeline=zaug experiment=zfilter_training {WORLD} world.n_train=100 {_ZT_GEN}"),
    ("hyp_only", "nliforge-train",
     f"data/train_sets=[synthetic_biased] {WORLD} world.n_train=100 model=tiny model.input=hypothesis seed=0 "
     f"suite=synthetic callbacks=none logger=none trainer.enable_progress_bar=false hydra.run.dir={X}/hyp_only",
     f"experiment=zfilter_training_hyp_only {WORLD} world.n_train=100 hydra.run.dir={X}/hyp_only"),
]

_WC_WORLD = "world.n_train=7500 world.strengths.negation=0.2 world.strengths.overlap=0.2 world.strengths.length=0.2"
_WC_HELDOUT = ("+suite.sets.heldout_biased={name:heldout_biased,loader:jsonl,path:/tmp/x/heldout_biased.jsonl,"
               f"num_classes:3}} hydra.run.dir={X}/s0")
CASES["world_calibration"] = [
    (f"measure ({world})", "python -m nliforge.train",
     f"experiment=demo model.input=hypothesis {world} data.train_sets.synthetic_biased.limit=6000 data.val_sets=[] "
     "model.max_epochs=3 seed=0 logger=none save_model=false trainer.enable_progress_bar=false "
     "callbacks.dynamics.enabled=false callbacks.checkpoint.save_top_k=0 callbacks.checkpoint.save_last=false "
     f"{_WC_HELDOUT}",
     f"experiment=world_calibration {world} data.train_sets.synthetic_biased.limit=6000 seed=0 {_WC_HELDOUT}")
    for world in (_WC_WORLD, "world.n_train=7500 world=snli_calibrated world.seed=1")
]

_RL_WORLD = "world=strong world.seed=0"
_RLW_GEN_OLD = (f"pipeline=wanli experiment=demo {_RL_WORLD} world.n_train=100 model.max_epochs=5 "
                "pipeline.seeds.max_per_label=100 trainer.enable_progress_bar=false generator.runner.progress=false")
_RLW_GEN_NEW = f"pipeline=wanli experiment=real_lm_wanli {_RL_WORLD} world.n_train=100 pipeline.seeds.max_per_label=100"
_RLW_ROWS_OLD = (f"{_RL_WORLD} model.max_epochs=5 suite=synthetic seed=1 callbacks=none logger=none save_model=false "
                 "trainer.enable_progress_bar=false")
_RLW_ROWS_NEW = f"experiment=real_lm_wanli_rows {_RL_WORLD} model.max_epochs=5 seed=1"
_RLW_ARMS = {   # python -m nliforge.world.arms ... with --n-train 100 --n 100 (--w: a set that is there, synthetic)
    "1_d0": "data/train_sets=[synthetic_biased] world.n_train=100",
    "2_floor": "data/train_sets=[synthetic_biased,synthetic_biased_extra] data.combine=augment world.n_train=100 world.n_extra=100",
    "4_rep": "data/train_sets=[synthetic_biased,synthetic] data.combine=replace world.n_train=100",
}
CASES["real_lm_wanli"] = [
    ("annotator", "nliforge-train",
     f"experiment=demo data/train_sets=[synthetic] seed=0 {_RL_WORLD} callbacks=none logger=none "
     f"trainer.enable_progress_bar=false hydra.run.dir={X}/annotator",
     f"experiment=real_lm_annotator {_RL_WORLD} hydra.run.dir={X}/annotator"),
    ("wanli_smollm2", "nliforge-generate", f"{_RLW_GEN_OLD} generator=smollm2 hydra.run.dir={X}/wanli_smollm2",
     f"{_RLW_GEN_NEW} generator=smollm2 hydra.run.dir={X}/wanli_smollm2"),
    ("wanli_standin", "nliforge-generate", f"{_RLW_GEN_OLD} hydra.run.dir={X}/wanli_standin",
     f"{_RLW_GEN_NEW} hydra.run.dir={X}/wanli_standin"),
    *[(f"row {row} (-m, seed=1)", "nliforge-train", f"{arm} {_RLW_ROWS_OLD} hydra.sweep.dir={X}/sweep/{row}",
       f"{arm} {_RLW_ROWS_NEW} hydra.sweep.dir={X}/sweep/{row}") for row, arm in _RLW_ARMS.items()],
]

_RLZ_GEN_OLD = (f"pipeline=zaug experiment=demo {_RL_WORLD} world.n_train=100 pipeline.classifier.run_dir={X}/teacher "
                "pipeline.stages=[classifier,zaug_generator,zaug_sample,confidence] pipeline.zaug_sample.n_samples=100 "
                "pipeline.zaug_generator.progress=false pipeline.zaug_sample.progress=false trainer.enable_progress_bar=false")
_RLZ_GEN_NEW = (f"pipeline=zaug experiment=real_lm_zaug {_RL_WORLD} world.n_train=100 pipeline.classifier.run_dir={X}/teacher "
                "pipeline.zaug_sample.n_samples=100")
_RLZ_SMOLLM2 = ("generator=causal_unlikelihood generator.train.max_steps=40 +generator.train.precision=bf16-mixed "
                "pipeline.zaug_sample.dtype=auto seed=0 pipeline.generator_model.seed=0 pipeline.zaug_sample.batch_size=32 "
                f"hydra.run.dir={X}/smollm2_s0")
CASES["real_lm_zaug"] = [
    ("teacher", "nliforge-train",
     f"experiment=demo {_RL_WORLD} world.n_train=100 model.max_epochs=3 seed=0 data.save_train_set=true logger=none "
     f"trainer.enable_progress_bar=false hydra.run.dir={X}/teacher",
     f"experiment=real_lm_zaug_teacher {_RL_WORLD} world.n_train=100 hydra.run.dir={X}/teacher"),
    ("scratch_s0", "nliforge-generate",
     f"{_RLZ_GEN_OLD} seed=0 pipeline.generator_model.seed=0 hydra.run.dir={X}/scratch_s0",
     f"{_RLZ_GEN_NEW} seed=0 pipeline.generator_model.seed=0 hydra.run.dir={X}/scratch_s0"),
    ("smollm2_s0", "nliforge-generate", f"{_RLZ_GEN_OLD} {_RLZ_SMOLLM2}", f"{_RLZ_GEN_NEW} {_RLZ_SMOLLM2}"),
    ("oracle", "nliforge-train",
     f"experiment=demo data/train_sets=[synthetic] seed=0 {_RL_WORLD} callbacks=none logger=none "
     f"trainer.enable_progress_bar=false hydra.run.dir={X}/oracle",
     f"experiment=real_lm_annotator {_RL_WORLD} hydra.run.dir={X}/oracle"),
]

# the registered exp_maxvar_d / exp_maxvar_h are not there before a run: synthetic sets stand in (untouched
# by the experiment's file)
_MV_OLD = ("world.n_train=100 world.seed=0 model.max_epochs=5 logger=none save_model=true trainer.enable_progress_bar=false "
           "callbacks.checkpoint.save_top_k=-1 callbacks.dynamics.enabled=true")
_MV_NEW = "experiment=max_variability world.n_train=100 world.seed=0 model.max_epochs=5"
CASES["max_variability"] = [
    ("a", "nliforge-train", f"data/train_sets=[synthetic_biased] seed=1 {_MV_OLD} hydra.run.dir={X}/seed1/a",
     f"data/train_sets=[synthetic_biased] seed=1 {_MV_NEW} hydra.run.dir={X}/seed1/a"),
    ("b", "nliforge-train",
     f"data/train_sets=[synthetic_biased,synthetic] data.combine=augment seed=1 {_MV_OLD} hydra.run.dir={X}/seed1/b",
     f"data/train_sets=[synthetic_biased,synthetic] data.combine=augment seed=1 {_MV_NEW} hydra.run.dir={X}/seed1/b"),
]


# D0 = mnli (snli the same but for n); the SLURM launcher (PARTITION) stays on the command line
_ZQ_S_OLD = "model=bert_base model.optimizer.lr=1e-5 trainer=gpu suite=zaug seed=1"
_ZQ_S_NEW = "experiment=zaug_tables_rows seed=1"
_ZQ_POE = "model.poe.enabled=true model.poe.beta=2.0 model.poe.gamma=0.8"
_ZQ_GEN = (f"data/train_sets=[mnli] pipeline.classifier.run_dir={X}/zaug_teacher_mnli "
           "model@pipeline.generator_model=gpt2_large_generator pipeline.zaug_sample.n_samples=4000000 "
           f"pipeline.zfilter.recipe=par_z hydra.run.dir={X}/zaug_mnli_par_z")
_ZQ_JSONL = f"data/train_sets=[jsonl] data.train_sets.jsonl.path={X}/zaug_mnli_zaug/dataset.jsonl"
CASES["zaug_tables"] = [
    ("teacher", "nliforge-train",
     f"data/train_sets=[mnli] model=roberta_large trainer=gpu data.save_train_set=true suite=zaug "
     f"hydra.run.dir={X}/zaug_teacher_mnli",
     f"experiment=zaug_tables_teacher data/train_sets=[mnli] hydra.run.dir={X}/zaug_teacher_mnli"),
    ("generate par_z", "nliforge-generate",
     f"pipeline=zaug {_ZQ_GEN} model=roberta_large trainer=gpu "
     "pipeline.zaug_sample.device=cuda pipeline.confidence.device=cuda "
     "pipeline.stages=[classifier,zaug_generator,zaug_debias,zaug_sample,confidence,zfilter]",
     f"pipeline=zaug experiment=zaug_tables {_ZQ_GEN}"),
    ("row d0 (-m)", "nliforge-train", f"data/train_sets=[mnli] {_ZQ_S_OLD} hydra.sweep.dir={X}/mnli/mnli",
     f"data/train_sets=[mnli] {_ZQ_S_NEW} hydra.sweep.dir={X}/mnli/mnli"),
    ("row d0 poe (-m)", "nliforge-train",
     f"data/train_sets=[mnli] data.train_sets.mnli.name=mnli_poe {_ZQ_POE} {_ZQ_S_OLD} hydra.sweep.dir={X}/mnli/mnli_poe",
     f"data/train_sets=[mnli] data.train_sets.mnli.name=mnli_poe experiment=zaug_tables_poe seed=1 "
     f"hydra.sweep.dir={X}/mnli/mnli_poe"),
    ("row zaug poe (-m, slurm)", "nliforge-train",
     f"{_ZQ_JSONL} data.train_sets.jsonl.name=mnli_zaug_poe {_ZQ_POE} {_ZQ_S_OLD} hydra/launcher=slurm_gpu "
     f"hydra.launcher.partition=gpu hydra.sweep.dir={X}/mnli/mnli_zaug_poe",
     f"{_ZQ_JSONL} data.train_sets.jsonl.name=mnli_zaug_poe experiment=zaug_tables_poe seed=1 hydra/launcher=slurm_gpu "
     f"hydra.launcher.partition=gpu hydra.sweep.dir={X}/mnli/mnli_zaug_poe"),
    ("row floor (-m)", "nliforge-train",
     f"data/train_sets=[mnli,jsonl] data.combine=augment data.train_sets.jsonl.path={X}/c.jsonl "
     f"data.train_sets.jsonl.limit=100 +data.train_sets.jsonl.limit_seed=0 data.train_sets.jsonl.name=gen_n100_for_zaug "
     f"{_ZQ_S_OLD} hydra.sweep.dir={X}/mnli/mnli_floor_zaug",
     f"data/train_sets=[mnli,jsonl] data.combine=augment data.train_sets.jsonl.path={X}/c.jsonl "
     f"data.train_sets.jsonl.limit=100 +data.train_sets.jsonl.limit_seed=0 data.train_sets.jsonl.name=gen_n100_for_zaug "
     f"{_ZQ_S_NEW} hydra.sweep.dir={X}/mnli/mnli_floor_zaug"),
]


# every sweep of the script, with one value of each swept key (seed 1, the first training sets, augment)
_WT_S_OLD = "model=roberta_large trainer=gpu suite=wanli_table3 seed=1"
_WT_S_NEW = "experiment=wanli_table3 seed=1"
_WT_ROWS = {
    "0_floor": "data/train_sets=[mnli] data.train_sets.mnli.limit=102885 +data.train_sets.mnli.limit_seed=0 "
               "data.train_sets.mnli.name=mnli_n102885",
    "1_single": "data/train_sets=[wanli]",
    "2_combined": "data/train_sets=[mnli,anli_r1,anli_r2,anli_r3] data.combine=replace",
    "3_anli (slurm)": "data/train_sets=[wanli,anli_r1,anli_r2,anli_r3] data.combine=augment hydra/launcher=slurm_gpu "
                      "hydra.launcher.partition=gpu",
}
CASES["wanli_table3"] = [
    (f"{row} (-m)", "nliforge-train", f"{sets} {_WT_S_OLD} hydra.sweep.dir={X}/{row.split()[0]}",
     f"{sets} {_WT_S_NEW} hydra.sweep.dir={X}/{row.split()[0]}") for row, sets in _WT_ROWS.items()
]


# common.sh's train_row adds the world, the seeds (-m seed=1,2,3: one here), suite, callbacks and QUIET_TRAIN
_SA_ROW = "seed=1 suite=synthetic callbacks=none logger=none save_model=false trainer.enable_progress_bar=false"
CASES["synthetic_artifacts"] = [
    (f"{row} ({world}, -m)", "nliforge-train",
     f"data/train_sets=[{sets}] model=tiny world.n_train=100 world={world} world.seed=0 {_SA_ROW} "
     f"hydra.sweep.dir={X}/{world}/world0/sweep/{row}",
     f"data/train_sets=[{sets}] experiment=synthetic_artifacts world.n_train=100 world={world} world.seed=0 {_SA_ROW} "
     f"hydra.sweep.dir={X}/{world}/world0/sweep/{row}")
    for row, sets, world in (("1_biased", "synthetic_biased", "snli_calibrated"), ("2_unbiased", "synthetic", "strong"))
]


# lib.sh's run adds seed= and COMMON (num_threads, THREADS: 1 here); the arms as run.sh's case
_RT_QUIET = "logger=csv save_model=false trainer.enable_progress_bar=false"
_RT_ARMS = {
    "r3": "experiment=real_text_datamap",
    "r2a": "experiment=real_text_hyponly",
    "r2b": "experiment=real_text_hyponly data/train_sets=[snli_cad_original]",
    "r2d_hyp_zf": "experiment=real_text_hyponly data/train_sets=[synthetic]",   # stands in for exp_real_text_zf
    "r2d_full_random": "experiment=real_text_datamap +data.train_sets.mnli_dev_train_part.limit=100 "
                       "+data.train_sets.mnli_dev_train_part.limit_seed=1",
}
CASES["real_text"] = [
    (arm, "nliforge-train", f"{args} seed=1 num_threads=1 {_RT_QUIET} hydra.run.dir={X}/{arm}/seed1",
     f"{args} seed=1 num_threads=1 hydra.run.dir={X}/{arm}/seed1") for arm, args in _RT_ARMS.items()
]


def composed(entry: str, overrides: str) -> str:
    """The job config that `entry overrides --cfg job` prints (its exit status checked)."""
    proc = subprocess.run([*shlex.split(entry), *shlex.split(overrides), "--cfg", "job"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{entry} {overrides} --cfg job failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"experiments (default: all of {', '.join(CASES)})")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in CASES]
    if unknown:
        ap.error(f"unknown experiment(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    bad = 0
    for name in args.names or list(CASES):
        for label, entry, old, new in CASES[name]:
            a, b = composed(entry, old), composed(entry, new)
            diff = list(difflib.unified_diff(a.splitlines(), b.splitlines(), "before", "after", lineterm=""))
            status = "identical" if not diff else "DIFFERENT"
            print(f"{name} {label} ({entry}, {len(a.splitlines())} lines): {status}", flush=True)
            print(f"  before: {entry} {old}\n  after:  {entry} {new}", flush=True)
            if diff:
                bad += 1
                print("\n".join(diff), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
