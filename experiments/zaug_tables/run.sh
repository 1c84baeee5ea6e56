#!/usr/bin/env bash
# Z-Aug Tables 2-4 on the real sets: per base set D0 (MultiNLI, SNLI) a RoBERTa-large teacher
# on D0, the three debiased sets, BERT-base with cross-entropy and PoE, and per recipe a same-size floor:
# D0 plus random confidence-kept samples of the same generator, not z-filtered, to the recipe's size. 5 seeds.
# Needs the training sets in the local HF cache (checked first: a missing one stops the script before any
# job starts, naming it and the command that downloads it) and GPUs; never run on this project's machines.
#   PARTITION=<gpu partition> bash experiments/zaug_tables/run.sh   # SLURM sweeps; teacher and generation runs local
#   bash experiments/zaug_tables/run.sh                             # one local GPU machine
# R (default multirun_outputs/zaug_tables) holds, per base, the sweeps and the report ($R/<base>/report);
# teacher and generation runs go to outputs/. BASES (default "mnli snli") picks the bases.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
R="${R:-multirun_outputs/zaug_tables}"
BASES="${BASES:-mnli snli}"

# shellcheck disable=SC2086  # BASES is a word list
python -m experiments.real_data_preflight $BASES || exit 2

# the BERT-base rows: conf/experiment/zaug_tables_rows.yaml (BERT-base, lr 1e-5, GPU, suite zaug), with PoE
# (beta 2.0, gamma 0.8) conf/experiment/zaug_tables_poe.yaml
S=(seed=1,2,3,4,5)
if [ -n "${PARTITION:-}" ]; then S+=(hydra/launcher=slurm_gpu hydra.launcher.partition="$PARTITION"); fi
ROWS=(experiment=zaug_tables_rows "${S[@]}")
POE=(experiment=zaug_tables_poe "${S[@]}")
for D0 in $BASES; do
    stamp "$D0: the teacher M (roberta-large on D0; its training set is kept for the z-filter's D0)"
    # conf/experiment/zaug_tables_teacher.yaml: RoBERTa-large, GPU, its training set kept, suite zaug
    # a finished model is kept; ckpt_path=last resumes one stopped part-way (from the start if no checkpoint yet)
    [ -f "outputs/zaug_teacher_$D0/model/config.json" ] || nliforge-train experiment=zaug_tables_teacher \
        "data/train_sets=[$D0]" hydra.run.dir="outputs/zaug_teacher_$D0" ckpt_path=last
    for r in zaug par_z seq_z; do
        stamp "$D0: the debiased set $r (gpt2-large G, then G* by the §4.1 debiasing unlikelihood; Table 8 samples; tau 0.95, k 20)"
        # Table 8: 4M samples for MultiNLI, 5M for SNLI; a finished run resumes from its stages
        n=$([ "$D0" = snli ] && echo 5000000 || echo 4000000)
        # conf/experiment/zaug_tables.yaml, conf/generate_experiment/zaug_zaug_tables.yaml: the RoBERTa-large
        # teacher, G debiased into G*, sampling and confidence on the GPU (G's model stays here: Hydra refuses that
        # defaults override in either file)
        nliforge-generate pipeline=zaug experiment=zaug_tables "data/train_sets=[$D0]" \
            pipeline.classifier.run_dir="outputs/zaug_teacher_$D0" model@pipeline.generator_model=gpt2_large_generator \
            pipeline.zaug_sample.n_samples="$n" pipeline.zfilter.recipe="$r" hydra.run.dir="outputs/zaug_${D0}_$r"
    done
    stamp "$D0: BERT-base rows (a set is renamed so rows stay apart in the report)"
    nliforge-train -m "data/train_sets=[$D0]" "${ROWS[@]}" hydra.sweep.dir="$R/$D0/$D0"
    nliforge-train -m "data/train_sets=[$D0]" data.train_sets.$D0.name="${D0}_poe" "${POE[@]}" hydra.sweep.dir="$R/$D0/${D0}_poe"
    for r in zaug par_z seq_z; do
        nliforge-train -m 'data/train_sets=[jsonl]' data.train_sets.jsonl.path="outputs/zaug_${D0}_$r/dataset.jsonl" \
            data.train_sets.jsonl.name="${D0}_$r" "${ROWS[@]}" hydra.sweep.dir="$R/$D0/${D0}_$r"
    done
    nliforge-train -m 'data/train_sets=[jsonl]' data.train_sets.jsonl.path="outputs/zaug_${D0}_zaug/dataset.jsonl" \
        data.train_sets.jsonl.name="${D0}_zaug_poe" "${POE[@]}" hydra.sweep.dir="$R/$D0/${D0}_zaug_poe"
    # floors: D0 + random confidence-kept samples of G*, no z-filter, to each recipe's size
    # (Table 1: all three recipes are larger than D0); the same generated pool the z-filter chose from
    d0=$(count_lines "outputs/zaug_teacher_$D0/train_set.jsonl")
    for r in zaug par_z seq_z; do
        n=$(( $(count_lines "outputs/zaug_${D0}_$r/dataset.jsonl") - d0 ))
        if [ "$n" -le 0 ]; then stamp "$D0: $r is not larger than D0 ($n): no floor row"; continue; fi
        stamp "$D0: floor for $r: D0 + $n random confidence-kept samples"
        nliforge-train -m "data/train_sets=[$D0,jsonl]" data.combine=augment \
            data.train_sets.jsonl.path="outputs/zaug_${D0}_$r/stages/confidence.jsonl" data.train_sets.jsonl.limit="$n" \
            +data.train_sets.jsonl.limit_seed=0 data.train_sets.jsonl.name="gen_n${n}_for_$r" "${ROWS[@]}" \
            hydra.sweep.dir="$R/$D0/${D0}_floor_$r"
    done
    # the paper's table for this base (every row) with every row − D0 (paired by seed, 95% t): README Z1-Z3
    nliforge-report sweep="$R/$D0" baseline="$D0" out="$R/$D0/report"
    stamp "$D0: done, $R/$D0/report/report.md"
done
